import type { Command, CommandIO } from "../command.js";
import { EXIT_OK, EXIT_RUNTIME } from "../command.js";
import { CONFIG_OPTIONS_HELP } from "../bootstrap.js";
import { withDaemon } from "../run-command.js";
import { explorerLinkWarning } from "../../config/link-warning.js";
import type { Common } from "../../common/common.js";
import { describeError, errorCode } from "../../common/errors.js";
import { ConfigError, formatIssue, loadConfig, type Config, type LoadedConfig } from "../../config/index.js";
import { CONFIG_CHECKS } from "../../daemon/config-checks.js";
import { createDaemon, type Daemon } from "../../daemon/create-daemon.js";
import type { ExplorerPlanError } from "../../explorer/errors.js";

/** How long a stop may take before the process exits anyway: a service manager waits for us. */
const STOP_TIMEOUT_MS = 15_000;

type RunEvent = "stop" | "reload" | { refused: ExplorerPlanError };

/**
 * Resolves with "stop" on SIGINT/SIGTERM, "reload" on SIGHUP, or the refusal of an operation
 * by the key's plan when the planner can do without it (explorer.api_plan says PRO_PLUS),
 * whichever comes first.
 */
function nextEvent(io: CommandIO, daemon: Daemon): Promise<RunEvent> {
  if (io.signal.aborted) return Promise.resolve("stop");
  return new Promise((resolve) => {
    const onAbort = () => finish("stop");
    const unsubscribe = io.onReload?.(() => finish("reload"));
    let done = false;
    function finish(event: RunEvent) {
      if (done) return;
      done = true;
      io.signal.removeEventListener("abort", onAbort);
      unsubscribe?.();
      resolve(event);
    }
    io.signal.addEventListener("abort", onAbort, { once: true });
    if (daemon.config.explorer.api_plan === "PRO_PLUS") void daemon.planRefused.then((refused) => finish({ refused }));
  });
}

/**
 * The key's plan refused an operation (a FREE key, operation 7): plan again as on FREE, so
 * the watches read their internal transactions through operation 8 (block by block, 1
 * credit each). Sources whose definition changes resume from their watches' positions, so
 * no block is skipped. The config on disk is not changed: the error says what to set.
 */
async function replanWithoutRefused(common: Common, running: Daemon, refused: ExplorerPlanError): Promise<Daemon> {
  // api_plan is not part of the compile: the running one serves.
  const config: Config = { ...running.config, explorer: { ...running.config.explorer, api_plan: "FREE" } };
  common.logger.error(
    { code: refused.code, err: describeError(refused), api_plan: running.config.explorer.api_plan },
    `the key's plan does not include ${refused.operation ?? "an operation"} (it needs ${refused.needs}): planning again as on FREE, so its watches read through operations the plan has; set explorer.api_plan: FREE to plan so from the start, or upgrade the key`,
  );
  const next = await restartWith(common, running, { config, compiled: running.compiled });
  if (next.started) common.logger.info({ sources: next.daemon.plan.sources.length }, "planned again without the refused operation");
  return next.daemon;
}

/** The new config and its compile, or undefined (logged) when it must not replace the running one. */
async function readNewConfig(common: Common, path: string, env: NodeJS.ProcessEnv): Promise<LoadedConfig | undefined> {
  try {
    const loaded = await loadConfig({ path, env, checks: CONFIG_CHECKS });
    for (const secret of loaded.secrets) common.secrets.add(secret);
    return loaded;
  } catch (error) {
    // The refused file's secrets are not the running config's: the scrubber learns them
    // before anything about the refusal is logged.
    if (error instanceof ConfigError) for (const secret of error.secrets) common.secrets.add(secret);
    const problems = error instanceof ConfigError ? error.issues.map(formatIssue) : [describeError(error)];
    common.logger.error({ code: error instanceof ConfigError ? error.code : errorCode(error, "KW_CONFIG_INVALID"), problems }, "reload refused: the new config has errors; the running config stays");
    return undefined;
  }
}

/**
 * SIGHUP: the new config is checked first and refused whole if anything is wrong. Then
 * the running daemon stops as on SIGTERM and a new one starts on the same store: sources
 * whose definition did not change keep their cursors (a source's key is the hash of its
 * definition), new ones begin at their `start`.
 */
async function reload(common: Common, running: Daemon, path: string, env: NodeJS.ProcessEnv): Promise<Daemon> {
  const loaded = await readNewConfig(common, path, env);
  if (!loaded) return running;
  const next = await restartWith(common, running, loaded);
  if (next.started) common.logger.info({ sources: next.daemon.plan.sources.length }, "config reloaded");
  return next.daemon;
}

/** Stops the running daemon and starts one on `config` (the same store); back to the previous config if that fails. */
async function restartWith(common: Common, running: Daemon, { config, compiled }: Pick<LoadedConfig, "config" | "compiled">): Promise<{ daemon: Daemon; started: boolean }> {
  await running.stop();
  try {
    const next = await createDaemon(common, { config, compiled });
    await next.start().catch(async (error: unknown) => {
      await next.stop();
      throw error;
    });
    return { daemon: next, started: true };
  } catch (error) {
    // E.g. a new store path that another process holds: go back to what worked.
    common.logger.error({ code: errorCode(error), err: describeError(error) }, "reload failed at start-up; going back to the previous config");
    const previous = await createDaemon(common, { config: running.config, compiled: running.compiled });
    await previous.start();
    return { daemon: previous, started: false };
  }
}

export const runCommand: Command = {
  help: `Usage: kaiawatch run [options]

Runs until SIGINT or SIGTERM: every source is polled once at start, then on its
schedule (with schedule "head": whenever the chain head passes its cursor, read every
chain.head_interval); matches become alerts in the store's outbox, and the dispatcher delivers
them to their sinks. On a signal, new ticks stop, the store write in flight
finishes, and the process exits 0 (within ${STOP_TIMEOUT_MS / 1000} s). A tick that runs
past defaults.tick_timeout, or a request past explorer.request_deadline, is ended and
logged; the next tick goes on from the cursor.

SIGHUP reloads the config file. A config with errors is refused (they are logged) and
the running one stays; otherwise sources whose definition is unchanged keep their
cursors and new sources begin at their \`start\`.

With explorer.api_plan: PRO_PLUS, an operation the key's plan refuses (HTTP 403) is
logged as an error naming the plan, and the sources are planned again as on FREE
(operation 7's watches read through operation 8), from their watches' positions.

Options:
${CONFIG_OPTIONS_HELP}
`,
  run: (args, io) =>
    withDaemon(args, io, {}, async ({ daemon: first, common, values }) => {
      // Said by `run` (and `validate`), where an operator reads the start-up lines; not by every command that scans.
      const linkWarning = explorerLinkWarning(first.config);
      if (linkWarning !== undefined) common.logger.warn({ explorer_url: first.config.chain.explorer_url }, linkWarning);
      let daemon = first;
      try {
        await daemon.start();
      } catch (error) {
        // E.g. the status port is in use: one line, exit 1, nothing left running.
        await daemon.stop();
        io.stderr.write(`kaiawatch: ${describeError(error)}\n`);
        return EXIT_RUNTIME;
      }
      common.logger.info({ sources: daemon.plan.sources.length, store: daemon.store.path }, "kaiawatch running");
      for (let event = await nextEvent(io, daemon); event !== "stop"; event = await nextEvent(io, daemon)) {
        if (event === "reload") {
          common.logger.info("reloading the config");
          daemon = await reload(common, daemon, String(values.config), io.env);
        } else daemon = await replanWithoutRefused(common, daemon, event.refused);
      }
      common.logger.info("stopping");
      const timer = setTimeout(() => {
        common.logger.error({ code: "KW_STOP_TIMEOUT", duration_ms: STOP_TIMEOUT_MS }, "stop took too long; exiting");
        process.exit(1);
      }, STOP_TIMEOUT_MS);
      timer.unref();
      await daemon.stop();
      clearTimeout(timer);
      common.logger.info("stopped");
      return EXIT_OK;
    }),
};
