import { describeError, isAbortError } from "../common/errors.js";

/** The outcome of the last chain head read, for /readyz and /status. */
export interface HeadState {
  /** The head used for ticks (after lag_blocks), from the last successful read. */
  block: number | null;
  /** When the last read finished, successful or not (ISO-8601). */
  read_at: string | null;
  /** The last read's error; null when it succeeded. */
  error: string | null;
}

export interface HeadProbe {
  read(signal: AbortSignal): Promise<number>;
  state(): HeadState;
}

/** Wraps the engine's head read to remember whether the head was reachable the last time. */
export function createHeadProbe(read: (signal: AbortSignal) => Promise<number>, now: () => number): HeadProbe {
  const state: HeadState = { block: null, read_at: null, error: null };
  return {
    async read(signal) {
      try {
        const block = await read(signal);
        Object.assign(state, { block, read_at: new Date(now()).toISOString(), error: null });
        return block;
      } catch (error) {
        // A read cut short by shutdown says nothing about the node.
        if (!(isAbortError(error) && signal.aborted)) Object.assign(state, { read_at: new Date(now()).toISOString(), error: describeError(error) });
        throw error;
      }
    },
    state: () => ({ ...state }),
  };
}
