import { KaiawatchError } from "../common/errors.js";

export type StoreErrorCode =
  | "KW_STORE_CORRUPT"
  /** Opened with `mustExist` where no store file has been created yet (kaiawatch has not run on it). */
  | "KW_STORE_MISSING"
  | "KW_STORE_VERSION"
  | "KW_STORE_LOCKED"
  /** The store's folder or one of its files cannot be created or written by this process's user (permission, a file where a folder must be, read-only). */
  | "KW_STORE_NOT_WRITABLE"
  | "KW_STORE_WRITE_FAILED"
  | "KW_STORE_READ_ONLY"
  | "KW_STORE_CLOSED"
  | "KW_STORE_CURSOR_BACKWARDS"
  | "KW_STORE_OUTBOX_CHANGE"
  /** A replica's fenced write for a source whose lease another replica has taken over. */
  | "KW_STORE_LEASE_LOST"
  /** A balance episode changed by another writer since it was read (Store.commitBalanceEpisodes): nothing was written. */
  | "KW_STORE_EPISODE_CONFLICT"
  /** `kaiawatch store migrate` to a PostgreSQL store that already holds cursors or entries (without --force). */
  | "KW_STORE_MIGRATE_TARGET"
  /** The database server did not answer a read (PostgreSQL down or unreachable). */
  | "KW_STORE_UNREACHABLE"
  /**
   * PostgreSQL did not answer within a configured bound: a statement past store.statement_timeout,
   * a lock wait past store.lock_timeout (another session holds it), no connection within
   * store.pool_timeout. The server is there but not answering: reads fail with it, as with
   * KW_STORE_UNREACHABLE, rather than hang.
   */
  | "KW_STORE_TIMEOUT";

/** Every failure of the store; `code` says which. */
export class StoreError extends KaiawatchError {
  override name = "StoreError";
  declare readonly code: StoreErrorCode;

  constructor(code: StoreErrorCode, message: string, options: { cause?: unknown; details?: string } = {}) {
    super(code, message, options);
  }
}

export function isStoreError(error: unknown, code?: StoreErrorCode): error is StoreError {
  return error instanceof StoreError && (code === undefined || error.code === code);
}

/** The store cannot answer now (PostgreSQL down, or not answering within its timeouts): a reader keeps what it last read. */
export function isStoreUnavailable(error: unknown): error is StoreError {
  return isStoreError(error, "KW_STORE_UNREACHABLE") || isStoreError(error, "KW_STORE_TIMEOUT");
}
