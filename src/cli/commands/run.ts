import type { Command, CommandIO } from "../command.js";
import { EXIT_OK, EXIT_RUNTIME } from "../command.js";
import { CONFIG_OPTIONS_HELP } from "../bootstrap.js";
import { withDaemon } from "../run-command.js";
import type { Common } from "../../common/common.js";
import { describeError } from "../../common/errors.js";
import { ConfigError, loadConfig, type Config } from "../../config/index.js";
import { CONFIG_CHECKS } from "../../daemon/config-checks.js";
import { createDaemon, type Daemon } from "../../daemon/create-daemon.js";

/** How long a stop may take before the process exits anyway: a service manager waits for us. */
const STOP_TIMEOUT_MS = 15_000;

/** Resolves with "stop" on SIGINT/SIGTERM or "reload" on SIGHUP, whichever comes first. */
function nextEvent(io: CommandIO): Promise<"stop" | "reload"> {
  if (io.signal.aborted) return Promise.resolve("stop");
  return new Promise((resolve) => {
    const onAbort = () => finish("stop");
    const unsubscribe = io.onReload?.(() => finish("reload"));
    function finish(event: "stop" | "reload") {
      io.signal.removeEventListener("abort", onAbort);
      unsubscribe?.();
      resolve(event);
    }
    io.signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** The new config, or undefined (logged) when it must not replace the running one. */
async function readNewConfig(common: Common, path: string, env: NodeJS.ProcessEnv): Promise<Config | undefined> {
  try {
    const loaded = await loadConfig({ path, env, checks: CONFIG_CHECKS });
    for (const secret of loaded.secrets) common.secrets.add(secret);
    return loaded.config;
  } catch (error) {
    // The refused file's secrets are not the running config's: the scrubber learns them
    // before anything about the refusal is logged.
    if (error instanceof ConfigError) for (const secret of error.secrets) common.secrets.add(secret);
    const problems = error instanceof ConfigError ? error.issues.map((i) => `${i.file}:${i.line}:${i.column} ${i.path}: ${i.message}`) : [describeError(error)];
    common.logger.error({ problems }, "reload refused: the new config has errors; the running config stays");
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
  const config = await readNewConfig(common, path, env);
  if (!config) return running;
  await running.stop();
  try {
    const next = await createDaemon(common, { config });
    await next.start().catch(async (error: unknown) => {
      await next.stop();
      throw error;
    });
    common.logger.info({ sources: next.plan.sources.length }, "config reloaded");
    return next;
  } catch (error) {
    // E.g. a new store path that another process holds: go back to what worked.
    common.logger.error({ err: describeError(error) }, "reload failed at start-up; going back to the previous config");
    const previous = await createDaemon(common, { config: running.config });
    await previous.start();
    return previous;
  }
}

export const runCommand: Command = {
  name: "run",
  summary: "run the daemon: poll every source on its schedule and deliver alerts",
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

Options:
${CONFIG_OPTIONS_HELP}
`,
  run: (args, io) =>
    withDaemon(args, io, {}, async ({ daemon: first, common, values }) => {
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
      while ((await nextEvent(io)) === "reload") {
        common.logger.info("reloading the config");
        daemon = await reload(common, daemon, String(values.config), io.env);
      }
      common.logger.info("stopping");
      const timer = setTimeout(() => {
        common.logger.error({ duration_ms: STOP_TIMEOUT_MS }, "stop took too long; exiting");
        process.exit(1);
      }, STOP_TIMEOUT_MS);
      timer.unref();
      await daemon.stop();
      clearTimeout(timer);
      common.logger.info("stopped");
      return EXIT_OK;
    }),
};
