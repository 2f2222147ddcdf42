import type pg from "pg";

/** A sink's rate limit as a token bucket: `burst` tokens at most, refilled at `ratePerSecond`. */
export interface SinkRate {
  ratePerSecond: number;
  burst: number;
}

/** A token was taken (send now), or none is left and one will be in `waitMs`. */
export type TokenOutcome = { taken: true } | { taken: false; waitMs: number };

/**
 * Takes one token of the sink's bucket, shared by every replica through its `sink_limits`
 * row, so that a sink's rate limit holds for the replicas together rather than for each.
 * The row is locked for the read-refill-take, so two replicas never take the same token.
 * The refill uses the caller's clock (`now`); a replica whose clock is behind the last
 * refill adds nothing rather than taking tokens back.
 */
export async function takeSinkToken(pool: pg.Pool, options: { sink: string; rate: SinkRate; now: number }): Promise<TokenOutcome> {
  const { sink, rate, now } = options;
  if (!(rate.ratePerSecond > 0) || !(rate.burst >= 1)) throw new TypeError(`a sink rate needs ratePerSecond > 0 and burst ≥ 1: ${JSON.stringify(rate)}`);
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query("BEGIN");
    // A new sink starts with a full bucket.
    await client.query("INSERT INTO sink_limits (sink, tokens, refilled_ms) VALUES ($1, $2, $3) ON CONFLICT (sink) DO NOTHING", [sink, rate.burst, now]);
    const row = (await client.query<{ tokens: number; refilled_ms: string }>("SELECT tokens, refilled_ms FROM sink_limits WHERE sink = $1 FOR UPDATE", [sink])).rows[0]!;
    const refilledMs = Number(row.refilled_ms);
    const available = Math.min(rate.burst, row.tokens + (Math.max(0, now - refilledMs) * rate.ratePerSecond) / 1000);
    const taken = available >= 1;
    await client.query("UPDATE sink_limits SET tokens = $2, refilled_ms = $3 WHERE sink = $1", [sink, taken ? available - 1 : available, Math.max(refilledMs, now)]);
    await client.query("COMMIT");
    return taken ? { taken: true } : { taken: false, waitMs: Math.ceil(((1 - available) * 1000) / rate.ratePerSecond) };
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {
      broken = true;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
