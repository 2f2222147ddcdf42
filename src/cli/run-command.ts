import type { Common } from "../common/common.js";
import { describeError, isKaiawatchError } from "../common/errors.js";
import { describeConfigFailure, locateConfigIssues, type CompiledConfig, type Config } from "../config/index.js";
import { TokenConfigError } from "../watch/config-tokens.js";
import { createDaemon, type Daemon, type DaemonOptions } from "../daemon/create-daemon.js";
import { EXIT_RUNTIME, EXIT_USAGE, type CommandIO } from "./command.js";
import type { ParseArgsConfig } from "node:util";
import { CONFIG_OPTIONS, UsageError, createCommandCommon, loadConfigForCommand, parseCommandArgs } from "./bootstrap.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

export interface DaemonContext {
  daemon: Daemon;
  common: Common;
  config: Config;
  /** The command's own flags, parsed. */
  values: Record<string, string | boolean | (string | boolean)[] | undefined>;
}

/**
 * The part `run` and `once` share: flags, config, common, daemon; then the command's body.
 * User mistakes and start-up failures (a locked or corrupt store) are one line, not a stack trace.
 */
export async function withDaemon(args: string[], io: CommandIO, options: Options, body: (context: DaemonContext) => Promise<number>, extra?: (common: Common, values: DaemonContext["values"]) => Partial<DaemonOptions>): Promise<number> {
  let common: Common;
  let config: Config;
  let compiled: CompiledConfig;
  let values: DaemonContext["values"];
  try {
    values = parseCommandArgs(args, { ...options, ...CONFIG_OPTIONS }).values;
    const loaded = await loadConfigForCommand(io, values.config as string);
    if (typeof loaded === "number") return loaded;
    ({ config, compiled } = loaded);
    common = createCommandCommon(io, { config, secrets: loaded.secrets, logLevel: values["log-level"] as string | undefined, logFormat: values["log-format"] as string | undefined });
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`kaiawatch: ${error.message}\n`);
      return EXIT_USAGE;
    }
    throw error;
  }
  let daemon: Daemon;
  try {
    daemon = await createDaemon(common, { ...extra?.(common, values), config, compiled });
  } catch (error) {
    // The tokens' problems at their lines, as validate prints them.
    if (error instanceof TokenConfigError) {
      io.stderr.write(describeConfigFailure(await locateConfigIssues(values.config as string, error.issues)) ?? "");
      return EXIT_USAGE;
    }
    if (!isKaiawatchError(error)) throw error;
    io.stderr.write(`kaiawatch: ${describeError(error)}\n`);
    return error.code === "KW_CONFIG_INVALID" || error.code === "KW_NOTIFY_CONFIG" ? EXIT_USAGE : EXIT_RUNTIME;
  }
  return body({ daemon, common, config, values });
}
