import { explorerLinkWarning } from "../../config/link-warning.js";
import { EXIT_OK, EXIT_USAGE, type Command, type CommandIO } from "../command.js";
import { describeConfigFailure, formatDuration, loadConfig, locateConfigIssues, sourcesOfWatch, type Config, type LoadedConfig, type WatchConfig } from "../../config/index.js";
import { describeError } from "../../common/errors.js";
import { readConfigTokensOnce, TokenConfigError } from "../../watch/config-tokens.js";
import { CONFIG_OPTIONS, createCommandCommon, parseCommandArgs } from "../bootstrap.js";
import type { StartPosition } from "../../model/start-position.js";
import { CONFIG_CHECKS } from "../../daemon/config-checks.js";
import { definitionsOfWatch } from "../../watch/plan.js";
import { planFromConfig } from "../../watch/plan-from-config.js";
import { isNodeLogOperation, isNodeOperation, sourceKey } from "../../watch/source.js";
import { watchesOf, type PlannedSource } from "../../watch/poller.js";
import { redactUrl } from "../../common/url-secrets.js";
import type { Route } from "../../notify/routes.js";

const HELP = `Usage: kaiawatch validate [-c|--config PATH]

Checks a config file: YAML syntax, every key and value, \${VAR} references (read from
the environment), the references between watches, rules and sinks, rule conditions and
templates, and each sink's options. Where a watch names tokens, it reads their decimals
and symbols at chain.rpc_url (the one thing it contacts) and checks them as run does: a
contract that is not a token, an amount in a unit the token does not have. Prints every
problem with its line, column and key path and exits 2, or prints a summary of what
would run and exits 0 (with a warning when the node cannot be reached: the tokens are
then checked when kaiawatch starts). A file over 8 MiB, or nested more than 64 levels, is refused
before it is checked. Values under secret keys (api_key, token, url, secret, headers,
user, pass, bot_token, routing_key) and the secret parts of URLs (user info, query values,
and path segments: every one but names such as v2 in an endpoint's URL, key-like ones
in any other) are shown as [redacted] in every message and in the summary.

Options:
  -c, --config PATH   the config file (default ./config.yaml)
`;

function describeStart(start: StartPosition): string {
  if (start.kind === "latest") return "latest";
  if (start.kind === "block") return `block ${start.block}`;
  return `${start.blocks} blocks before the head`;
}

/** "3 accounts: 0x…, 0x…, 0x…"; past five, the first three and how many more. */
function listed(addresses: readonly string[], noun: string): string {
  const shown = addresses.length > 5 ? [...addresses.slice(0, 3), `and ${(addresses.length - 3).toLocaleString("en-US")} more`] : addresses;
  return `${addresses.length.toLocaleString("en-US")} ${noun}: ${shown.join(", ")}`;
}

function describeTarget(watch: WatchConfig): string {
  switch (watch.kind) {
    case "account":
      return `account ${watch.account}${watch.nft_contract ? ` (NFTs of ${watch.nft_contract})` : ""}`;
    case "collection":
      return `collection ${watch.collection}${watch.token_id ? ` token ${watch.token_id}` : ""}`;
    case "balance":
      return `balances of ${watch.balance.join(", ")}${watch.tokens.length > 0 ? ` and ${watch.tokens.length} tokens` : ""}`;
    case "contract":
      return `contract ${watch.contract}`;
    case "accounts":
      return `${listed(watch.accounts, "accounts")}${watch.nft_contract ? ` (NFTs of ${watch.nft_contract})` : ""}`;
    case "contracts":
      return listed(watch.contracts, "contracts");
    case "every_block":
      return "every block";
  }
}

/** One line per source the watch polls: a contract watch has one per event filter. */
function describeSources(watch: WatchConfig): string[] {
  // A list watch has no sources of its own: its lines are its shares of the node's (below).
  if (watch.kind === "accounts" || watch.kind === "contracts") return [];
  if (watch.kind === "contract" && watch.events.length > 0) return watch.events.map((event) => `event_logs ${event}`);
  if (watch.kind === "contract") return ["event_logs (every event)"];
  return sourcesOfWatch(watch);
}

function table(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => `  ${row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join("  ")}`.trimEnd());
}

/** What will run, without any secret (sink URLs and tokens are credentials). */
export function summarize(file: string, config: Config): string {
  const lines: string[] = [];
  // Only what the daemon will poll: a source no rule reads costs nothing and is not counted.
  const plan = planFromConfig(config, { compile: false });
  const polled = new Set(plan.sources.map((source) => source.key));
  const sourceCount = polled.size;
  const nodeMembers = new Set(plan.sources.filter((s) => s.definition.operation === "blockTransactions").flatMap((s) => (s.members ?? []).map((m) => m.watch)));
  // Indexed once, not searched per watch: 100,000 watches list in linear time.
  // Which watches each source polls for under its own key; the explorer source that serves a (watch, own key) shared;
  // the node's shared sources a watch has a share of: the log queries, and the traces (its transactions are said apart).
  const pollsFor = new Map(plan.sources.map((s) => [s.key, new Set(watchesOf(s))]));
  const sharedBy = new Map<string, PlannedSource>();
  const nodeReaders = new Map<string, PlannedSource[]>();
  for (const source of plan.sources) {
    const node = isNodeOperation(source.definition.operation);
    for (const member of source.members ?? []) {
      if (!node) sharedBy.set(`${member.watch}\u0000${member.ownKey}`, source);
      else if (source.definition.operation !== "blockTransactions") {
        const list = nodeReaders.get(member.watch) ?? [];
        if (!list.includes(source)) list.push(source);
        nodeReaders.set(member.watch, list);
      }
    }
  }
  lines.push(`${file} is valid: network ${config.chain.network}, explorer ${redactUrl(config.explorer.base_url)}`);
  lines.push("");
  lines.push(`watches (${config.watches.length}, polling ${sourceCount} source${sourceCount === 1 ? "" : "s"}):`);
  const watchRows = table(config.watches.map((w) => [w.name, describeTarget(w)]));
  config.watches.forEach((watch, i) => {
    lines.push(watchRows[i] ?? "");
    lines.push(`      schedule "${watch.schedule}", start ${describeStart(watch.start)}, window ${watch.max_window_blocks} blocks`);
    const keys = definitionsOfWatch(config.chain.network, watch).map(sourceKey);
    let j = 0;
    for (const source of describeSources(watch)) {
      // Read from the node by the one transactions source, not by a source of the watch's own.
      if (source === "transactions") {
        const read = nodeMembers.has(watch.name);
        lines.push(`      source transactions (from the node, shared by every account watch)${read ? "" : "  (not read: no rule reads it)"}`);
        continue;
      }
      const key = keys[j++];
      // As `plan` says it: a watch's own source may be served by a source shared with other watches
      // (a source polled for other watches only is not this one's: a node-read watch's may be).
      const own = key === undefined || pollsFor.get(key)?.has(watch.name) === true;
      const servedBy = own ? undefined : sharedBy.get(`${watch.name}\u0000${key}`);
      const note = own ? "" : servedBy !== undefined ? `  (read through ${servedBy.key}: ${servedBy.description}, shared)` : watch.source === "node" ? "  (from the node instead, below)" : "  (not polled: no rule reads it)";
      lines.push(`      source ${source}${note}`);
    }
    // A node-read watch's share of the node's log query or traces (source: node or both).
    for (const reader of nodeReaders.get(watch.name) ?? []) {
      const cost = isNodeLogOperation(reader.definition.operation) ? "one eth_getLogs a window" : "one debug_traceBlockByNumber a block";
      lines.push(`      source ${watch.source}: ${reader.family} from the node (${reader.key}: ${reader.description}, ${cost})${watch.source === "both" ? ", and from the explorer as above" : ""}`);
    }
  });
  const linkWarning = explorerLinkWarning(config);
  if (linkWarning !== undefined) {
    lines.push("");
    lines.push(`warning: ${linkWarning}`);
  }
  if (!plan.rate.fits && plan.rate.steadyLimit !== undefined) {
    lines.push("");
    lines.push(
      `warning: the sources need ${plan.rate.requestsPerSecond.toFixed(2)} requests a second on average, more than ${plan.rate.steadyLimit.toFixed(2)} (half of explorer.requests_per_second, ${plan.rate.limit}; the rest is kept for catching up), and no choice of sources needs fewer: see \`kaiawatch plan\``,
    );
  }
  lines.push("");
  lines.push(`rules (${config.rules.length}):`);
  lines.push(
    ...table(
      config.rules.map((rule) => {
        const extras = [
          rule.expect ? `absence: at least ${rule.expect.at_least} within ${formatDuration(rule.expect.within)} of block time` : "",
          rule.group ? `group ${formatDuration(rule.group.window)}` : "",
          rule.cooldown !== undefined ? `cooldown ${formatDuration(rule.cooldown)}` : "",
          rule.enrich.length > 0 ? `enrich ${rule.enrich.join(", ")}` : "",
          rule.routed ? "by routes" : "",
        ].filter((e) => e !== "");
        return [rule.name, `${rule.watch}/${rule.source}`, `→ ${rule.notify.join(", ")}${extras.length > 0 ? `  (${extras.join("; ")})` : ""}`];
      }),
    ),
  );
  // A sink a route names may take operational alerts only: it is used.
  const used = new Set([...config.rules.flatMap((rule) => rule.notify), ...routeSinks(config.routes)]);
  const sinks = Object.values(config.sinks);
  lines.push("");
  lines.push(`sinks (${sinks.length}):`);
  lines.push(
    ...table(
      sinks.map((sink) => {
        const notes = [sink.operational ? "operational alerts" : "", used.has(sink.name) || sink.operational ? "" : "not used by any rule"].filter((n) => n !== "");
        const where = sink.type === "email" ? ` via ${sink.smtp.host}:${sink.smtp.port}` : sink.type === "file" ? ` ${sink.path}` : "";
        return [sink.name, `${sink.type}${where}`, notes.join("; ")];
      }),
    ),
  );
  return `${lines.join("\n")}\n`;
}

/** Every sink the routes tree names. */
function routeSinks(route: Route | undefined): string[] {
  return route === undefined ? [] : [...route.receivers, ...route.routes.flatMap(routeSinks)];
}

/**
 * The token watches' tokens read as run reads them, so that a config that validates is one
 * that starts: their problems thrown as a located ConfigError. Returns why they could not be
 * read (the node unreachable), or undefined.
 */
async function checkTokens(path: string, { config, compiled, secrets }: LoadedConfig, io: CommandIO): Promise<string | undefined> {
  if (!config.watches.some((watch) => (watch.kind === "account" || watch.kind === "accounts" || watch.kind === "balance") && watch.tokens.length > 0)) return undefined;
  const common = createCommandCommon(io, { config, secrets, logLevel: "fatal", logFormat: "json" });
  try {
    await readConfigTokensOnce(common, config, compiled, io.signal);
    return undefined;
  } catch (error) {
    if (error instanceof TokenConfigError) throw await locateConfigIssues(path, error.issues);
    return common.secrets.redact(describeError(error));
  }
}

async function run(args: string[], io: CommandIO): Promise<number> {
  // Only --config of the options other commands take: validate logs nothing.
  const parsed = parseCommandArgs(args, { config: CONFIG_OPTIONS.config }).values;
  try {
    // The same checks as run and once: a config that validates is a config that starts.
    const loaded = await loadConfig({ path: parsed.config, env: io.env, checks: CONFIG_CHECKS });
    const unchecked = await checkTokens(parsed.config, loaded, io);
    io.stdout.write(summarize(parsed.config, loaded.config));
    if (unchecked !== undefined) io.stderr.write(`kaiawatch validate: warning: the tokens were not checked: ${unchecked}; kaiawatch checks them when it starts\n`);
    return EXIT_OK;
  } catch (error) {
    const text = describeConfigFailure(error);
    if (text === undefined) throw error;
    io.stderr.write(text);
    return EXIT_USAGE;
  }
}

export const validateCommand: Command = { help: HELP, run };
