import { SinkError } from "../../src/notify/sink.js";

/** The SinkError a send fails with; anything else (or a send that succeeds) fails the test. */
export async function sendError(send: () => Promise<unknown>): Promise<SinkError> {
  try {
    await send();
  } catch (error) {
    if (error instanceof SinkError) return error;
    throw error;
  }
  throw new Error("expected a SinkError");
}
