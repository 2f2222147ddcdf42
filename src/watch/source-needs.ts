import type { RecordFamily, WatchedRecord } from "../model/record.js";
import type { InternalTransactionListItem, EventLog, NftTransfer } from "../explorer/types.js";
import type { PlanInput, RuleInput, WatchInput } from "./plan.js";
import { FAMILY_OF_OPERATION, type SourceDefinition } from "./source.js";
import { rulesByWatch } from "./rules-by-watch.js";

/** What one watch needs of one server-side query: the records its own source would return, for its rules. */
export interface Need<R, W> {
  /** Position in the config (watch order, then its queries): ties and member order follow it. */
  index: number;
  watch: W;
  family: RecordFamily;
  /** The watch's own source: today's plan. */
  own: SourceDefinition;
  ownKey: string;
  rules: R[];
  schedule: string;
  /** Ticks a day of the schedule: a shared source polls on its members' most frequent one. */
  ticks: number;
  maxWindowBlocks: number;
  /** The wider sources that see its records (none when pinned `via: own`). */
  candidates: SharedCandidate[];
}

/** A wider source that sees a need's records, and the client-side filter that gives them back exactly. */
export interface SharedCandidate {
  definition: SourceDefinition;
  key: string;
  /** Keeps the records the need's own source would have returned. */
  filter: (record: WatchedRecord) => boolean;
  /** The filter in words, for `kaiawatch plan`. */
  filterText: string;
}

const lower = (value: string | undefined) => value?.toLowerCase();
/** An internal transaction or NFT transfer from or to the account (lower-case). */
const fromOrTo = (account: string) => (r: WatchedRecord) => {
  const d = r.data as InternalTransactionListItem | NftTransfer;
  return lower(d.from) === account || lower(d.to) === account;
};

/**
 * The shared sources that see the records of a watch's own source, with the filter that
 * gives back exactly those records (the same filters the simulator and the API apply
 * server-side). Operation 7 of an account is "from or to the account", so operation 8's
 * records with that filter are the same list; an event filter is topic0; operation 3's
 * contract filter is the record's contract; operation 4's token filter is its token id.
 */
function sharedCandidates(own: SourceDefinition, keyOf: (definition: SourceDefinition) => string): SharedCandidate[] {
  const candidate = (definition: SourceDefinition, filter: (record: WatchedRecord) => boolean, filterText: string): SharedCandidate => ({ definition, key: keyOf(definition), filter, filterText });
  const { network, address } = own;
  switch (own.operation) {
    case "accountInternalTransactions": {
      const account = address as string;
      return [
        candidate({ network, operation: "blockInternalTransactions" }, fromOrTo(account), `from or to ${account}`),
      ];
    }
    case "accountEventLogs": {
      const signature = own.signature;
      if (signature === undefined) return [];
      return [candidate({ network, operation: "accountEventLogs", address }, (r) => lower((r.data as EventLog).topics[0]) === signature, `topic0 ${signature}`)];
    }
    case "accountNftTransfers": {
      const contract = own.contractAddress;
      if (contract === undefined) return [];
      const account = address as string;
      return [
        candidate({ network, operation: "accountNftTransfers", address }, (r) => lower((r.data as NftTransfer).contract.contract_address) === contract, `contract ${contract}`),
        candidate({ network, operation: "nftTransfers", address: contract }, fromOrTo(account), `from or to ${account}`),
      ];
    }
    case "nftTransfers": {
      const tokenId = own.tokenId;
      if (tokenId === undefined) return [];
      return [candidate({ network, operation: "nftTransfers", address }, (r) => (r.data as NftTransfer).token_id === tokenId, `token ${tokenId}`)];
    }
    case "blockInternalTransactions":
    case "blockTransactions":
    case "nodeEventLogs":
    case "nodeNftTransfers":
    case "nodeInternalTransactions":
      return [];
  }
}

/**
 * What each watch needs of each of its server-side queries (in config order), with the wider
 * sources that could serve it; a watch without rules needs nothing and is named idle.
 */
export function collectNeeds<R extends RuleInput, W extends WatchInput>(
  input: PlanInput<R, W>,
  definitionsOfWatch: (network: string, watch: W) => SourceDefinition[],
  keyOf: (definition: SourceDefinition) => string,
  ticksOf: (schedule: string) => number,
): { needs: Need<R, W>[]; idleWatches: string[] } {
  const idleWatches: string[] = [];
  const byWatch = rulesByWatch(input.rules);
  const candidatesByOwnKey = new Map<string, SharedCandidate[]>();
  const needs: Need<R, W>[] = [];
  for (const watch of input.watches) {
    const rules = byWatch.get(watch.name) ?? [];
    if (rules.length === 0) {
      idleWatches.push(watch.name);
      continue;
    }
    for (const own of definitionsOfWatch(input.network, watch)) {
      const family = FAMILY_OF_OPERATION[own.operation];
      const familyRules = rules.filter((rule) => (rule.source ?? family) === family);
      if (familyRules.length === 0) continue;
      const ownKey = keyOf(own);
      let candidates = candidatesByOwnKey.get(ownKey);
      if (candidates === undefined) candidatesByOwnKey.set(ownKey, (candidates = sharedCandidates(own, keyOf)));
      const schedule = watch.schedule ?? input.defaults.schedule;
      needs.push({
        index: needs.length,
        watch,
        family,
        own,
        ownKey,
        rules: familyRules,
        schedule,
        ticks: ticksOf(schedule),
        maxWindowBlocks: watch.max_window_blocks ?? input.defaults.max_window_blocks,
        candidates: watch.via === "own" ? [] : candidates,
      });
    }
  }
  return { needs, idleWatches };
}
