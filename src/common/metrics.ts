import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/**
 * Every metric kaiawatch exports, defined in one place (as Ponder does) so that names and
 * labels stay consistent and `/metrics` documents itself. Each process (and each test)
 * creates its own registry; nothing is global.
 */
export function createMetrics(options: { defaultMetrics?: boolean } = {}) {
  const registry = new Registry();
  if (options.defaultMetrics) collectDefaultMetrics({ register: registry, prefix: "kaiawatch_" }); // kaiawatch_process_* and kaiawatch_nodejs_*, "process" once
  const registers = [registry];
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new Counter<L>({ name, help, labelNames, registers });
  const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new Gauge<L>({ name, help, labelNames, registers });
  const histogram = <L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]) =>
    new Histogram<L>({ name, help, labelNames, registers, buckets });
  const seconds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

  return {
    registry,
    // explorer client
    explorerRequests: counter("kaiawatch_explorer_requests_total", "Explorer API requests by operation and HTTP status (or error code).", ["operation", "status"] as const),
    explorerRetries: counter("kaiawatch_explorer_retries_total", "Explorer API requests retried.", ["operation"] as const),
    explorerRequestDuration: histogram("kaiawatch_explorer_request_duration_seconds", "Explorer API request duration.", ["operation"] as const, seconds),
    explorerCredits: counter("kaiawatch_explorer_credits_spent_total", "Credits charged by the explorer, by operation.", ["operation"] as const),
    explorerCreditsToday: gauge("kaiawatch_explorer_credits_today", "Credits spent in the current UTC day.", [] as const),
    explorerCreditBudget: gauge("kaiawatch_explorer_credit_budget", "The configured daily credit budget (0 when unlimited).", [] as const),
    pollingPaused: gauge("kaiawatch_polling_paused", "1 while polling is paused: the daily credit budget is spent (until 00:00 UTC), or the explorer's daily quota is (until kaiawatch asks again, within the hour).", [] as const),
    explorerRequestRate: gauge("kaiawatch_explorer_request_rate", "Explorer requests per second allowed now: explorer.requests_per_second, lowered after per-second quota refusals and climbing back while none come.", [] as const),
    explorerShapeErrors: counter("kaiawatch_explorer_shape_errors_total", "Explorer answers refused because a field kaiawatch reads was missing or malformed, by operation and field (results[].amount).", ["operation", "field"] as const),
    explorerFieldSpelling: counter("kaiawatch_explorer_field_spelling_total", "Explorer answers by how their field names are spelled: snake_case (klaytn/finder-api, explorer-api.md) or camelCase (KaiaScan's live documentation); both are read alike.", ["operation", "spelling"] as const),
    explorerUnknownFields: counter("kaiawatch_explorer_unknown_fields_total", "Explorer answers carrying a field the API document does not list (in up to 16 records spread over a page), by operation and field: accepted and kept, counted so that drift shows before it matters.", ["operation", "field"] as const),
    // chain JSON-RPC (head, balances, token metadata)
    rpcRequests: counter("kaiawatch_rpc_requests_total", "JSON-RPC attempts by method and outcome (ok, rpc_error, bad_response, http_error, too_large, timeout, network, aborted); retries count again.", ["method", "outcome"] as const),
    rpcRetries: counter("kaiawatch_rpc_retries_total", "JSON-RPC requests retried, by method.", ["method"] as const),
    rpcRequestDuration: histogram("kaiawatch_rpc_request_duration_seconds", "JSON-RPC attempt duration (after the rate limiter's wait), by method.", ["method"] as const, seconds),
    // log queries (eth_getLogs): the node-read families
    nodeLogQueries: counter("kaiawatch_node_log_queries_total", "eth_getLogs queries by outcome: ok, or split (the node refused the query as too large: over its result or time limit, or its block range; the range, then the address list, is halved and asked again).", ["outcome"] as const),
    nodeLogsRemoved: counter("kaiawatch_node_logs_removed_total", "Logs the node answered with removed: true (a reorg's), dropped.", [] as const),
    // the transactions source (top-level transactions read from the node)
    nodeBlockReads: counter("kaiawatch_node_block_reads_total", "Blocks whose transactions and receipts were read from the node (kaia_getBlockReceipts), for the transactions source: one read per block serves every account watch.", [] as const),
    nodeRevertTraces: counter("kaiawatch_node_revert_traces_total", "debug_traceTransaction calls for the revert reason of a failed transaction of a watched account, by outcome (ok, no_reason, unavailable, error).", ["outcome"] as const),
    nodeBlockTraces: counter("kaiawatch_node_block_traces_total", "debug_traceBlockByNumber calls (callTracer) for a block's internal transactions, by outcome (ok, unavailable, error).", ["outcome"] as const),
    nodeTransactionAnomalies: counter("kaiawatch_node_transaction_anomalies_total", "Transactions read from the node with something tolerated (unknown_type, type_name_mismatch, no_effective_gas_price, unknown_tx_error).", ["kind"] as const),
    // chain head and sources
    headBlock: gauge("kaiawatch_head_block", "The chain head used for the last tick (after lag_blocks).", [] as const),
    sourceCursor: gauge("kaiawatch_source_cursor_block", "Last fully processed block of a source.", ["watch", "source"] as const),
    sourceLag: gauge("kaiawatch_source_lag_blocks", "Blocks between a source's cursor and the head.", ["watch", "source"] as const),
    sourceTicks: counter("kaiawatch_source_ticks_total", "Ticks of a source by outcome (ok, error, timeout: aborted at defaults.tick_timeout, paused: the daily credit budget is spent).", ["watch", "source", "outcome"] as const),
    sourceTicksSkipped: counter("kaiawatch_source_ticks_skipped_total", "Ticks skipped because the previous tick of the source was still running.", ["watch", "source"] as const),
    // A histogram per source would be 14 series each (10,000 sources: 140,000 series and
    // ~15 MB of heap): the distribution is per record family, the last duration per source.
    sourceTickDuration: histogram("kaiawatch_source_tick_duration_seconds", "Duration of source ticks, by record family (event_logs, nft_transfers, internal_transactions).", ["family"] as const, seconds),
    sourceLastTickDuration: gauge("kaiawatch_source_last_tick_duration_seconds", "Duration of a source's last tick.", ["watch", "source"] as const),
    sourceRecords: counter("kaiawatch_source_records_total", "Records fetched and evaluated by a source.", ["watch", "source"] as const),
    // balance watches (read by the replica holding each watch's lease)
    balanceReads: counter("kaiawatch_balance_reads_total", "Balances read over JSON-RPC (eth_getBalance, balanceOf) for a balance watch; with replicas only the holder of the watch reads, so the sum over replicas is one replica's.", ["watch"] as const),
    balanceReadBlock: gauge("kaiawatch_balance_read_block", "The block of a balance watch's last reading (on the replica that made it).", ["watch"] as const),
    balanceReadTime: gauge("kaiawatch_balance_read_timestamp_seconds", "When a balance watch was last read (Unix seconds, on the replica that read it).", ["watch"] as const),
    balanceRuleFiring: gauge("kaiawatch_balance_rule_firing", "Open episodes (firing alerts) of a balance rule after the last reading: 0 is ok (on the replica holding its watch).", ["rule"] as const),
    balanceWatchHeld: gauge("kaiawatch_balance_watch_held", "1 while this replica holds a balance watch's lease and reads it, else 0.", ["watch"] as const),
    // rules and delivery
    ruleMatches: counter("kaiawatch_rule_matches_total", "Records that matched a rule.", ["rule"] as const),
    missedRecords: counter("kaiawatch_missed_records_total", "Records of a `source: both` watch that one reader returned and the other (source: explorer or node) did not, once it had read past their block: each counted once, by the replica that reported it (explorer_missed_record, node_missed_record).", ["source"] as const),
    enrichmentLookups: counter("kaiawatch_enrichment_lookups_total", "Enrichment lookups per alert by kind and outcome (fetched, cached, failed, skipped); their credits are in kaiawatch_explorer_credits_spent_total.", ["kind", "outcome"] as const),
    alertsQueued: counter("kaiawatch_alerts_queued_total", "Alerts put into the outbox, per sink.", ["sink"] as const),
    alertsDelivered: counter("kaiawatch_alerts_delivered_total", "Alerts a sink accepted.", ["sink"] as const),
    alertsRetried: counter("kaiawatch_alerts_retried_total", "Delivery attempts that failed and will be retried.", ["sink"] as const),
    alertsDead: counter("kaiawatch_alerts_dead_total", "Alerts that became dead letters.", ["sink"] as const),
    alertsSuppressed: counter("kaiawatch_alerts_suppressed_total", "Alerts not sent because of a cooldown, a silence or an inhibit rule (reason).", ["rule", "reason"] as const),
    outboxPending: gauge("kaiawatch_outbox_pending", "Alerts waiting in the outbox, per sink and state.", ["sink", "state"] as const),
    heartbeatPings: counter("kaiawatch_heartbeat_pings_total", "Beats of a heartbeat sink by outcome: ok (pinged, the URL answered 2xx), failed (the ping failed), not_ready (skipped: kaiawatch is not ready, and with replicas no live replica is), not_holder (skipped: another replica holds the sink and pings). Summed over replicas, ok counts the pings the outside service heard.", ["sink", "outcome"] as const),
    deliveryLatency: histogram("kaiawatch_delivery_latency_seconds", "From an alert entering the outbox to its sink accepting it.", ["sink"] as const, seconds),
    // store
    storeWriteDuration: histogram("kaiawatch_store_write_duration_seconds", "Duration of one atomic store write.", [] as const, [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1]),
    storeSize: gauge("kaiawatch_store_size_bytes", "Size of the store file after the last write.", [] as const),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
