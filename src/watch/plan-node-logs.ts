import type { LogFilter } from "../chain/get-logs.js";
import { eventTopic } from "../chain/signatures.js";
import { TRANSFER_TOPIC } from "../chain/token-transfer.js";
import type { EventLog, NftTransfer } from "../explorer/types.js";
import type { RecordFamily, WatchedRecord } from "../model/record.js";
import type { PlanInput, RuleInput, WatchInput } from "./plan.js";
import type { PlannedSource } from "./poller.js";
import { addressTopic } from "./index-by.js";
import { sharedNodeSource, type NodeShare } from "./shared-node-source.js";
import { sourceKey, type SourceDefinition } from "./source.js";
import { rulesByWatch } from "./rules-by-watch.js";

/** topic0 of KIP-37 (ERC-1155) TransferSingle and TransferBatch; KIP-17 (ERC-721) Transfer is TRANSFER_TOPIC with the id as topic3. */
export const TRANSFER_SINGLE_TOPIC = eventTopic("TransferSingle(address,address,address,uint256,uint256)");
export const TRANSFER_BATCH_TOPIC = eventTopic("TransferBatch(address,address,address,uint256[],uint256[])");
const NFT_TOPICS = [TRANSFER_TOPIC, TRANSFER_SINGLE_TOPIC, TRANSFER_BATCH_TOPIC];

/** True when a watch's log families are read from the node (`node` or `both`). */
export const readsNode = (watch: WatchInput): boolean => watch.source === "node" || watch.source === "both";
/** True when they are read from the explorer (`explorer`, the default, or `both`). */
export const readsExplorer = (watch: WatchInput): boolean => watch.source !== "node";

const lower = (value: string | undefined) => value?.toLowerCase();
/** A contract watch's events as topic0s, lowercase, sorted, once each, as a set and in words; undefined for every event. */
interface Topics {
  list: string[];
  set: ReadonlySet<string>;
  /** The list joined, for the filters' texts. */
  text: string;
}

/**
 * By the events as written, one for every watch of the same events: 10,000 contract watches
 * of one event hold one list and one set, and hash their signature once. Bounded by the
 * event lists a config names (past the bound they are made, not kept); never changed.
 */
const TOPICS = new Map<string, Topics>();
const MAX_TOPICS = 10_000;

function topicsOf(events: readonly string[] | undefined): Topics | undefined {
  if (!events?.length) return undefined;
  const key = events.join("\n");
  const known = TOPICS.get(key);
  if (known !== undefined) return known;
  const list = [...new Set(events.map((e) => (e.startsWith("0x") ? e.toLowerCase() : eventTopic(e))))].sort();
  const made = { list, set: new Set(list), text: list.join(", ") };
  if (TOPICS.size < MAX_TOPICS) TOPICS.set(key, made);
  return made;
}

/** The node source of a family: one per network, serving every node-read watch of it. */
export function nodeLogsDefinition(network: string, family: "event_logs" | "nft_transfers"): SourceDefinition {
  return { network, operation: family === "event_logs" ? "nodeEventLogs" : "nodeNftTransfers" };
}

/** What a share adds to the family's log queries (filtersOf): lowercase addresses. */
type ShareQuery =
  | { kind: "contracts"; contracts: readonly string[]; topics: readonly string[] | undefined }
  | { kind: "token"; token: string; accounts: readonly string[] }
  | { kind: "collection"; collection: string }
  | { kind: "nft accounts"; accounts: readonly string[] };

/** One watch's share of a node log source, with what it adds to the family's log queries. */
interface Share<R, W> extends NodeShare<R, W> {
  query: ShareQuery;
}

// A share's filter is made here, not where the share is: a closure holds the whole scope it
// was made in, and a daemon keeps one per watch (about 0.1 KB each at 20,000 watches).
const contractLogFilter = (contract: string, wanted: ReadonlySet<string> | undefined) => (r: WatchedRecord) =>
  lower((r.data as EventLog).contract_address) === contract && (wanted === undefined || wanted.has(lower((r.data as EventLog).topics[0]) ?? ""));
/** One per token, for every account watch of it (bounded as TOPICS). */
const TOKEN_FILTERS = new Map<string, (r: WatchedRecord) => boolean>();
const tokenTransferFilter = (token: string) => {
  let filter = TOKEN_FILTERS.get(token);
  if (filter === undefined) {
    filter = (r: WatchedRecord) => lower((r.data as EventLog).contract_address) === token && lower((r.data as EventLog).topics[0]) === TRANSFER_TOPIC;
    if (TOKEN_FILTERS.size < MAX_TOPICS) TOKEN_FILTERS.set(token, filter);
  }
  return filter;
};
const collectionFilter = (collection: string, tokenId: string | undefined) => (r: WatchedRecord) =>
  lower((r.data as NftTransfer).contract.contract_address) === collection && (tokenId === undefined || (r.data as NftTransfer).token_id === tokenId);
const nftAccountFilter = (account: string, contract: string | undefined) => (r: WatchedRecord) => {
  const d = r.data as NftTransfer;
  return (lower(d.from) === account || lower(d.to) === account) && (contract === undefined || lower(d.contract.contract_address) === contract);
};

/**
 * The shares of a config's node-read watches, per family. Each share's filter keeps exactly
 * what the watch's explorer query returns (outsideSource answers the same), so that its rules
 * make the same alerts under the same ids from either source:
 * - a contract watch: the logs its contract emitted, with one of its events' topic0 (any without events);
 * - an account's token: the token's Transfer logs (its rules keep those from or to the account);
 * - a collection: its NFT transfers (of `token_id` only, when given);
 * - an account's NFT transfers: those from or to it (of `nft_contract` only, when given).
 */
function sharesOf<R extends RuleInput, W extends WatchInput>(input: PlanInput<R, W>): Shares<R, W> {
  const byWatch = rulesByWatch(input.rules);
  const shares: Shares<R, W> = { event_logs: [], nft_transfers: [] };
  for (const watch of input.watches) if (readsNode(watch)) sharesOfWatch(input.network, watch, byWatch.get(watch.name) ?? [], shares);
  return shares;
}

type Shares<R, W> = { event_logs: Share<R, W>[]; nft_transfers: Share<R, W>[] };

/**
 * The keys a watch's log families have (or would have) under the node, whatever its `source`
 * now: where a watch switched from the node to the explorer left off (SourceMember.previousKeys).
 */
export function nodeShareKeys<R extends RuleInput, W extends WatchInput>(network: string, watch: W, rules: readonly R[]): Array<{ family: RecordFamily; key: string }> {
  const shares: Shares<R, W> = { event_logs: [], nft_transfers: [] };
  sharesOfWatch(network, watch, rules, shares);
  return (["event_logs", "nft_transfers"] as const).flatMap((family) => shares[family].map((share) => ({ family, key: sourceKey(share.own) })));
}

/** One watch's shares (see sharesOf), for its rules. */
function sharesOfWatch<R extends RuleInput, W extends WatchInput>(network: string, watch: W, watchRules: readonly R[], shares: Shares<R, W>): void {
  // A rule without a source reads the watch's only family (contract: event logs, collection: NFT transfers).
  const only: RecordFamily | undefined = watch.contract !== undefined || watch.contracts !== undefined ? "event_logs" : watch.collection !== undefined ? "nft_transfers" : undefined;
  const rulesOf = (family: RecordFamily) => watchRules.filter((rule) => (rule.source ?? only) === family);
  const logRules = rulesOf("event_logs");
  const nftRules = rulesOf("nft_transfers");
  if (watch.contract !== undefined && logRules.length > 0) {
    const contract = watch.contract.toLowerCase();
    const wanted = topicsOf(watch.events);
    const topics = wanted?.list;
    shares.event_logs.push({
      query: { kind: "contracts", contracts: [contract], topics },
      watch,
      rules: logRules,
      own: { network, operation: "nodeEventLogs", address: contract, ...(topics === undefined ? {} : { topics }) },
      filter: contractLogFilter(contract, wanted?.set),
      filterText: `emitted by ${contract}${wanted === undefined ? "" : `, topic0 in ${wanted.text}`}`,
      indexedBy: { place: "contract", value: contract },
    });
  }
  if (watch.account !== undefined && logRules.length > 0) {
    const account = watch.account.toLowerCase();
    for (const token of new Set((watch.tokens ?? []).map((t) => t.toLowerCase()))) {
      shares.event_logs.push({
        query: { kind: "token", token, accounts: [account] },
        watch,
        rules: logRules,
        // The definition a token rule is compiled for: the token's Transfer logs (tokenOfSource).
        own: { network, operation: "nodeEventLogs", address: token, signature: TRANSFER_TOPIC, account },
        filter: tokenTransferFilter(token),
        filterText: `Transfer logs of token ${token}`,
        // Its rules keep the Transfers from (topic1) or to (topic2) the account.
        indexedBy: { place: "topic party", value: account },
      });
    }
  }
  if (watch.collection !== undefined && nftRules.length > 0) {
    const collection = watch.collection.toLowerCase();
    const tokenId = watch.token_id;
    shares.nft_transfers.push({
      query: { kind: "collection", collection },
      watch,
      rules: nftRules,
      own: { network, operation: "nodeNftTransfers", address: collection, ...(tokenId === undefined ? {} : { tokenId }) },
      filter: collectionFilter(collection, tokenId),
      filterText: `collection ${collection}${tokenId === undefined ? "" : ` token ${tokenId}`}`,
      indexedBy: { place: "contract", value: collection },
    });
  }
  const accountNft = watch.account !== undefined && (watch.sources ?? (watch.tokens?.length ? [] : ["nft_transfers"])).includes("nft_transfers");
  if (accountNft && nftRules.length > 0) {
    const account = (watch.account as string).toLowerCase();
    const contract = lower(watch.nft_contract);
    shares.nft_transfers.push({
      query: { kind: "nft accounts", accounts: [account] },
      watch,
      rules: nftRules,
      own: { network, operation: "nodeNftTransfers", account, ...(contract === undefined ? {} : { contractAddress: contract }) },
      filter: nftAccountFilter(account, contract),
      filterText: `from or to ${account}${contract === undefined ? "" : ` in ${contract}`}`,
      indexedBy: { place: "party", value: account },
    });
  }
  sharesOfList(network, watch, logRules, nftRules, shares);
}

/**
 * The shares of an accounts or contracts watch: one for its contracts' event logs, one per
 * token for its accounts' transfers of it, one for their NFT transfers. Each is what the
 * same addresses as one watch each would read together: a log of a listed contract, a
 * Transfer of the token from or to a listed account (the rules keep those: see
 * compileSourceRule), an NFT transfer from or to one. Each is kept under the watch's name
 * (`list`), not its addresses, so that an address added to the list is read from the
 * watch's position on.
 */
function sharesOfList<R, W extends WatchInput>(network: string, watch: W, logRules: R[], nftRules: R[], shares: { event_logs: Share<R, W>[]; nft_transfers: Share<R, W>[] }): void {
  const list = watch.name;
  if (watch.contracts !== undefined && logRules.length > 0) {
    const contracts = [...new Set(watch.contracts.map((c) => c.toLowerCase()))];
    const listed = new Set(contracts);
    const events = topicsOf(watch.events);
    const topics = events?.list;
    const wanted = events?.set;
    shares.event_logs.push({
      query: { kind: "contracts", contracts, topics },
      watch,
      rules: logRules,
      own: { network, operation: "nodeEventLogs", list, ...(topics === undefined ? {} : { topics }) },
      filter: (r) => listed.has(lower((r.data as EventLog).contract_address) ?? "") && (wanted === undefined || wanted.has(lower((r.data as EventLog).topics[0]) ?? "")),
      filterText: `emitted by one of its ${contracts.length} contracts${events === undefined ? "" : `, topic0 in ${events.text}`}`,
      indexedBy: { place: "contract", value: contracts },
    });
  }
  if (watch.accounts === undefined) return;
  const accounts = [...new Set(watch.accounts.map((a) => a.toLowerCase()))];
  const listed = new Set(accounts);
  if (logRules.length > 0) {
    for (const token of new Set((watch.tokens ?? []).map((t) => t.toLowerCase()))) {
      shares.event_logs.push({
        query: { kind: "token", token, accounts },
        watch,
        rules: logRules,
        own: { network, operation: "nodeEventLogs", address: token, signature: TRANSFER_TOPIC, list },
        filter: tokenTransferFilter(token),
        filterText: `Transfer logs of token ${token}`,
        indexedBy: { place: "topic party", value: accounts },
      });
    }
  }
  if (nftRules.length > 0 && (watch.sources ?? (watch.tokens?.length ? [] : ["nft_transfers"])).includes("nft_transfers")) {
    const contract = lower(watch.nft_contract);
    shares.nft_transfers.push({
      query: { kind: "nft accounts", accounts },
      watch,
      rules: nftRules,
      own: { network, operation: "nodeNftTransfers", list, ...(contract === undefined ? {} : { contractAddress: contract }) },
      filter: (r) => {
        const d = r.data as NftTransfer;
        return (listed.has(d.from.toLowerCase()) || listed.has(lower(d.to) ?? "")) && (contract === undefined || lower(d.contract.contract_address) === contract);
      },
      filterText: `from or to one of its ${accounts.length} accounts${contract === undefined ? "" : ` in ${contract}`}`,
      indexedBy: { place: "party", value: accounts },
    });
  }
}

/**
 * The log queries of a family's shares: contracts with the same events in one filter
 * (address list, topic0 list), every token of the token watches with the accounts at
 * topic1 (from) or topic2 (to), collections by address, accounts' NFT transfers by
 * position (ERC-721 Transfer: from topic1, to topic2; ERC-1155: from topic2, to topic3).
 * The node's answer may hold more than a share wants (a token's Transfer from another
 * watched account): each share's filter and rules keep theirs.
 */
function filtersOf(family: "event_logs" | "nft_transfers", shares: readonly Share<unknown, WatchInput>[]): LogFilter[] {
  const filters: LogFilter[] = [];
  if (family === "event_logs") {
    const byEvents = new Map<string, { topics: readonly string[] | undefined; contracts: Set<string> }>();
    const tokens = new Set<string>();
    const accounts = new Set<string>();
    for (const { query } of shares) {
      if (query.kind === "token") {
        tokens.add(query.token);
        for (const account of query.accounts) accounts.add(addressTopic(account));
      } else if (query.kind === "contracts") {
        const key = query.topics?.join(",") ?? "*";
        let group = byEvents.get(key);
        if (group === undefined) byEvents.set(key, (group = { topics: query.topics, contracts: new Set() }));
        for (const contract of query.contracts) group.contracts.add(contract);
      }
    }
    for (const { topics, contracts } of byEvents.values()) filters.push(topics === undefined ? { address: [...contracts] } : { address: [...contracts], topics: [topics] });
    if (tokens.size > 0) {
      const address = [...tokens];
      const parties = [...accounts];
      filters.push({ address, topics: [[TRANSFER_TOPIC], parties] }, { address, topics: [[TRANSFER_TOPIC], null, parties] });
    }
    return filters;
  }
  const collections = new Set<string>();
  const accounts = new Set<string>();
  for (const { query } of shares) {
    if (query.kind === "nft accounts") for (const account of query.accounts) accounts.add(addressTopic(account));
    else if (query.kind === "collection") collections.add(query.collection);
  }
  if (collections.size > 0) filters.push({ address: [...collections], topics: [NFT_TOPICS] });
  if (accounts.size > 0) {
    const parties = [...accounts];
    const multi = [TRANSFER_SINGLE_TOPIC, TRANSFER_BATCH_TOPIC];
    filters.push({ topics: [[TRANSFER_TOPIC], parties] }, { topics: [[TRANSFER_TOPIC], null, parties] }, { topics: [multi, null, parties] }, { topics: [multi, null, null, parties] });
  }
  return filters;
}

/**
 * The node's log sources of a config: one per family (event logs, NFT transfers) serving
 * every watch read from the node (`source: node` or `both`), the same log queries a window
 * for all of them (one per filter, cut by chain.max_request_bytes), each watch under its
 * own share's key (sharedNodeSource). With `both` the watch's explorer sources are planned
 * beside (plan.ts): each keeps its own cursor, and a record read by both makes one alert id
 * (rule name and record key), queued once.
 */
export function planNodeLogSources<R extends RuleInput, W extends WatchInput>(input: PlanInput<R, W>): PlannedSource[] {
  const shares = sharesOf(input);
  const sources: PlannedSource[] = [];
  for (const family of ["event_logs", "nft_transfers"] as const) {
    const source = sharedNodeSource(input, nodeLogsDefinition(input.network, family), family, shares[family]);
    if (source !== undefined) sources.push({ ...source, logFilters: filtersOf(family, shares[family]) });
  }
  return sources;
}
