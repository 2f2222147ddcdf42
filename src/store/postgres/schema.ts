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
 * The schema starts at version 2: every table in one migration. Builds of development left
 * databases at version 1, which migrate.ts refuses by name. Each change since is a migration
 * at the end.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 2,
    description: "cursors, leases, alerts, outbox, meta, replicas, cooldown stamps, suppression notes, silences, balance episodes and the delivery history",
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

-- An alert is kept once however many sinks it goes to: its document never changes, and five
-- copies of it were most of a store whose alerts went to five sinks. json, not jsonb: the
-- document comes back byte for byte (jsonb reorders keys), and nothing queries inside it.
-- The first document stored under an id stays (an id is the same only for the same rule and
-- record). An alert goes when its last outbox row is pruned (postgres-store.ts).
CREATE TABLE alerts (
  id text PRIMARY KEY,
  document json NOT NULL
);

-- One row per (alert, sink): a delivery. seq is the order of addition, which listings
-- promise. The reference is checked at commit: a window's rows and their alerts are written
-- by two statements of one transaction, the rows first (only the alerts of added rows are
-- written), and a prune that removes an alert a concurrent window refers to fails instead of
-- losing it.
CREATE TABLE outbox (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id text NOT NULL UNIQUE,
  alert_id text NOT NULL REFERENCES alerts (id) DEFERRABLE INITIALLY DEFERRED,
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
  delivered_ms bigint
);
-- The dispatcher's pass: a sink's pending entries in order of addition.
CREATE INDEX outbox_pending_by_sink ON outbox (sink, seq) INCLUDE (due_ms) WHERE state = 'pending';
-- When the next backoff of a sink ends.
CREATE INDEX outbox_pending_due ON outbox (sink, due_ms) WHERE state = 'pending';
-- Listings by state across sinks, and the counts by sink and state (index-only scans).
CREATE INDEX outbox_by_state ON outbox (state, seq);
CREATE INDEX outbox_counts ON outbox (sink, state, (attempts > 0));
-- Pruning: the oldest deliveries first.
CREATE INDEX outbox_delivered ON outbox (delivered_ms) WHERE state = 'delivered';
CREATE INDEX outbox_groups ON outbox (group_id) WHERE group_id IS NOT NULL;
-- Whether a pruned entry's alert has another delivery left.
CREATE INDEX outbox_by_alert ON outbox (alert_id);

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

-- When an alert of one (sink, rule, cooldown key) was last let through: one row each, so
-- that replicas delivering different sinks never overwrite each other's stamps.
-- entry_id: the single alert that started it.
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
  reason text NOT NULL CHECK (reason IN ('cooldown', 'silence', 'inhibited'))
);

-- Silences (\`kaiawatch silence\`), shared by every replica and the CLI. A removed one keeps
-- its row (removed_at) until it expires.
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

-- The delivery history (delivery-attempts.ts), as the file store's: one row per entry and
-- attempt, written in the transaction of the outcome's change; kept for store.retention after
-- at_ms. delivery_id is NULL when it is the alert's id (a single alert's delivery; a digest's is
-- its group id).
CREATE TABLE delivery_attempts (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at_ms bigint NOT NULL,
  alert_id text NOT NULL,
  sink text NOT NULL,
  rule text NOT NULL,
  delivery_id text,
  attempt integer NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('delivered', 'failed', 'dead', 'suppressed')),
  status integer,
  latency_ms integer,
  error text
);
CREATE INDEX delivery_attempts_by_time ON delivery_attempts (at_ms);
CREATE INDEX delivery_attempts_by_alert ON delivery_attempts (alert_id, at_ms);

-- The open episode of each (balance rule, address, asset): its firing alert and the
-- readings in a row without the condition. One row per key, whichever replica reads the
-- balances: an episode fires once and resolves once (Store.commitBalanceEpisodes).
CREATE TABLE balance_episodes (
  rule text NOT NULL,
  address text NOT NULL,
  asset text NOT NULL,
  alert jsonb NOT NULL,
  clear integer NOT NULL,
  -- Reminders sent, and when the last was decided (null: none yet; due from the alert's created_at).
  repeats integer NOT NULL DEFAULT 0,
  reminded_at text,
  PRIMARY KEY (rule, address, asset)
);

-- What each absence rule has observed (AbsenceState in src/store/types.ts), written with the
-- cursor advance of the window it observed (Store.commitWindow): fenced like it.
CREATE TABLE absences (
  rule text PRIMARY KEY,
  state jsonb NOT NULL
);
`,
  },
  {
    version: 3,
    description: "silences on labels (rule may be NULL, matchers) and alerts muted by a route's time interval",
    sql: `
ALTER TABLE suppressed DROP CONSTRAINT suppressed_reason_check;
ALTER TABLE suppressed ADD CONSTRAINT suppressed_reason_check CHECK (reason IN ('cooldown', 'silence', 'inhibited', 'muted'));
-- rule is NULL for a label silence (any rule's alerts); matchers, its label matchers (NULL: none).
ALTER TABLE silences ALTER COLUMN rule DROP NOT NULL;
ALTER TABLE silences ADD COLUMN matchers jsonb;
`,
  },
  {
    version: 4,
    description: "witnesses: what one reader of a `source: both` watch saw and the other not (yet)",
    sql: `
-- What one reader of a \`source: both\` watch found and the other has not (yet), as the SQLite
-- store's; missed_at once it was reported missed, kept until pruned.
CREATE TABLE witnesses (
  alert_id text NOT NULL,
  role text NOT NULL CHECK (role IN ('explorer', 'node')),
  watch text NOT NULL,
  family text NOT NULL,
  rule text NOT NULL,
  block bigint NOT NULL,
  record_key text NOT NULL,
  summary text NOT NULL,
  transaction_hash text,
  seen_at text NOT NULL,
  missed_at text,
  PRIMARY KEY (alert_id, role)
);
CREATE INDEX witnesses_open ON witnesses (block) WHERE missed_at IS NULL;
CREATE INDEX witnesses_missed ON witnesses (missed_at) WHERE missed_at IS NOT NULL;
`,
  },
];

/** The version this code writes: the last migration's. */
export const POSTGRES_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
