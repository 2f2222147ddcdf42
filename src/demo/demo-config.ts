import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseConfigText, type LoadedConfig } from "../config/index.js";
import { CONFIG_CHECKS } from "../daemon/config-checks.js";

/** examples/demo.yaml, beside dist/ and src/ alike (both sit one level below the package root). */
export const DEMO_CONFIG_PATH = fileURLToPath(new URL("../../examples/demo.yaml", import.meta.url));

/** What the demo knows only once its parts are listening: the `${DEMO_…}` values of the demo config. */
export interface DemoValues {
  simulatorUrl: string;
  /** Links in messages point here. */
  explorerUrl: string;
  storePath: string;
  /** "host:port" or false (no status server). */
  statusListen: string | false;
  startBlock: number;
  treasury: string;
  collection: string;
  token: string;
  webhookUrl: string;
  webhookSecret: string;
  smtpPort: number;
}

export function demoEnv(values: DemoValues): NodeJS.ProcessEnv {
  return {
    DEMO_SIMULATOR_URL: values.simulatorUrl,
    DEMO_EXPLORER_URL: values.explorerUrl,
    DEMO_STORE_PATH: values.storePath,
    DEMO_STATUS_LISTEN: String(values.statusListen),
    DEMO_START_BLOCK: String(values.startBlock),
    DEMO_TREASURY: values.treasury,
    DEMO_COLLECTION: values.collection,
    DEMO_TOKEN: values.token,
    DEMO_WEBHOOK_URL: values.webhookUrl,
    DEMO_WEBHOOK_SECRET: values.webhookSecret,
    DEMO_SMTP_PORT: String(values.smtpPort),
  };
}

/**
 * The demo config with its placeholders filled in, through the same loader and checks as
 * `kaiawatch run`: the demo proves the file a user copies is a valid config. Only the
 * demo's own values are substituted, so the user's environment cannot change the demo.
 */
export function loadDemoConfig(values: DemoValues, path = DEMO_CONFIG_PATH): LoadedConfig {
  return parseConfigText(readFileSync(path, "utf8"), { fileName: path, env: demoEnv(values), checks: CONFIG_CHECKS });
}
