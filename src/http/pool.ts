import { Pool, type Dispatcher } from "undici";

export interface PoolOptions {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  /** Longest silence between body bytes. */
  bodyTimeoutMs: number;
  /** Sockets at most; further requests wait in the pool's queue. Unbounded when absent. */
  connections?: number;
}

/**
 * The dispatcher a client builds for itself when none is handed in: one keep-alive pool to
 * one origin. A client handed a dispatcher (`dispatcher` in its options: a Pool, an Agent,
 * or one composed with interceptors, `pool.compose(...)`) sends through it instead and leaves
 * closing it to whoever made it.
 *
 * The rate limiter and the explorer's credit meter are steps of each client's attempt, not
 * interceptors on this dispatcher. As interceptors they would run inside the request: its
 * deadline and its duration metric would count the wait for a slot (a catch-up queues minutes
 * of requests in the limiter, and each would miss its deadline); the meter reserves an
 * operation's cost before that wait, and only the client knows the operation and reads the
 * 429 body that says the day's quota is spent; and the limiter's Retry-After pause and its
 * slow-down after a per-second refusal are decided by the retry loop above the request.
 */
export function createPool(origin: string, options: PoolOptions): Dispatcher {
  return new Pool(origin, {
    connect: { timeout: options.connectTimeoutMs },
    headersTimeout: options.headersTimeoutMs,
    bodyTimeout: options.bodyTimeoutMs,
    // Ticks come every few seconds; keep the connection across them (server hints still win).
    keepAliveTimeout: 15_000,
    ...(options.connections === undefined ? {} : { connections: options.connections }),
  });
}
