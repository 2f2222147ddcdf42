import { setMaxListeners } from "node:events";
import { follows, linkSignals } from "../common/signals.js";

/**
 * One linked signal per caller's signal, reused by every call that passes it. A controller
 * per call (10,000 a tick of 10,000 sources) outlived the young generation's collections
 * and left ~18 MB of garbage in the old one each tick. The link goes with the caller's signal.
 * Every request in flight listens to its signal: dozens at once are the pool at work, not a
 * leak, so Node's warning after ten listeners is turned off on the signals handed to undici.
 */
export function callerSignals(shutdown: AbortSignal): (callerSignal: AbortSignal | undefined) => AbortSignal {
  setMaxListeners(0, shutdown);
  const linked = new WeakMap<AbortSignal, AbortSignal>();
  const unlinkWhenCollected = new FinalizationRegistry<() => void>((dispose) => dispose());
  return function signalOf(callerSignal: AbortSignal | undefined): AbortSignal {
    if (callerSignal === undefined) return shutdown;
    // A tick's signal already follows the shutdown signal: linking it again would cost a link
    // per tick. It is handed to undici as it is, so it too may have a request in flight per
    // concurrent page (a catch-up keeps as many as the rate allows).
    if (follows(callerSignal, shutdown)) {
      setMaxListeners(0, callerSignal);
      return callerSignal;
    }
    let signal = linked.get(callerSignal);
    if (signal === undefined) {
      const link = linkSignals(shutdown, callerSignal);
      signal = link.signal;
      setMaxListeners(0, signal);
      linked.set(callerSignal, signal);
      unlinkWhenCollected.register(callerSignal, link.dispose);
    }
    return signal;
  };
}
