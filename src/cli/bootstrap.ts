import { parseArgs, type ParseArgsConfig } from "node:util";
import type { Common } from "../common/common.js";
import { createLogger } from "../common/logger.js";
import { createMetrics } from "../common/metrics.js";
import { setProcessWarningLogger } from "../common/process-warnings.js";
import { createSecretRedactor } from "../common/secrets.js";
import { describeConfigFailure, loadConfig, type Config, type LoadedConfig } from "../config/index.js";
import { didYouMean } from "../config/suggest.js";
import { CONFIG_CHECKS } from "../daemon/config-checks.js";
import { cleanLine } from "../common/sanitize-text.js";
import { EXIT_USAGE, UsageError, type CommandIO } from "./command.js";

export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

/** Options every config-reading command takes. */
export const CONFIG_OPTIONS = {
  config: { type: "string", short: "c", default: "./config.yaml" },
  "log-level": { type: "string" },
  "log-format": { type: "string" },
} as const satisfies ParseArgsConfig["options"];

export const CONFIG_OPTIONS_HELP = [
  "  -c, --config PATH     the config file (default ./config.yaml)",
  "  --log-level LEVEL     trace, debug, info, warn, error, fatal or silent (default: log.level, info)",
  "  --log-format FORMAT   json or pretty (default: log.format, which is json unless the config says pretty)",
].join("\n");

// Kept here too: commands take their parsing helpers from this module.
export { UsageError };

/**
 * `--from -1000` as `--from=-1000`: node's parseArgs refuses a value that starts with a dash
 * after a string option ("argument is ambiguous"), but a negative number is never a flag, and
 * it is the form the docs write (`replay --from -1000`).
 */
function joinNegativeValues(args: readonly string[], options: NonNullable<ParseArgsConfig["options"]>): string[] {
  const takesValue = new Set<string>();
  for (const [name, option] of Object.entries(options)) {
    if (option.type !== "string") continue;
    takesValue.add(`--${name}`);
    if (option.short !== undefined) takesValue.add(`-${option.short}`);
  }
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    const next = args[i + 1];
    if (arg === "--") {
      out.push(...args.slice(i));
      break;
    }
    if (takesValue.has(arg) && next !== undefined && /^-\d+$/.test(next)) {
      out.push(arg.startsWith("--") ? `${arg}=${next}` : `${arg}${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/** parseArgs with a usage error instead of a stack trace for unknown or malformed flags. */
export function parseCommandArgs<O extends NonNullable<ParseArgsConfig["options"]>>(args: string[], options: O, allowPositionals = false) {
  try {
    return parseArgs({ args: joinNegativeValues(args, options), options, allowPositionals, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** The rule `--rule NAME` names, or a usage error that lists the rules (and the closest one). */
export function ruleNamed(config: Config, name: string): Config["rules"][number] {
  const rule = config.rules.find((r) => r.name === name);
  if (rule) return rule;
  const names = config.rules.map((r) => r.name);
  throw new UsageError(`no rule named "${cleanLine(name, 80)}"${didYouMean(name, names)}; rules: ${names.join(", ") || "(none)"}`);
}

/** Loads and checks the config; on failure prints every problem and returns the exit code. */
export async function loadConfigForCommand(io: CommandIO, path: string): Promise<LoadedConfig | number> {
  try {
    return await loadConfig({ path, env: io.env, checks: CONFIG_CHECKS });
  } catch (error) {
    const message = describeConfigFailure(error);
    if (message === undefined) throw error;
    io.stderr.write(message);
    return EXIT_USAGE;
  }
}

/** The values of CONFIG_OPTIONS as parseCommandArgs gives them. */
export interface ConfigOptionValues {
  config: string;
  "log-level"?: string | undefined;
  "log-format"?: string | undefined;
}

/**
 * The start of a command that reads the config: the config loaded and checked (on failure,
 * every problem printed and the exit code returned), and the command's Common, whose logger
 * knows the config's secrets and logs at `quietLevel` unless --log-level says otherwise: the
 * command's own report is its output.
 */
export async function startConfigCommand(io: CommandIO, values: ConfigOptionValues, quietLevel: LogLevel = "warn"): Promise<(LoadedConfig & { common: Common }) | number> {
  const loaded = await loadConfigForCommand(io, values.config);
  if (typeof loaded === "number") return loaded;
  const common = createCommandCommon(io, { config: loaded.config, secrets: loaded.secrets, logLevel: values["log-level"] ?? quietLevel, logFormat: values["log-format"] });
  return { ...loaded, common };
}

/** The Common of a command: a logger that knows the config's secrets, fresh metrics, the shutdown signal. */
export function createCommandCommon(io: CommandIO, options: { config?: Config; secrets?: string[]; logLevel?: string; logFormat?: string }): Common {
  const redactor = createSecretRedactor();
  for (const secret of options.secrets ?? []) redactor.add(secret);
  const level = (options.logLevel ?? options.config?.log.level ?? "info") as LogLevel;
  if (!LOG_LEVELS.includes(level)) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(", ")}`);
  const format = options.logFormat ?? options.config?.log.format ?? ((io.stderr as { isTTY?: boolean }).isTTY ? "pretty" : "json");
  if (format !== "json" && format !== "pretty") throw new UsageError("--log-format must be json or pretty");
  const logger = createLogger({ level, pretty: format === "pretty", redactor, destination: io.stderr });
  // Only bin.ts routes process warnings (routeProcessWarnings); in a test this just records the logger.
  setProcessWarningLogger(logger);
  return {
    logger,
    metrics: createMetrics({ defaultMetrics: true }),
    secrets: redactor,
    signal: io.signal,
    now: Date.now,
  };
}
