import type { Common } from "../../common/common.js";
import { describeError, isKaiawatchError } from "../../common/errors.js";
import { createHeadReader } from "../../chain/head.js";
import { createJsonRpc } from "../../chain/json-rpc.js";
import { indexedHead } from "../../chain/indexed-head.js";
import { formatDuration, parseDuration, type Config } from "../../config/index.js";
import { paginateSource } from "../../daemon/paginate-source.js";
import { createNodePaginators } from "../../daemon/node-paginate.js";
import { isNodeOperation } from "../../watch/source.js";
import { createEnricher } from "../../rules/enrich.js";
import { NORMALIZERS } from "../../watch/normalize.js";
import { planFromConfig } from "../../watch/plan-from-config.js";
import { rpcOptionsOf } from "../../watch/rpc-options.js";
import { readConfigTokensOnce } from "../../watch/config-tokens.js";
import { estimateReplayCredits, outboxEntriesOf, replay, type ReplayMatch, type ReplayResult } from "../../watch/replay.js";
import { CONFIG_OPTIONS, CONFIG_OPTIONS_HELP, UsageError, parseCommandArgs, ruleNamed, startConfigCommand } from "../bootstrap.js";
import { openReplayTarget, type ReplayTarget } from "./replay-target.js";
import { matchPrinter } from "./replay-print.js";
import { describeApiFailure, type DaemonApi } from "../daemon-api.js";
import { EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, type Command, type CommandIO } from "../command.js";
import { commandProgress } from "../command-progress.js";

/** Without a daily budget, a replay estimated above this many credits asks for --yes. */
export const REPLAY_CONFIRM_CREDITS = 1000;

const HELP = `Usage: kaiawatch replay --rule NAME --from BLOCK|-N [--to BLOCK] [--send] [--yes] [options]

Runs one rule over past blocks exactly as the daemon would (the same windows, paging,
deduplication and compiled rule) and prints every match as each of the rule's sinks would
render it: the Slack text, the email subject and body, the webhook JSON. Then a summary:
records scanned, matches, credits spent.

Nothing is sent and no cursor moves, so this is safe while the daemon runs. With --send the
matches are queued in the outbox and delivered at once (through cooldowns, digests and
silences, like the daemon's alerts); alerts already in the outbox, delivered or not, are
not queued again. While a daemon runs (it holds the store's lock), --send hands the
matches to it through its status API (status.listen, with status.token or the daemon's
token in status.write_token_file: run it as the daemon's user).

An absence rule (expect:) alerts on records that did not arrive, in the daemon's block
time: replay prints the records it counts, and refuses --send (docs/absence.md).

While it runs, its progress (blocks done of the range, rate, time left) is a line on stderr
when that is a terminal, else an info log line every few seconds.

Credits are estimated before anything is fetched (at least one page per window). A replay
estimated above what is left of explorer.daily_credit_budget today, or above
${REPLAY_CONFIRM_CREDITS} credits when no budget is set, asks for --yes.

Options:
  --rule NAME              the rule to replay (required)
  --from BLOCK|-N          first block, or -N: the last N blocks up to the head the
                           explorer has indexed (required)
  --to BLOCK               last block, at most that head (default: that head, the chain
                           head minus chain.lag_blocks)
  --send                   queue the matches in the outbox and deliver them
  --yes                    go ahead although the estimate is over the budget or threshold
  --json                   one JSON object per match and a summary object, one per line
  --drain-timeout DURATION with --send: how long to keep delivering (default 30s)
${CONFIG_OPTIONS_HELP}
`;

export const replayCommand: Command = { help: HELP, run };

function blockNumber(value: string, name: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new UsageError(`--${name} must be a block number, not "${value}"`);
  return Number(value);
}

/** `--from BLOCK`, or `--from -N`: the last N blocks, counted back from the head (read later). */
function fromOption(value: string): { block: number } | { last: number } {
  if (!value.startsWith("-")) return { block: blockNumber(value, "from") };
  const last = Number(value.slice(1));
  if (!/^-\d+$/.test(value) || !Number.isSafeInteger(last) || last === 0) throw new UsageError(`--from must be a block number or -N (the last N blocks, N at least 1), not "${value}"`);
  return { last };
}

async function run(args: string[], io: CommandIO): Promise<number> {
  const { values } = parseCommandArgs(args, {
    ...CONFIG_OPTIONS,
    rule: { type: "string" },
    from: { type: "string" },
    to: { type: "string" },
    send: { type: "boolean", default: false },
    yes: { type: "boolean", default: false },
    json: { type: "boolean", default: false },
    "drain-timeout": { type: "string", default: "30s" },
  });
  if (values.rule === undefined) throw new UsageError("--rule NAME is required");
  if (values.from === undefined) throw new UsageError("--from BLOCK (or -N, the last N blocks) is required");
  const start = fromOption(values.from);
  const end = values.to === undefined ? undefined : blockNumber(values.to, "to");
  if ("block" in start && end !== undefined && start.block > end) throw new UsageError(`--from ${start.block} is after --to ${end}`);
  let drainTimeoutMs: number;
  try {
    drainTimeoutMs = parseDuration(values["drain-timeout"]);
  } catch (error) {
    throw new UsageError(`--drain-timeout: ${(error as Error).message}`);
  }
  const loaded = await startConfigCommand(io, values);
  if (typeof loaded === "number") return loaded;
  const { config, common } = loaded;
  const rule = ruleNamed(config, values.rule);
  // Its alerts are decided in block time over what the daemon observed (docs/absence.md), not per record.
  if (rule.expect !== undefined && values.send) throw new UsageError(`rule ${rule.name} is an absence rule (expect): replay lists the records it counts, and --send has nothing to send`);
  const fail = (error: unknown): number => {
    io.stderr.write(`kaiawatch replay: ${common.secrets.redact(describeError(error))}\n`);
    return EXIT_RUNTIME;
  };

  let target: ReplayTarget | number;
  try {
    target = await openReplayTarget(common, loaded, values.send, io);
  } catch (error) {
    if (isKaiawatchError(error)) return fail(error);
    throw error;
  }
  if (typeof target === "number") return target;
  const { daemon, runningDaemon, client } = target;

  try {
    const compiled = await readConfigTokensOnce(common, config, loaded.compiled);
    const plan = planFromConfig(config, { rules: [rule], compiled });

    const head = await readIndexedHead(common, config);
    const to = end ?? head;
    if (to > head) throw new UsageError(`--to ${to} is past the head the explorer has indexed (${head}: the chain head minus chain.lag_blocks ${config.chain.lag_blocks})`);
    // -N as a new source's `start: "-N"`: the N blocks that end at the head.
    const from = "block" in start ? start.block : Math.max(0, head - start.last + 1);
    if (from > to) throw new UsageError(`--from ${from} (${values.from}) is after --to ${to}`);

    const span = { from, to };
    const estimate = estimateReplayCredits(plan.sources, span);
    const budget = client.meter.dailyBudget;
    const allowed = budget === undefined ? REPLAY_CONFIRM_CREDITS : client.meter.remainingToday();
    const out = (line: string) => {
      if (!values.json) io.stdout.write(`${line}\n`);
    };
    out(`Replaying rule ${rule.name} over blocks ${from}–${to} (${to - from + 1} blocks): ${plan.sources.map((s) => s.description).join("; ")}`);
    out(`Estimate: at least ${estimate.credits} credits (${estimate.windows} ${estimate.windows === 1 ? "request" : "requests"} of one page each; dense windows take more${rule.enrich.length > 0 ? "; enrichment lookups come on top" : ""}).`);
    if (estimate.credits > allowed && !values.yes) {
      const limit = budget === undefined ? `the ${REPLAY_CONFIRM_CREDITS}-credit threshold for a replay without a daily budget` : `the ${allowed} credits left today of the daily budget of ${budget}`;
      io.stderr.write(`kaiawatch replay: the estimate (at least ${estimate.credits} credits) is over ${limit}. Nothing was fetched. Run again with --yes to go ahead, or replay a shorter range.\n`);
      return EXIT_USAGE;
    }
    if (rule.expect !== undefined) out(`Note: rule ${rule.name} is an absence rule (at least ${rule.expect.at_least} within ${formatDuration(rule.expect.within)}): the matches below are the records it counts; the daemon alerts when too few arrive.`);
    if (rule.group) out(`Note: rule ${rule.name} groups its alerts (group.window ${formatDuration(rule.group.window)}): the daemon sends digests; each match is shown alone here.`);

    const spentBefore = client.meter.spentToday();
    const print = matchPrinter(config, values.json, io, out);

    let result: ReplayResult;
    // A transactions rule reads the node, as the daemon does.
    const nodeRpc = plan.sources.some((s) => isNodeOperation(s.definition.operation)) ? createJsonRpc(common, rpcOptionsOf(config)) : undefined;
    const nodePaginate = nodeRpc === undefined ? undefined : createNodePaginators(common, config, nodeRpc);
    try {
      result = await replay({
        sources: plan.sources,
        paginate: (source) =>
          nodePaginate !== undefined && isNodeOperation(source.definition.operation) ? nodePaginate(source) : paginateSource(client, source.definition, config.explorer.page_size),
        normalize: (source) => NORMALIZERS[source.family],
        pageSize: config.explorer.page_size,
        from,
        to,
        // The daemon's enrichment, so that messages show what it would add (its lookups cost credits too).
        enrich: rule.enrich.length > 0 ? createEnricher(common, { client }).enrich : undefined,
        onMatch: print,
        progress: commandProgress(common, io, values["log-level"] !== undefined),
        now: common.now,
        signal: io.signal,
      });
    } catch (error) {
      if (isKaiawatchError(error)) return fail(error);
      throw error;
    } finally {
      await nodeRpc?.close();
    }
    const spentAfter = client.meter.spentToday();
    const credits = spentAfter >= spentBefore ? spentAfter - spentBefore : spentAfter;
    const summary: Record<string, unknown> = {
      type: "summary",
      rule: rule.name,
      from,
      to,
      sources: plan.sources.length,
      windows: result.windows,
      pages: result.pages,
      records: result.records,
      matches: result.matches.length,
      credits,
      estimate: estimate.credits,
      sent: values.send,
    };
    out("");
    out(`Scanned ${result.records} records (${result.pages} pages in ${result.windows} windows); ${result.matches.length} matches; ${credits} credits spent.`);
    if (result.duplicates + result.outside > 0) out(`The explorer repeated ${result.duplicates} records and returned ${result.outside} outside the range; dropped, as the daemon drops them.`);

    if (daemon) {
      const now = new Date(common.now());
      const entries = outboxEntriesOf(result.matches, now);
      const { added } = await daemon.store.enqueue(entries);
      const delivery = await daemon.dispatcher.drain({ timeoutMs: drainTimeoutMs });
      Object.assign(summary, { queued: added, already_queued: entries.length - added, delivery });
      out(`Queued ${added} of ${entries.length} alerts (${entries.length - added} were already in the outbox).`);
      out(`Delivered ${delivery.delivered}, suppressed ${delivery.suppressed}, retrying ${delivery.retried}, dead ${delivery.dead}, still pending ${delivery.pending}.`);
    } else if (runningDaemon !== undefined) {
      const queued = await queueThroughDaemon(runningDaemon, result.matches, io.signal);
      if (!queued.ok) {
        io.stderr.write(`kaiawatch replay: ${common.secrets.redact(queued.error)}\n`);
        return EXIT_RUNTIME;
      }
      Object.assign(summary, { queued: queued.queued, already_queued: queued.already_queued, daemon: runningDaemon.url });
      out(`Queued ${queued.queued} of ${queued.queued + queued.already_queued} alerts in the running daemon (${runningDaemon.url}), which sends them now (${queued.already_queued} were already in the outbox).`);
      if (credits > 0) out(`These ${credits} credits are not in the daemon's meter for today; it counts only its own.`);
    } else {
      out("Nothing was sent and no cursor moved (--send queues these alerts for delivery).");
      if (budget !== undefined && credits > 0) out(`These ${credits} credits are not in the daemon's saved meter for today; it counts only its own.`);
    }
    if (values.json) io.stdout.write(`${JSON.stringify(summary)}\n`);
    return EXIT_OK;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    if (isKaiawatchError(error)) return fail(error);
    throw error;
  } finally {
    if (daemon) await daemon.stop();
    else await client.close();
  }
}

/** Hands the matches to the running daemon (POST /api/alerts), which queues them as --send would with the store. */
async function queueThroughDaemon(api: DaemonApi, matches: readonly ReplayMatch[], signal: AbortSignal): Promise<{ ok: true; queued: number; already_queued: number } | { ok: false; error: string }> {
  if (matches.length === 0) return { ok: true, queued: 0, already_queued: 0 };
  let outcome: { status: number; body: Record<string, unknown> } | Error;
  try {
    outcome = await api.post("/api/alerts", { alerts: matches.map((m) => ({ alert: m.alert, sinks: m.rule.notify })) }, signal);
  } catch (error) {
    outcome = error instanceof Error ? error : new Error(String(error));
  }
  if (outcome instanceof Error || outcome.status !== 200) return { ok: false, error: `the store is held by a running daemon, and ${describeApiFailure(api, outcome)}` };
  return { ok: true, queued: Number(outcome.body.queued ?? 0), already_queued: Number(outcome.body.already_queued ?? 0) };
}

/**
 * The head the explorer has indexed (see indexedHead), read once with a reader of its own,
 * on a JSON-RPC client built as the daemon's (rate limited by chain.requests_per_second).
 */
export async function readIndexedHead(common: Common, config: Config): Promise<number> {
  const rpc = createJsonRpc(common, rpcOptionsOf(config));
  const head = createHeadReader(common, { rpcUrl: config.chain.rpc_url, rpc });
  try {
    return indexedHead(await head.blockNumber(common.signal), config.chain.lag_blocks);
  } finally {
    await head.close();
    await rpc.close();
  }
}
