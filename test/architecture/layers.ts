/**
 * The folders of `src/`, lowest first. A folder may import only itself and the folders before
 * it, so that each layer can be read, tested and replaced without the ones above it. This list
 * is the one declaration of the order: `layering.test.ts` enforces it on every import of `src/`
 * and checks that the "Layout" section of docs/development.md shows the same list.
 *
 * `explorer` sits below `model` because a record is an explorer record with an identity key
 * (`WatchedRecord` wraps `EventLog`, `NftTransfer`, …) and enrichment kinds are priced in
 * explorer operations; the explorer client itself knows nothing of rules or alerts.
 * `families` sits just above `chain` (a family's fields decode token transfers and format
 * amounts) and below everything that reads records, so rules, notify and watch look a family
 * up instead of switching on its name.
 */
export interface Layer {
  readonly folder: string;
  /** One line: what the folder is responsible for (docs/development.md shows it verbatim). */
  readonly responsibility: string;
}

export const layers: readonly Layer[] = [
  { folder: "common", responsibility: "errors, logger, metrics, backoff, secrets, text cleaning: no domain knowledge" },
  { folder: "http", responsibility: "the HTTP transport below the explorer and JSON-RPC clients: one request (size cap, deadline), the keep-alive pool or a dispatcher handed in, retries, rate limiter, user agent, neutral transport errors (KW_HTTP_…)" },
  { folder: "explorer", responsibility: "the KaiaScan Open API client: paging, retries, rate limit, credit meter, response checks" },
  { folder: "model", responsibility: "the domain types every layer shares, built on the explorer's records: record families, the alert document, start positions, enrichment kinds, outbox entries" },
  { folder: "chain", responsibility: "Kaia itself over JSON-RPC (the head, balances, token calls), addresses, units and token amounts, event signatures" },
  { folder: "families", responsibility: "one definition per record family (event logs, NFT transfers, internal transactions, top-level transactions) and their registry: readers, normalising and probing, identity and order, fields and their kinds, summary, links, alert view, record shape" },
  { folder: "simulator", responsibility: "a simulated explorer API and chain, for tests, the demo and the torture" },
  { folder: "rules", responsibility: "rule conditions: parse, compile, evaluate, enrich, build alerts" },
  { folder: "store", responsibility: "the store as a port (backend.ts) with two backends, SQLite and PostgreSQL: cursors, outbox and history in one atomic write, silences, leases, the store lock, every durable file write" },
  { folder: "notify", responsibility: "delivery in stages (admission: silences, cooldown, digests; sending; outcome) run by the dispatcher; the sinks, one file each, and their registry; templates and escaping" },
  { folder: "config", responsibility: "loading and checking config.yaml: schema, env and secrets, located errors" },
  { folder: "watch", responsibility: "sources, windows, the poller and engine, replay and the credit plan" },
  { folder: "status", responsibility: "the status page and HTTP API: health, metrics, requeue, credits" },
  { folder: "daemon", responsibility: "wiring everything into one running process; budget guard and head probe" },
  { folder: "doctor", responsibility: "first-run checks of a config against the real services: explorer, key and plan, answer shapes, node, sinks" },
  { folder: "demo", responsibility: "the one-minute demo: simulator, daemon, webhook receiver, mail catcher" },
  { folder: "cli", responsibility: "the kaiawatch command and its subcommands" },
];
