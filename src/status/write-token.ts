import { randomBytes } from "node:crypto";
import { closeSync, fstatSync, fsyncSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { StatusError } from "./errors.js";

/**
 * The write API's token when `status.token` is not set: made at the daemon's first start
 * into a file only the daemon's user can read (0600), so that writes (cursor moves,
 * silences, forged alerts) need what only that user, or root, holds. Any local user could
 * write before, since loopback alone was enough. `kaiawatch` commands read the same file.
 */

/** 32 random bytes, hex: as `openssl rand -hex 32` would make. */
const TOKEN = /^[0-9a-f]{64}$/;

/** Group or others may do anything with the file: the token would be theirs too. */
const SHARED_BITS = 0o077;

/** The token in `path`, made there first if the file does not exist yet (the daemon's start). */
export function loadOrCreateWriteToken(path: string): string {
  mkdirSync(dirname(path), { recursive: true });
  const token = randomBytes(32).toString("hex");
  let fd: number;
  try {
    // O_EXCL: two starts at once cannot both write, and a file put there first is never overwritten.
    fd = openSync(path, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return readWriteToken(path);
    throw fileError(path, "cannot be created", error);
  }
  try {
    // The umask cannot widen 0600, but a file system may ignore the mode: check what it holds.
    if ((fstatSync(fd).mode & SHARED_BITS) !== 0) throw tooOpen(path, fstatSync(fd).mode);
    writeSync(fd, `${token}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return token;
}

/** The token the daemon made; a clear KW_STATUS_TOKEN_FILE when it is missing, unreadable, shared or damaged. */
export function readWriteToken(path: string): string {
  let text: string;
  try {
    const mode = statSync(path).mode;
    if ((mode & SHARED_BITS) !== 0) throw tooOpen(path, mode);
    text = readFileSync(path, "utf8");
  } catch (error) {
    if (error instanceof StatusError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new StatusError("KW_STATUS_TOKEN_FILE", `there is no write token at ${path} (status.write_token_file): the daemon makes it at its first start; start it once, or set status.token`);
    if (code === "EACCES") throw new StatusError("KW_STATUS_TOKEN_FILE", `cannot read the write token at ${path} (status.write_token_file): permission denied; run this as the daemon's user`);
    throw fileError(path, "cannot be read", error);
  }
  const token = text.trim();
  if (!TOKEN.test(token)) throw new StatusError("KW_STATUS_TOKEN_FILE", `${path} (status.write_token_file) does not hold a write token (64 hex digits); delete it and the daemon makes a new one at its next start`);
  return token;
}

function tooOpen(path: string, mode: number): StatusError {
  const octal = (mode & 0o777).toString(8).padStart(3, "0");
  return new StatusError("KW_STATUS_TOKEN_FILE", `${path} (status.write_token_file) may be read by other users (mode ${octal}): run \`chmod 600 ${path}\``);
}

function fileError(path: string, what: string, error: unknown): StatusError {
  const reason = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
  return new StatusError("KW_STATUS_TOKEN_FILE", `the write token file ${path} (status.write_token_file) ${what}: ${reason}`, { cause: error });
}
