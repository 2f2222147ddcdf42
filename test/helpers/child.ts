import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { waitFor } from "./wait-for.js";

export { waitFor };

export const BIN = fileURLToPath(new URL("../../dist/cli/bin.js", import.meta.url));

export interface Child {
  process: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `kaiawatch ARGS…` as a real process (the compiled dist/, built by the test setup). */
export function startKaiawatch(args: string[], env: NodeJS.ProcessEnv = {}): Child {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  return { process: child, stdout: () => out, stderr: () => err, exited };
}

/** One line of a child's JSON log (`--log-format json`, or stderr not a terminal). */
export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** The child's JSON log lines so far; other lines on stderr (a Node warning) are passed over. */
export function logLines(child: Child): LogLine[] {
  return child
    .stderr()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as LogLine);
}

/** The status server's address, from the line the child logs once it listens (undefined before). */
export function statusUrlOf(child: Child): string | undefined {
  return logLines(child).find((line) => line.msg.startsWith("status server listening"))?.url as string | undefined;
}

/**
 * Waits for a line of the child's JSON log that `match` accepts, and returns it; a child that
 * exits first ends the wait at once, failing with its stderr.
 */
export async function waitForLog(child: Child, match: (line: LogLine) => boolean, timeoutMs: number, what: string): Promise<LogLine> {
  const seen: { line?: LogLine } = {};
  await waitFor(() => (seen.line = logLines(child).find(match)) !== undefined || child.process.exitCode !== null, timeoutMs, what);
  if (seen.line === undefined) throw new Error(`kaiawatch exited (${child.process.exitCode}) before ${what}: ${child.stderr()}`);
  return seen.line;
}

/** Waits until the child's status server listens, and returns its address. */
export async function waitForStatusUrl(child: Child, timeoutMs = 20_000): Promise<string> {
  return (await waitForLog(child, (line) => line.msg.startsWith("status server listening"), timeoutMs, "the status server")).url as string;
}
