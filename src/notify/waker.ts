/**
 * A loop's sleep that something else can cut short: `wake()` ends the current wait, or the
 * next one if the loop is busy, so a wake-up during a pass is never lost.
 */
export interface Waker {
  wait(ms: number, signal: AbortSignal): Promise<void>;
  wake(): void;
}

export function createWaker(): Waker {
  let pending = false;
  let resolveCurrent: (() => void) | undefined;
  return {
    wait(ms, signal) {
      if (pending || signal.aborted) {
        pending = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener("abort", done);
          resolveCurrent = undefined;
          pending = false;
          resolve();
        };
        const timer = setTimeout(done, Math.max(0, ms));
        signal.addEventListener("abort", done, { once: true });
        resolveCurrent = done;
      });
    },
    wake() {
      if (resolveCurrent) resolveCurrent();
      else pending = true;
    },
  };
}
