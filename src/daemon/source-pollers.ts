import type { JsonRpc } from "../chain/json-rpc.js";
import { cachedBlockTimes, readBlockTime } from "../chain/block-time.js";
import type { Common } from "../common/common.js";
import { createProgress, type Progress } from "../common/progress.js";
import type { Config } from "../config/types.js";
import type { ExplorerClient } from "../explorer/client.js";
import { createEnricher } from "../rules/enrich.js";
import type { Store } from "../store/types.js";
import { blocksInFlightFor, type RecountPolicy } from "../watch/fetch-window.js";
import { NORMALIZERS } from "../watch/normalize.js";
import type { Plan } from "../watch/plan.js";
import type { AuditPlan } from "../watch/audit-plan.js";
import { createSourcePoller, type SourcePoller } from "../watch/poller.js";
import { isNodeLogOperation, isNodeOperation } from "../watch/source.js";
import { createNodePaginators } from "./node-paginate.js";
import { paginateSource } from "./paginate-source.js";

export interface SourcePollersParts {
  config: Config;
  plan: Plan;
  store: Store;
  client: ExplorerClient;
  rpc: JsonRpc;
  /** Called when a tick queued alerts (the dispatcher delivers them at once). */
  onAlerts: () => void;
  recount?: Partial<RecountPolicy>;
  blocksInFlight?: number;
  countCap?: number;
  progress?: Progress;
  /** The audit of `source: both` watches (planAudit of the plan): what each window witnesses. */
  audit?: AuditPlan;
}

/** One poller per planned source: explorer sources page the explorer, node sources read blocks through the JSON-RPC client. */
export function createSourcePollers(common: Common, parts: SourcePollersParts): SourcePoller[] {
  const { config, client } = parts;
  // One enricher for the run: its cache serves every source (the same transaction can match in several).
  const enricher = createEnricher(common, { client });
  // The node sources read through the shared JSON-RPC client (its rate limit).
  const nodePaginate = createNodePaginators(common, config, parts.rpc);
  // Catch-ups report their progress: info logs every few seconds, or a terminal line (`once`).
  const progress = parts.progress ?? createProgress({ now: common.now, logger: common.logger });
  // Absence rules count in block time: timestamps from the node, remembered (no reorgs on Kaia).
  const blockTimes = cachedBlockTimes((block, signal) => readBlockTime(parts.rpc, block, signal));
  return parts.plan.sources.map((source) =>
    createSourcePoller(common, {
      source,
      store: parts.store,
      paginate: isNodeOperation(source.definition.operation) ? nodePaginate(source) : paginateSource(client, source.definition, config.explorer.page_size),
      normalize: NORMALIZERS[source.family],
      pageSize: config.explorer.page_size,
      enrich: source.rules.some((rule) => (rule.enrich ?? []).length > 0) ? enricher.enrich : undefined,
      onAlerts: parts.onAlerts,
      recount: parts.recount,
      // A node log query answers every log of its window on one page: the explorer's count cap is not its.
      countCap: isNodeLogOperation(source.definition.operation) ? Infinity : parts.countCap,
      blocksInFlight: parts.blocksInFlight ?? blocksInFlightFor(isNodeOperation(source.definition.operation) ? config.chain.requests_per_second : config.explorer.requests_per_second),
      progress,
      audit: parts.audit,
      ...(parts.plan.formerKeys === undefined ? {} : { formerKeys: parts.plan.formerKeys }),
      ...(source.rules.some((rule) => rule.absence !== undefined) ? { blockTime: blockTimes } : {}),
    }),
  );
}
