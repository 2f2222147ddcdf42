/**
 * The PostgreSQL store's tables, as an ordered list of migrations. kaiawatch creates and
 * upgrades them itself (migrate.ts); a migration, once released, is never edited: a change
 * is a new migration at the end. The version of a database is the highest one applied,
 * recorded in `kaiawatch_schema`.
 *
 * Times that the daemon compares (due, lease and claim expiries, heartbeats) are bigint
 * milliseconds since the epoch from the replicas' clocks (`common.now()`, injectable in
 * tests), like the SQLite store's `due_ms`; the ISO-8601 strings of the public types are
 * kept as given, so that a read returns exactly what was written.
 */
export interface Migration {
  version: number;
  /** What it does, for the log line of an upgrade. */
  description: string;
  sql: string;
}

/**
 * Moves what a version-1 database (or a file store copied by `store migrate`) kept in meta
 * values into the version-2 tables: the cooldown book ('notify.cooldown': stamps and notes;
 * its list of admitted entries is not needed any more) and the daemon's silences
 * ('notify.silences': silences, removals and counts). The meta values are removed; running
 * it again finds nothing to do.
 */
export const CONVERT_LEGACY_META = `
INSERT INTO cooldowns (sink, rule, key, at_ms)
  SELECT s.key, r.key, k.key, (k.value #>> '{}')::bigint
  FROM meta m, jsonb_each(m.value -> 'last') s, jsonb_each(s.value) r, jsonb_each(r.value) k
  WHERE m.key = 'notify.cooldown' AND jsonb_typeof(m.value -> 'last') = 'object' AND jsonb_typeof(s.value) = 'object'
    AND jsonb_typeof(r.value) = 'object' AND jsonb_typeof(k.value) = 'number'
  ON CONFLICT DO NOTHING;
INSERT INTO suppressed (entry_id, at, reason)
  SELECT n.key, n.value ->> 'at', CASE WHEN n.value ->> 'reason' = 'silence' THEN 'silence' ELSE 'cooldown' END
  FROM meta m, jsonb_each(m.value -> 'suppressed') n
  WHERE m.key = 'notify.cooldown' AND jsonb_typeof(m.value -> 'suppressed') = 'object' AND n.value ->> 'at' IS NOT NULL
    AND EXISTS (SELECT 1 FROM outbox o WHERE o.id = n.key)
  ON CONFLICT DO NOTHING;
INSERT INTO silences (id, rule, match, reason, created_at, expires_at, expires_ms, removed_at, suppressed)
  SELECT x ->> 'id', x ->> 'rule', x -> 'match', x ->> 'reason', x ->> 'created_at', x ->> 'expires_at',
    (extract(epoch FROM (x ->> 'expires_at')::timestamptz) * 1000)::bigint,
    CASE WHEN m.value -> 'removed' ? (x ->> 'id') THEN x ->> 'created_at' END,
    CASE WHEN jsonb_typeof(m.value -> 'suppressed' -> (x ->> 'id')) = 'number' THEN (m.value -> 'suppressed' ->> (x ->> 'id'))::bigint ELSE 0 END
  FROM meta m, jsonb_array_elements(m.value -> 'silences') x
  WHERE m.key = 'notify.silences' AND jsonb_typeof(m.value -> 'silences') = 'array'
    AND jsonb_typeof(x) = 'object' AND x ->> 'id' IS NOT NULL AND x ->> 'rule' IS NOT NULL AND jsonb_typeof(x -> 'match') = 'object'
    AND x ->> 'reason' IS NOT NULL AND x ->> 'created_at' IS NOT NULL AND x ->> 'expires_at' IS NOT NULL
  ON CONFLICT DO NOTHING;
DELETE FROM meta WHERE key IN ('notify.cooldown', 'notify.silences');
`;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "cursors, leases, outbox, meta, replicas, sink limits and slots",
    sql: `
CREATE TABLE cursors (
  key text PRIMARY KEY,
  block bigint NOT NULL,
  cursor jsonb NOT NULL
);

-- One row per source of the plan (a source may have no cursor yet), owned by one replica at a
-- time. epoch grows by one at every claim: a write fenced with an older epoch is refused.
CREATE TABLE leases (
  key text PRIMARY KEY,
  owner text,
  epoch bigint NOT NULL DEFAULT 0,
  expires_ms bigint NOT NULL DEFAULT 0,
  acquired_ms bigint
);
CREATE INDEX leases_by_owner ON leases (owner, key);

-- seq is the order of addition, which listings promise.
CREATE TABLE outbox (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id text NOT NULL UNIQUE,
  sink text NOT NULL,
  rule text NOT NULL,
  state text NOT NULL CHECK (state IN ('pending', 'delivered', 'dead')),
  attempts integer NOT NULL,
  created_at text NOT NULL,
  next_attempt_at text NOT NULL,
  due_ms bigint NOT NULL,
  group_id text,
  last_error text,
  dead_reason text,
  delivered_at text,
  delivered_ms bigint,
  -- A replica sending the entry now; the claim lapses at claim_expires_ms if it dies.
  claimed_by text,
  claim_expires_ms bigint,
  -- json, not jsonb: the document comes back byte for byte (jsonb reorders keys), and nothing
  -- queries inside it.
  alert json NOT NULL
);
-- The dispatcher's pass and the delivery claims: a sink's pending entries in order of addition.
CREATE INDEX outbox_pending_by_sink ON outbox (sink, seq) INCLUDE (due_ms) WHERE state = 'pending';
-- When the next backoff of a sink ends.
CREATE INDEX outbox_pending_due ON outbox (sink, due_ms) WHERE state = 'pending';
-- Listings by state across sinks, and the counts by sink and state (index-only scans).
CREATE INDEX outbox_by_state ON outbox (state, seq);
CREATE INDEX outbox_counts ON outbox (sink, state, (attempts > 0));
-- Pruning: the oldest deliveries first.
CREATE INDEX outbox_delivered ON outbox (delivered_ms) WHERE state = 'delivered';
CREATE INDEX outbox_groups ON outbox (group_id) WHERE group_id IS NOT NULL;

CREATE TABLE meta (
  key text PRIMARY KEY,
  value jsonb NOT NULL
);

-- Every replica that ever started; live ones have a recent heartbeat.
CREATE TABLE replicas (
  id text PRIMARY KEY,
  started_ms bigint NOT NULL,
  heartbeat_ms bigint NOT NULL,
  info jsonb NOT NULL DEFAULT '{}'
);

-- A token bucket per sink, shared by the replicas so that a sink's rate limit holds across them.
CREATE TABLE sink_limits (
  sink text PRIMARY KEY,
  tokens double precision NOT NULL,
  refilled_ms bigint NOT NULL
);

-- A sink's concurrency across replicas: one row per slot (0 … concurrency-1), held by one
-- replica for one delivery; a holder that dies lets the slot lapse at expires_ms.
CREATE TABLE sink_slots (
  sink text NOT NULL,
  slot integer NOT NULL,
  holder text,
  expires_ms bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (sink, slot)
);
`,
  },
  {
    version: 2,
    description: "cooldown stamps, suppression notes and silences as rows; the unused sink limit, slot and claim parts dropped",
    sql: `
-- Never used: a sink's rate limit, concurrency and deliveries hold across replicas because
-- one replica at a time holds the sink's lease (sink:<name>) and delivers it.
DROP TABLE sink_limits;
DROP TABLE sink_slots;
ALTER TABLE outbox DROP COLUMN claimed_by, DROP COLUMN claim_expires_ms;

-- When an alert of one (sink, rule, cooldown key) was last let through: one row each, so
-- that replicas delivering different sinks never overwrite each other's stamps (the one
-- meta value of version 1 lost them). entry_id: the single alert that started it.
CREATE TABLE cooldowns (
  sink text NOT NULL,
  rule text NOT NULL,
  key text NOT NULL,
  at_ms bigint NOT NULL,
  entry_id text,
  PRIMARY KEY (sink, rule, key)
);
CREATE INDEX cooldowns_by_age ON cooldowns (at_ms);

-- Entries marked delivered without a send (held by a cooldown or a silence), for
-- \`kaiawatch outbox\` and the status page; removed with their entry.
CREATE TABLE suppressed (
  entry_id text PRIMARY KEY REFERENCES outbox (id) ON DELETE CASCADE,
  at text NOT NULL,
  reason text NOT NULL CHECK (reason IN ('cooldown', 'silence'))
);

-- Silences (\`kaiawatch silence\`), shared by every replica and the CLI. A removed one keeps
-- its row (removed_at) until it expires, as the file store's tombstones do.
CREATE TABLE silences (
  id text PRIMARY KEY,
  rule text NOT NULL,
  match jsonb NOT NULL,
  reason text NOT NULL,
  created_at text NOT NULL,
  expires_at text NOT NULL,
  expires_ms bigint NOT NULL,
  removed_at text,
  suppressed bigint NOT NULL DEFAULT 0
);

${CONVERT_LEGACY_META}
`,
  },
];

/** The version this code writes: the last migration's. */
export const POSTGRES_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
