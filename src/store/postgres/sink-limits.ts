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

/**
 * Takes one of the sink's `concurrency` delivery slots for `holdMs`, or undefined when all are
 * held: with several replicas, a sink configured for 4 deliveries at a time gets 4, not 4 per
 * replica. Give the slot back with releaseSinkSlot when the delivery ends; a replica that dies
 * holding one loses it at its expiry. SKIP LOCKED: replicas asking together take different slots.
 */
export async function takeSinkSlot(
  db: Pick<pg.Pool, "query">,
  options: { sink: string; concurrency: number; holder: string; now: number; holdMs: number },
): Promise<number | undefined> {
  const { sink, concurrency, holder, now, holdMs } = options;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new TypeError(`concurrency must be a whole number ≥ 1, not ${concurrency}`);
  await db.query("INSERT INTO sink_slots (sink, slot) SELECT $1, generate_series(0, $2 - 1) ON CONFLICT DO NOTHING", [sink, concurrency]);
  const result = await db.query<{ slot: number }>(
    `UPDATE sink_slots SET holder = $3, expires_ms = $5
     WHERE sink = $1 AND slot = (
       SELECT slot FROM sink_slots WHERE sink = $1 AND slot < $2 AND (holder IS NULL OR expires_ms <= $4)
       ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED)
     AND (holder IS NULL OR expires_ms <= $4)
     RETURNING slot`,
    [sink, concurrency, holder, now, now + holdMs],
  );
  return result.rows[0]?.slot;
}

/** Gives back a slot this holder took (a slot since taken over by another is left alone). */
export async function releaseSinkSlot(db: Pick<pg.Pool, "query">, options: { sink: string; slot: number; holder: string }): Promise<void> {
  await db.query("UPDATE sink_slots SET holder = NULL, expires_ms = 0 WHERE sink = $1 AND slot = $2 AND holder = $3", [options.sink, options.slot, options.holder]);
}
