import { main } from "../../src/cli/main.js";
import { memoryIO } from "./harness.js";

/** `kaiawatch ARGS…` in this process on memory streams: its exit code and what it printed. */
export async function runCli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIO();
  const code = await main(args, io);
  return { code, out: io.out(), err: io.err() };
}
