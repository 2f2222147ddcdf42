import { familyOf, tokenTransferFamily } from "../../families/registry.js";
import { formatDuration } from "../../common/duration.js";
import type { Common } from "../../common/common.js";
import { describeError, isKaiawatchError } from "../../common/errors.js";
import type { Config } from "../../config/index.js";
import { silenceMatchers, silenceMatchesRecord, withoutCount, type Silence } from "../../notify/silences.js";
import { describeInhibitRule, inhibitionOf, type FiringSource } from "../../notify/inhibit.js";
import { alertLabels } from "../../notify/labels.js";
import { matches } from "../../notify/matchers.js";
import { readFiringSources } from "../../daemon/firing-sources.js";
import { openBackend } from "../../store/open-backend.js";
import { storeOptionsOf } from "../../config/store-options.js";
import { cleanLine, sanitizeText } from "../../common/sanitize-text.js";
import { explainRecord } from "../../rules/explain-record.js";
import { BALANCE_ALERT_SOURCE } from "../../model/alert-document.js";
import { planFromConfig } from "../../watch/plan-from-config.js";
import type { WatchedRecord } from "../../model/record.js";
import { describeSource } from "../../watch/source.js";
import { fetchTransactionRecords, outsideSource } from "../../watch/transaction-records.js";
import { readConfigTokensOnce } from "../../watch/config-tokens.js";
import { decodeTokenTransfer } from "../../chain/token-transfer.js";
import { CONFIG_OPTIONS, CONFIG_OPTIONS_HELP, UsageError, parseCommandArgs, ruleNamed, startConfigCommand } from "../bootstrap.js";
import { openCommandClient } from "../command-client.js";
import { EXIT_OK, EXIT_RUNTIME, type Command, type CommandIO } from "../command.js";
import { watchedAccountsOf } from "../../config/watched-accounts.js";

const HELP = `Usage: kaiawatch explain --rule NAME --tx HASH [--block BLOCK] [options]

Fetches the transaction's records of the rule's source and shows, condition by condition,
why each one matched the rule or did not:

  ✗ amount 999.999999999999999999 KAIA < 1000 KAIA

A record the watch's own query would not return (another contract, event or account) is
marked as such: the rule never sees it. A rule of source transactions (read from the
node) is not explained yet.

A rule of an account watch's token transfers (tokens:) shows amounts in each token's
units; its decimals and symbol are read by JSON-RPC at chain.rpc_url, as the daemon does,
and a transfer neither from nor to the wallet is marked as such.

A matching record the daemon would hold back is marked HELD BACK: an active silence of
the rule, or an inhibit rule (inhibit_rules:) whose source fires now. The inhibit rules
that may hold the rule's alerts are listed under its when:.

Records come from operation 10 (event logs of a transaction, 3 credits) or 5 (NFT
transfers of a transaction, 3 credits). Internal transactions are read from their block
with operation 8 (1 credit), because operation 1 answers a different record without the
block or status the rules read; the block is --block, or found from the transaction's
event logs or NFT transfers (operations 1, 10 and 5, 3 credits each).

It only reads (no store lock), so it works while the daemon runs.

Options:
  --rule NAME      the rule (required)
  --tx HASH        the transaction hash, 0x + 64 hex (required)
  --block BLOCK    the transaction's block (internal transactions; saves the look-up)
${CONFIG_OPTIONS_HELP}
`;

export const explainCommand: Command = { help: HELP, run };

async function run(args: string[], io: CommandIO): Promise<number> {
  const { values } = parseCommandArgs(args, { ...CONFIG_OPTIONS, rule: { type: "string" }, tx: { type: "string" }, block: { type: "string" } });
  if (values.rule === undefined) throw new UsageError("--rule NAME is required");
  if (values.tx === undefined) throw new UsageError("--tx HASH is required");
  if (!/^0x[0-9a-fA-F]{64}$/.test(values.tx)) throw new UsageError(`--tx must be a transaction hash (0x and 64 hex digits), not "${cleanLine(values.tx, 80)}"`);
  if (values.block !== undefined && !/^\d+$/.test(values.block)) throw new UsageError(`--block must be a block number, not "${cleanLine(values.block, 40)}"`);
  const loaded = await startConfigCommand(io, values);
  if (typeof loaded === "number") return loaded;
  const { config, common, compiled: loadedCompiled } = loaded;
  const rule = ruleNamed(config, values.rule);
  const watch = config.watches.find((w) => w.name === rule.watch)!;
  const source = rule.source;
  if (source === BALANCE_ALERT_SOURCE) throw new UsageError(`rule ${rule.name} reads balances, not records of a transaction: explain does not apply`);
  const family = source;
  const tokenWallets = (watch.kind === "account" || watch.kind === "accounts") && watch.tokens.length > 0 && family === tokenTransferFamily().name ? watchedAccountsOf(watch) : undefined;

  // A token watch's amounts are in its tokens' units: their decimals and symbols by JSON-RPC, as the daemon reads them.
  const compiled = tokenWallets === undefined ? loadedCompiled : await readConfigTokensOnce(common, config, loadedCompiled, io.signal);
  // The daemon's plan for this one rule: the same sources it polls, the same compiled condition.
  const plan = planFromConfig(config, { rules: [rule], compiled });
  const definitions = plan.sources.map((source) => source.definition);
  // The config checks proved that the watch gives the rule's source; this only narrows the type.
  const condition = plan.sources[0]?.rules[0]?.condition;
  if (condition === undefined) throw new UsageError(`rule ${rule.name}: watch ${watch.name} has no ${family} source`);
  // A token watch has a source per token, its rule compiled in that token's units: a record is explained by the source that lists it.
  const ruleFor = (record: WatchedRecord) => (plan.sources.find((s) => outsideSource(s.definition, record) === undefined) ?? plan.sources[0])?.rules[0];
  const context = { family, watchedAccounts: watchedAccountsOf(watch) };

  const client = await openCommandClient(common, config);
  // Every line carries on-chain text somewhere (symbols, decoded values, revert messages): each
  // is made inert here as every sink makes it (bidi and control characters visible, invisible
  // ones removed), whatever part of explain built it.
  const out = (line: string) => io.stdout.write(`${sanitizeText(line, { singleLine: true })}\n`);
  const spentBefore = client.meter.spentToday();
  try {
    const { silences: stored, firing } = await storedHolds(common, config);
    // Every alert of the rule carries the same labels: which silences and inhibit rules may hold them, and whether a source fires now.
    const labels = alertLabels({ rule: rule.name, watch: rule.watch, source: family, ...(rule.severity === undefined ? {} : { severity: rule.severity }), ...(rule.labels === undefined ? {} : { labels: rule.labels }) });
    const silences = stored.filter((silence) => {
      const matchers = silenceMatchers(silence);
      return matchers !== undefined && (silence.rule === undefined || silence.rule === rule.name) && matches(matchers, labels);
    });
    const inhibition = inhibitionOf(config.inhibit_rules, firing, labels);
    const inhibitRules = config.inhibit_rules.filter((candidate) => matches(candidate.targetMatchers, labels));
    const found = await fetchTransactionRecords(client, {
      family,
      transactionHash: values.tx,
      block: values.block === undefined ? undefined : Number(values.block),
      pageSize: config.explorer.page_size,
      signal: io.signal,
    });
    out(`Rule ${rule.name}: watch ${watch.name} (${definitions.map(describeSource).join("; ")})`);
    out(`when: ${rule.when === undefined ? "(none: every record matches)" : JSON.stringify(rule.when)}`);
    // An absence rule counts what matches and alerts on what is missing: a match is good news.
    const absence = rule.expect;
    if (absence !== undefined) out(`expect: at least ${absence.at_least} matching ${absence.at_least === 1 ? "record" : "records"} within ${formatDuration(absence.within)} of block time; a match is counted, never sent (docs/absence.md)`);
    // The rules that would hold its alerts while a source fires, so a missing alert has its explanation here.
    for (const candidate of inhibitRules) out(`inhibited by ${describeInhibitRule(candidate)}${inhibition?.rule === candidate ? "" : " (no such source fires now)"}`);
    const noun = family.replace(/_/g, " ");
    out(`Transaction ${values.tx.toLowerCase()}${found.block === undefined ? "" : ` in block ${found.block}`}: ${found.records.length} ${noun} (via ${found.via.join(", ")})`);
    if (found.records.length === 0) {
      out(`No ${noun} in this transaction: the rule has nothing to match.`);
      return EXIT_OK;
    }
    let matched = 0;
    found.records.forEach((record, i) => {
      out("");
      out(`[${i + 1}] ${describeRecord(record)}`);
      const reasons = definitions.map((d) => outsideSource(d, record));
      const covered = reasons.some((reason) => reason === undefined);
      const explanation = explainRecord(ruleFor(record)?.condition ?? condition, record, context);
      // A token watch's source lists every transfer of the token; the rule sees the wallet's only.
      const transfer = tokenWallets !== undefined && record.family === "event_logs" ? decodeTokenTransfer(record.data) : undefined;
      const notTheWallets = tokenWallets !== undefined && (transfer === undefined || (!tokenWallets.has(transfer.from) && !tokenWallets.has(transfer.to)));
      const alerts = covered && !notTheWallets && explanation.matched;
      if (alerts) matched += 1;
      const silence = alerts ? silences.find((candidate) => silenceMatchesRecord(candidate, rule.name, record.data)) : undefined;
      const verdict = alerts
        ? absence !== undefined
          ? `✓ MATCH: counted toward at least ${absence.at_least} within ${formatDuration(absence.within)}`
          : `✓ MATCH: would alert ${rule.notify.join(", ")}`
        : !covered
          ? "✗ NO ALERT: the watch's query does not return this record"
          : notTheWallets
            ? `✗ NO ALERT: ${transfer === undefined ? "not a token Transfer" : `neither from nor to is ${watch.kind === "account" ? `the watched wallet ${watch.account.toLowerCase()}` : `one of the ${tokenWallets?.size} watched accounts`}`}`
            : "✗ NO MATCH";
      out(`    ${verdict}`);
      // The rule matches, but the daemon would hold the alert back: say so, or the user looks for the wrong fault.
      if (silence !== undefined) out(`    ✗ HELD BACK while silence ${silence.id} is active (until ${silence.expires_at}: ${cleanLine(silence.reason, 120)}); \`kaiawatch silence remove ${silence.id}\` ends it`);
      else if (alerts && inhibition !== undefined) out(`    ✗ HELD BACK by ${inhibition.rule.id} while ${inhibition.source.id} fires (${cleanLine(inhibition.source.summary ?? "", 120)}): recorded as inhibited, not sent`);
      if (!covered) for (const reason of new Set(reasons)) out(`    ✗ ${reason}`);
      for (const line of explanation.lines) out(`    ${"  ".repeat(line.depth)}${line.passed ? "✓" : "✗"} ${line.text}`);
    });
    out("");
    const credits = Math.max(0, client.meter.spentToday() - spentBefore);
    out(`${matched} of ${found.records.length} records ${absence === undefined ? "would alert" : "would be counted"}; ${credits} ${credits === 1 ? "credit" : "credits"} spent.`);
    return EXIT_OK;
  } catch (error) {
    if (!isKaiawatchError(error)) throw error;
    io.stderr.write(`kaiawatch explain: ${common.secrets.redact(describeError(error))}\n`);
    return EXIT_RUNTIME;
  } finally {
    await client.close();
  }
}

/**
 * What would hold an alert back now, as the store holds it: the silences in force (written by
 * `kaiawatch silence` and the daemons) and, with inhibit_rules, the alerts firing now.
 */
async function storedHolds(common: Common, config: Config): Promise<{ silences: Silence[]; firing: FiringSource[] }> {
  const backend = await openBackend(common, { ...storeOptionsOf(config.store), readOnly: true });
  try {
    const silences = (await backend.silences.active(common.now())).map(withoutCount);
    return { silences, firing: config.inhibit_rules.length === 0 ? [] : await readFiringSources(backend.store) };
  } finally {
    await backend.close();
  }
}

/** One line about a record: where it sits and what it moved (its family definition's). */
function describeRecord(record: WatchedRecord): string {
  return familyOf(record.family).describe(record, (value) => cleanLine(String(value ?? "(none)"), 80));
}
