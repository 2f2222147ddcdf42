import type { Common } from "../common/common.js";
import { describeError, isKaiawatchError } from "../common/errors.js";
import type { Config } from "../config/index.js";
import { createDaemon, type Daemon } from "../daemon/create-daemon.js";
import { EXIT_RUNTIME, EXIT_USAGE, type CommandIO } from "./command.js";
import { CONFIG_OPTIONS, UsageError, createCommandCommon, loadConfigForCommand, parseCommandArgs } from "./bootstrap.js";

/**
 * The part `run` and `once` share: flags, config, common, daemon; then the command's body.
 * User mistakes and start-up failures (a locked or corrupt store) are one line, not a stack trace.
 */
export async function withDaemon(args: string[], io: CommandIO, body: (daemon: Daemon, common: Common, config: Config) => Promise<number>): Promise<number> {
  let common: Common;
  let config: Config;
  try {
    const { values } = parseCommandArgs(args, CONFIG_OPTIONS);
    const loaded = loadConfigForCommand(io, values.config);
    if (typeof loaded === "number") return loaded;
    config = loaded.config;
    common = createCommandCommon(io, { config, secrets: loaded.secrets, logLevel: values["log-level"], logFormat: values["log-format"] });
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`kaiawatch: ${error.message}\n`);
      return EXIT_USAGE;
    }
    throw error;
  }
  let daemon: Daemon;
  try {
    daemon = await createDaemon(common, { config });
  } catch (error) {
    if (!isKaiawatchError(error)) throw error;
    io.stderr.write(`kaiawatch: ${describeError(error)}\n`);
    return error.code === "KW_CONFIG_INVALID" || error.code === "KW_NOTIFY_CONFIG" ? EXIT_USAGE : EXIT_RUNTIME;
  }
  return body(daemon, common, config);
}
