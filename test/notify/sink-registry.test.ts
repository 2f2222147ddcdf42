import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/index.js";
import { CONFIG_CHECKS } from "../../src/daemon/config-checks.js";
import { previewDelivery } from "../../src/notify/preview.js";
import { SINK_DEFINITIONS, SINK_TYPES, sinkConfigSchema } from "../../src/notify/sinks/index.js";
import { INVISIBLE_OR_BIDI, single } from "./fixtures.js";

/** One sink of every type, each secret a distinct word so that the scrubber's list can be read off. */
const CONFIG = `
chain: { network: kairos }
watches:
  - { name: w, every_block: true }
sinks:
  chat: { type: slack, url: "https://hooks.slack.com/services/T0/B0/SLACKURL", text: "{{rule}}: {{summary}}" }
  feed: { type: discord, url: "https://discord.com/api/webhooks/1/DISCORDURL" }
  tg: { type: telegram, bot_token: "123456:TGTOKEN", chat_id: -100123 }
  mail:
    type: email
    smtp: { host: smtp.example.com, user: SMTPUSER, pass: SMTPPASS }
    from: "kaiawatch <alerts@example.com>"
    to: [ops@example.com]
    subject: "[kw] {{rule}}"
  hook:
    type: webhook
    url: "https://example.com/HOOKURL"
    secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
    headers: { Authorization: "Bearer HEADERTOKEN", X-Team: TEAMNAME }
  page: { type: pagerduty, routing_key: PDROUTINGKEY0123456789abcdefABCD }
  room: { type: teams, url: "https://prod.westeurope.logic.azure.com/workflows/1/triggers/manual/paths/invoke?sig=TEAMSSIG" }
  out: { type: console }
  audit: { type: file, path: ./alerts.jsonl }
  alive: { type: heartbeat, url: "https://hc-ping.com/HEARTBEATURL", headers: { X-Key: HBHEADER } }
`;

describe("the sink registry", () => {
  it("lists every type once, in the order of messages and of the JSON Schema", () => {
    expect(SINK_TYPES).toEqual(["slack", "discord", "telegram", "email", "webhook", "pagerduty", "teams", "console", "file", "heartbeat"]);
    expect(sinkConfigSchema.options.map((option) => option.shape.type.value)).toEqual(SINK_TYPES);
  });

  it("gives each entry its type, its own keys, then the delivery options every sink has", () => {
    for (const definition of SINK_DEFINITIONS) {
      expect(Object.keys(definition.schema.shape)).toEqual(["type", ...Object.keys(definition.options.shape), "concurrency", "rate_per_second", "max_attempts", "max_age", "operational"]);
    }
  });

  it("derives the loaded config of every type: defaults, the secrets to scrub and a preview", () => {
    const { config, secrets } = parseConfigText(CONFIG, { fileName: "sinks.yaml", env: {}, checks: CONFIG_CHECKS });
    expect(Object.values(config.sinks).map((sink) => sink.type)).toEqual(SINK_TYPES);
    expect(config.sinks.chat).toMatchObject({ name: "chat", concurrency: 1, rate_per_second: 1, max_attempts: 10, max_age: 86_400_000, operational: false });
    expect(config.sinks.feed?.rate_per_second).toBe(0.5);
    expect(config.sinks.tg).toMatchObject({ chat_id: "-100123", api_url: "https://api.telegram.org" });
    expect(config.sinks.mail).toMatchObject({ smtp: { port: 587, secure: false, starttls: true, timeout: 30_000 }, cc: [] });
    expect(config.sinks.hook).toMatchObject({ timeout: 10_000, allow_http: false });
    expect(config.sinks.audit?.rate_per_second).toBeUndefined();
    expect(config.sinks.page).toMatchObject({ url: "https://events.pagerduty.com/v2/enqueue", severity: "error", rate_per_second: 1 });
    expect(config.sinks.room?.rate_per_second).toBe(1);
    expect(config.sinks.alive).toMatchObject({ interval: 60_000, method: "GET", timeout: 10_000, allow_http: false });
    expect(secrets.filter((secret) => /[A-Z]{6}|^whsec_/.test(secret)).sort()).toEqual(
      [
        "https://hooks.slack.com/services/T0/B0/SLACKURL",
        "https://discord.com/api/webhooks/1/DISCORDURL",
        "123456:TGTOKEN",
        "SMTPUSER",
        "SMTPPASS",
        "https://example.com/HOOKURL",
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "Bearer HEADERTOKEN",
        "TEAMNAME",
        "PDROUTINGKEY0123456789abcdefABCD",
        "https://prod.westeurope.logic.azure.com/workflows/1/triggers/manual/paths/invoke?sig=TEAMSSIG",
        // A query value of any URL is a secret on its own (issue 29, item 6).
        "TEAMSSIG",
        "https://hc-ping.com/HEARTBEATURL",
        "HBHEADER",
        // The secret URLs' parts but names (issue 41): a receiver may quote one alone.
        "SLACKURL",
        "DISCORDURL",
        "HOOKURL",
        "/HOOKURL",
        "HEARTBEATURL",
        "/HEARTBEATURL",
      ].sort(),
    );
    for (const sink of Object.values(config.sinks)) {
      const text = previewDelivery(sink, single());
      expect(text.length).toBeGreaterThan(0);
      expect(text).not.toMatch(INVISIBLE_OR_BIDI);
    }
    expect(previewDelivery(config.sinks.mail!, single())).toMatch(/^Subject: \[kw\] /);
  });
});
