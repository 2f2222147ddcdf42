import { KaiawatchError } from "../common/errors.js";
import type { Config, RuleConfig, WatchConfig } from "../config/types.js";
import { TRANSFER_TOPIC, decodeTokenTransfer } from "../chain/token-transfer.js";
import { buildAlert } from "../rules/build-alert.js";
import type { CompiledCondition } from "../rules/compile-condition.js";
import type { ConditionNode } from "../rules/parse-condition.js";
import type { TokenInfo } from "../chain/token-info.js";
import type { AlertDocument } from "../model/alert-document.js";
import { alertLabels } from "../notify/labels.js";
import type { CompiledRule, TokenInfos } from "../config/compile-config.js";
import type { RecordFamily, WatchedRecord } from "../model/record.js";
import { RuleFieldsOf, type SourceRule } from "./source-rule.js";
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
  const token = tokenOfSource(watch, family, definition);
  const condition = token === undefined ? compiled.condition : (compiled.tokenConditions?.get(token) ?? compiled.condition);
  if (condition === undefined) throw new KaiawatchError("KW_CONFIG_INVALID", `rule ${rule.name} has no compiled condition for ${family}`);
  const absence = rule.expect === undefined ? undefined : absenceRuleOf(config, rule, watch, family, labelsOf(rule, family));
  return new CompiledSourceRule(config.chain, rule, watch, family, absence, condition, token, token === undefined ? undefined : tokens?.get(token));
}

/** A rule's alerts of one source all carry the same labels. */
function labelsOf(rule: RuleConfig, family: RecordFamily): Record<string, string> {
  return alertLabels({ rule: rule.name, watch: rule.watch, source: family, severity: rule.severity, labels: rule.labels });
}

/**
 * A compiled rule as an object of fields with its two calls as methods, not as closures: a
 * daemon keeps one per watch and source for as long as it runs, and a closure's context
 * holds every variable of the function that made it (about 0.2 KB a rule at 20,000 watches).
 * For the same reason what the rule's config says is read from it when asked (name, watch,
 * notify, enrich), and its alerts' labels are made at its first alert (most rules of a large
 * config never match).
 * The rule index and `explain` read `condition`: for a token watch the prepared record reads
 * from, to, amount and token from the log's topics, data and contract, as the test does.
 */
class CompiledSourceRule extends RuleFieldsOf<RuleConfig> implements SourceRule {
  readonly condition: ConditionNode;
  private readonly test_: CompiledCondition["test"];
  /** An account watch's account (the alert's link). */
  private readonly account: string | undefined;
  /** The accounts of an account or accounts watch: `direction` is relative to them, an accounts watch's alert names the listed party. */
  private readonly accounts: ReadonlySet<string> | undefined;
  /** The labels of its alerts, once it has made one. */
  private labels: Readonly<Record<string, string>> | undefined = undefined;

  constructor(
    private readonly chain: Config["chain"],
    rule: RuleConfig,
    watch: WatchConfig,
    private readonly family: RecordFamily,
    readonly absence: AbsenceRule | undefined,
    condition: CompiledCondition,
    /** The token of a token watch's Transfer-log source (tokenOfSource). */
    private readonly token: string | undefined,
    private readonly info: TokenInfo | undefined,
  ) {
    super(rule);
    this.condition = condition.node;
    this.test_ = condition.test;
    this.account = watch.kind === "account" ? watch.account : undefined;
    this.accounts = watchedAccountsOf(watch);
  }

  test(record: WatchedRecord): boolean {
    const { token, accounts } = this;
    if (token === undefined || accounts === undefined) return this.test_(record, accounts);
    if (this.info === undefined) throw new TokenInfoMissingError(token);
    if (record.family !== "event_logs") return false;
    const transfer = decodeTokenTransfer(record.data);
    return transfer !== undefined && (accounts.has(transfer.from) || accounts.has(transfer.to)) && this.test_(record, accounts);
  }

  toAlert(record: WatchedRecord, now: Date): AlertDocument {
    // An accounts watch's alert names the listed account the record is from, else the one it is to.
    const watchedAccount = this.account ?? (this.accounts === undefined ? undefined : listedParty(record, this.accounts));
    this.labels ??= labelsOf(this.rule, this.family);
    return buildAlert({ rule: this.rule, labels: this.labels, watch: this.watch, record, network: this.chain.network, explorerUrl: this.chain.explorer_url, now, watchedAccount, token: this.info });
  }
}
