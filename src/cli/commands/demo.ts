import { once } from "node:events";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Common } from "../../common/common.js";
import { describeError } from "../../common/errors.js";
import type { Config } from "../../config/index.js";
import { describeConfigFailure } from "../../config/index.js";
import { createDaemon, type Daemon } from "../../daemon/create-daemon.js";
import { DEMO_CONFIG_PATH, loadDemoConfig } from "../../demo/demo-config.js";
import { demoTargets, startShowcase } from "../../demo/showcase.js";
import { startSmtpCatcher, type MailReceipt, type SmtpCatcher } from "../../demo/smtp-catcher.js";
import { startWebhookReceiver, type WebhookReceipt, type WebhookReceiver } from "../../demo/webhook-receiver.js";
import { cleanLine } from "../../common/sanitize-text.js";
import type { Sink } from "../../notify/sink.js";
import { createConsoleSink } from "../../notify/sinks/console.js";
import { createSimulator, type Simulator } from "../../simulator/index.js";
import { EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, type Command, type CommandIO } from "../command.js";
import { UsageError, createCommandCommon, parseCommandArgs } from "../bootstrap.js";

const STOP_TIMEOUT_MS = 15_000;
/** A showcase block (one record per rule) this often, on top of the chain's own activity. */
const SHOWCASE_INTERVAL_MS = 20_000;
/** Calmer than the simulator's default, so that a terminal stays readable. */
const DEMO_DENSITY = { eventLogs: 1, nftTransfers: 0.25, internalTransactions: 1.5 };

const HELP = `Usage: kaiawatch demo [options]

See kaiawatch work in seconds, with nothing to configure and no API key. The demo starts,
in one process:
  - a simulator of the KaiaScan explorer API over a synthetic chain (a block a second),
  - a webhook receiver that checks each request's Standard Webhooks signature,
  - a mail catcher (a local SMTP server),
  - the kaiawatch daemon with examples/demo.yaml: a treasury wallet's large outflows and
    failed calls, an NFT collection's transfers, and token transfers over a threshold,
    with its status page (open its address in a browser) and /healthz, /readyz, /metrics,
    /status on a free port.
Alerts appear in the terminal as they are delivered, with a line for every webhook and
mail received. Nothing leaves 127.0.0.1; the store is a temporary file removed on exit.
Stop with Ctrl-C.

Options:
  --seed N              seed of the synthetic chain (default 1)
  --log-level LEVEL     trace, debug, info, warn, error, fatal or silent (default warn)
  --log-format FORMAT   json or pretty (default pretty)
`;

const OPTIONS = {
  seed: { type: "string" },
  "log-level": { type: "string" },
  "log-format": { type: "string" },
} as const;

function watchTarget(watch: Config["watches"][number]): string {
  switch (watch.kind) {
    case "account":
      return `account ${watch.account} (${watch.sources.join(", ")})`;
    case "collection":
      return `collection ${watch.collection} (NFT transfers)`;
    case "balance":
      return `balances of ${watch.balance.join(", ")}${watch.tokens.length > 0 ? ` (KAIA and ${watch.tokens.length} tokens)` : " (KAIA)"}`;
    case "contract":
      return `contract ${watch.contract} (event logs${watch.events.length ? `: ${watch.events.join(", ")}` : ""})`;
    case "every_block":
      return "every block (internal transactions)";
    case "accounts":
      return `${watch.accounts.length} accounts (from the node)`;
    case "contracts":
      return `${watch.contracts.length} contracts (event logs, from the node)`;
  }
}

function banner(parts: { sim: Simulator; webhook: WebhookReceiver; smtp: SmtpCatcher; config: Config; storePath: string; statusUrl: string | undefined }): string {
  const { config } = parts;
  const width = Math.max(...config.watches.map((w) => w.name.length), ...config.rules.map((r) => r.name.length));
  return [
    "kaiawatch demo: a simulated Kaia chain, kaiawatch watching it, and local receivers for its alerts",
    "",
    `  simulator     ${parts.sim.url}  (explorer API under /api/v1, JSON-RPC; a new block every second)`,
    `  webhook       ${parts.webhook.url}  (checks the Standard Webhooks signature)`,
    `  mail catcher  smtp://${parts.smtp.host}:${parts.smtp.port}`,
    ...(parts.statusUrl === undefined
      ? ["  status        off (status.listen: false)"]
      : [`  status page   ${parts.statusUrl}/  (open it in a browser: sources, alerts and delivery, live)`, `  status        ${parts.statusUrl}/status  (the same as JSON; also /healthz, /readyz, /metrics)`]),
    `  store         ${parts.storePath}  (temporary, removed on exit)`,
    `  config        ${DEMO_CONFIG_PATH}`,
    "",
    "Watches:",
    ...config.watches.map((w) => `  ${w.name.padEnd(width)}  ${watchTarget(w)}`),
    "Rules:",
    ...config.rules.map((r) => `  ${r.name.padEnd(width)}  ${r.watch} ${r.source} → ${r.notify.join(", ")}`),
    "",
    "Alerts appear below as they are delivered: [kaiawatch] lines come from the console sink,",
    "[webhook] and [email] lines are what the local receivers got. Stop with Ctrl-C.",
    ...(parts.statusUrl === undefined ? [] : [`Or watch it all in a browser: the status page is at ${parts.statusUrl}/`]),
    "",
    "",
  ].join("\n");
}

function webhookLine(r: WebhookReceipt): string {
  const check = r.verified ? "signature ok" : "SIGNATURE INVALID (answered 401)";
  return `[webhook] ${cleanLine(r.rule, 60)} · ${cleanLine(r.id, 80)} · ${check}\n  ${cleanLine(r.summary, 200)}\n`;
}

function mailLine(m: MailReceipt): string {
  return `[email] to ${cleanLine(m.to.join(", "), 120)} · ${cleanLine(m.messageId, 120)}\n  Subject: ${cleanLine(m.subject, 200)}\n`;
}

/** The console sink writing to the command's stdout, counting what it shows. */
function countingConsole(common: Common, name: string, stdout: NodeJS.WritableStream, count: () => void): Sink {
  const inner = createConsoleSink(common, name, {}, stdout);
  return {
    name,
    type: inner.type,
    async send(delivery, signal) {
      await inner.send(delivery, signal);
      count();
    },
  };
}

export const demoCommand: Command = {
  help: HELP,
  async run(args: string[], io: CommandIO): Promise<number> {
    let seed = 1;
    let values: Record<string, string | boolean | undefined>;
    try {
      values = parseCommandArgs(args, OPTIONS).values;
      if (values.seed !== undefined) {
        seed = Number(values.seed);
        if (!/^-?[0-9]+$/.test(String(values.seed)) || !Number.isSafeInteger(seed)) throw new UsageError(`--seed must be an integer, not "${String(values.seed)}"`);
      }
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      io.stderr.write(`kaiawatch demo: ${error.message}\nRun \`kaiawatch demo --help\` for the options.\n`);
      return EXIT_USAGE;
    }
    if (io.signal.aborted) return EXIT_OK;

    const dir = mkdtempSync(join(tmpdir(), "kaiawatch-demo-"));
    const cleanups: Array<() => Promise<void>> = [async () => rmSync(dir, { recursive: true, force: true })];
    const counts = { alerts: 0, webhooks: 0, mails: 0 };
    let daemon: Daemon | undefined;
    try {
      // Frozen until the showcase sets it going (below), once the daemon is up.
      const sim = await createSimulator({ seed, blockTime: 0, initialBlocks: 20, density: DEMO_DENSITY });
      cleanups.push(() => sim.close());
      const secret = `whsec_${randomBytes(24).toString("base64")}`;
      const webhook = await startWebhookReceiver({
        secret,
        onDelivery: (receipt) => {
          counts.webhooks += 1;
          io.stdout.write(webhookLine(receipt));
        },
      });
      cleanups.push(() => webhook.close());
      const smtp = await startSmtpCatcher({
        onMail: (receipt) => {
          counts.mails += 1;
          io.stdout.write(mailLine(receipt));
        },
      });
      cleanups.push(() => smtp.close());

      const storePath = join(dir, "kaiawatch.db");
      let loaded;
      try {
        loaded = loadDemoConfig({
          simulatorUrl: sim.url,
          explorerUrl: sim.url,
          storePath,
          // Port 0: any free port, printed in the banner.
          statusListen: "127.0.0.1:0",
          startBlock: sim.head() + 1,
          ...demoTargets(sim.addresses),
          webhookUrl: webhook.url,
          webhookSecret: secret,
          smtpPort: smtp.port,
        });
      } catch (error) {
        // The demo config ships with kaiawatch: a failure here is a bug, but say what it is.
        const message = describeConfigFailure(error);
        if (message === undefined) throw error;
        io.stderr.write(`kaiawatch demo: the demo config is not valid:\n${message}`);
        return EXIT_RUNTIME;
      }
      const { config, compiled, secrets } = loaded;
      const common = createCommandCommon(io, {
        config,
        secrets,
        logLevel: values["log-level"] as string | undefined,
        logFormat: values["log-format"] as string | undefined,
      });
      const term = countingConsole(common, "term", io.stdout, () => (counts.alerts += 1));
      daemon = await createDaemon(common, { config, compiled, sinks: { term } });
      await daemon.start();
      io.stdout.write(banner({ sim, webhook, smtp, config, storePath, statusUrl: daemon.statusUrl() }));
      const showcase = startShowcase(sim, { intervalMs: SHOWCASE_INTERVAL_MS, blockTimeMs: 1000 });
      cleanups.push(async () => showcase.stop());

      if (!io.signal.aborted) await once(io.signal, "abort");
      io.stdout.write("\nkaiawatch demo: stopping…\n");
      showcase.stop();
      const timer = setTimeout(() => {
        io.stderr.write(`kaiawatch demo: stop took longer than ${STOP_TIMEOUT_MS / 1000} s; exiting\n`);
        process.exit(EXIT_RUNTIME);
      }, STOP_TIMEOUT_MS);
      timer.unref();
      await daemon.stop();
      daemon = undefined;
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
      clearTimeout(timer);
      io.stdout.write(`kaiawatch demo: stopped. ${counts.alerts} alerts shown, ${counts.webhooks} webhooks and ${counts.mails} mails received.\n`);
      return EXIT_OK;
    } catch (error) {
      io.stderr.write(`kaiawatch demo: ${describeError(error)}\n`);
      return EXIT_RUNTIME;
    } finally {
      await daemon?.stop().catch(() => undefined);
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    }
  },
};
