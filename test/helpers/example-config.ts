import { readFileSync } from "node:fs";

/** config.example.yaml's text. */
export const EXAMPLE_TEXT = readFileSync(new URL("../../config.example.yaml", import.meta.url), "utf8");

/** A value for every variable config.example.yaml references, each of the shape its key takes. */
export const EXAMPLE_ENV: NodeJS.ProcessEnv = {
  KAIASCAN_API_KEY: "key-123",
  SLACK_WEBHOOK_URL: "https://hooks.example/slack",
  DISCORD_WEBHOOK_URL: "https://hooks.example/discord",
  TELEGRAM_BOT_TOKEN: "123456:abcdef",
  SMTP_USER: "user",
  SMTP_PASS: "pass",
  WEBHOOK_SECRET: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  STATUS_TOKEN: "status-token-0123456789",
  PAGERDUTY_ROUTING_KEY: "0123456789abcdef0123456789abcdef",
  TEAMS_WORKFLOW_URL: "https://hooks.example/teams",
  HEALTHCHECKS_PING_URL: "https://hc-ping.example/0123",
};
