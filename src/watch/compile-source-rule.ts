import { KaiawatchError } from "../common/errors.js";
import type { Config, RuleConfig, WatchConfig } from "../config/types.js";
import { TRANSFER_TOPIC, decodeTokenTransfer } from "../chain/token-transfer.js";
import { buildAlert } from "../rules/build-alert.js";
import { alertLabels } from "../notify/labels.js";
import type { CompiledRule, TokenInfos } from "../config/compile-config.js";
import type { RecordFamily, WatchedRecord } from "../model/record.js";
import { sourceRule, type SourceRule } from "./source-rule.js";
import type { AbsenceRule } from "./absence.js";
import type { SourceDefinition } from "./source.js";
import { tokenTransferFamily } from "../families/registry.js";
import { watchedAccountsOf } from "../config/watched-accounts.js";
import type { EventLog, NftTransfer } from "../explorer/types.js";

/** A token watch's rule ran before the token's decimals and symbol were read (a wiring mistake). */
export class TokenInfoMissingError extends KaiawatchError {
  override name = "TokenInfoMissingError";
  constructor(token: string) {
    super("KW_TOKEN_INFO_MISSING", `the decimals and symbol of token ${token} were not read before its rules were compiled`);
  }
}

/**
 * The token a rule is compiled for when its source is the Transfer logs of one of its
 * account watch's `tokens`, else undefined.
 */
export function tokenOfSource(watch: WatchConfig, family: RecordFamily, definition: SourceDefinition | undefined): string | undefined {
  if ((watch.kind !== "account" && watch.kind !== "accounts") || family !== tokenTransferFamily().name || definition?.signature !== TRANSFER_TOPIC) return undefined;
  const token = definition.address;
  return token !== undefined && watch.tokens.includes(token) ? token : undefined;
}

/** The listed account a token or NFT transfer is from, else the one it is to (lowercase). */
function listedParty(record: WatchedRecord, accounts: ReadonlySet<string>): string | undefined {
  const parties = record.family === "nft_transfers" ? { from: (record.data as NftTransfer).from.toLowerCase(), to: (record.data as NftTransfer).to?.toLowerCase() } : decodeTokenTransfer(record.data as EventLog);
  if (parties === undefined) return undefined;
  return accounts.has(parties.from) ? parties.from : parties.to !== undefined && accounts.has(parties.to) ? parties.to : undefined;
}

/** The absence rule of a rule with `expect` (see absence.ts). */
function absenceRuleOf(config: Config, rule: RuleConfig, watch: WatchConfig, family: RecordFamily, labels: Record<string, string>): AbsenceRule {
  const expect = rule.expect as NonNullable<RuleConfig["expect"]>;
  const subject =
    watch.kind === "account" ? { kind: "account" as const, address: watch.account } : watch.kind === "contract" ? { kind: "contract" as const, address: watch.contract } : watch.kind === "collection" ? { kind: "contract" as const, address: watch.collection } : undefined;
  return {
    name: rule.name,
    watch: rule.watch,
    spec: { atLeast: expect.at_least, withinMs: expect.within, family, network: config.chain.network, explorerUrl: config.chain.explorer_url, ...(subject === undefined ? {} : { subject }), ...(rule.severity === undefined ? {} : { severity: rule.severity }), labels },
  };
}

/**
 * A rule for one of its sources: its compiled condition (see compile-config.ts), and the
 * alert it makes of a matching record. The watched account matters to both (`direction`, the
 * account link).
 *
 * A token watch's rule sees the Transfer logs of one token, shared with every other watch
 * of it: only those from or to its account pass, and amounts are in that token's units.
 */
export function compileSourceRule(config: Config, compiled: CompiledRule, watch: WatchConfig, family: RecordFamily, definition?: SourceDefinition, tokens?: TokenInfos): SourceRule {
  const { rule } = compiled;
  const accounts = watchedAccountsOf(watch);
  // An accounts watch's alert names the listed account the record is from, else the one it is to.
  const accountOf = watch.kind === "accounts" && accounts !== undefined ? (record: WatchedRecord) => listedParty(record, accounts) : () => (watch.kind === "account" ? watch.account : undefined);
  const token = tokenOfSource(watch, family, definition);
  const condition = token === undefined ? compiled.condition : (compiled.tokenConditions?.get(token) ?? compiled.condition);
  if (condition === undefined) throw new KaiawatchError("KW_CONFIG_INVALID", `rule ${rule.name} has no compiled condition for ${family}`);
  const info = token === undefined ? undefined : tokens?.get(token);
  // A rule's alerts of one source all carry the same labels.
  const labels = alertLabels({ rule: rule.name, watch: rule.watch, source: family, severity: rule.severity, labels: rule.labels });
  const toAlert = (record: WatchedRecord, now: Date) =>
    buildAlert({ rule: { name: rule.name, summary: rule.summary, severity: rule.severity }, labels, watch: rule.watch, record, network: config.chain.network, explorerUrl: config.chain.explorer_url, now, watchedAccount: accountOf(record), token: info });
  const absence = rule.expect === undefined ? undefined : absenceRuleOf(config, rule, watch, family, labels);
  const test: SourceRule["test"] =
    token === undefined || accounts === undefined
      ? condition.test
      : (record) => {
          if (info === undefined) throw new TokenInfoMissingError(token);
          if (record.family !== "event_logs") return false;
          const transfer = decodeTokenTransfer(record.data);
          return transfer !== undefined && (accounts.has(transfer.from) || accounts.has(transfer.to)) && condition.test(record);
        };
  // The rule index and `explain` read the condition: for a token watch the prepared record reads
  // from, to, amount and token from the log's topics, data and contract, as the test does.
  return sourceRule(rule, toAlert, absence, test, condition.node);
}
