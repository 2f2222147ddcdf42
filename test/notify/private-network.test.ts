import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/index.js";
import { CONFIG_CHECKS } from "../../src/daemon/config-checks.js";
import { configErrorOf } from "../config/helpers.js";

/**
 * Issue 29, item 9: a sink URL that points at a link-local address or a cloud metadata
 * service (where instance credentials are served) is refused unless the sink says
 * `allow_private_network: true`; loopback stays allowed (local relays, tests).
 */
const config = (sink: string) => `watches:\n  - { name: w, every_block: true }\nrules:\n  - { name: r, watch: w, notify: [s] }\nsinks:\n  s: ${sink}\n`;
const load = (sink: string) => parseConfigText(config(sink), { fileName: "config.yaml", env: {}, checks: CONFIG_CHECKS });

describe("sink URLs on the private network", () => {
  it.each([
    ["AWS/GCP/Azure metadata", '{ type: webhook, url: "http://169.254.169.254/latest/meta-data/", allow_http: true }'],
    ["the same address written in decimal", '{ type: webhook, url: "http://2852039166/", allow_http: true }'],
    ["ECS task metadata", '{ type: webhook, url: "http://169.254.170.2/v2/credentials", allow_http: true }'],
    ["an IPv6 link-local address", '{ type: webhook, url: "https://[fe80::1]/hook" }'],
    ["an IPv4-mapped link-local address", '{ type: webhook, url: "https://[::ffff:169.254.169.254]/hook" }'],
    ["Google's metadata name", '{ type: webhook, url: "http://metadata.google.internal/computeMetadata/v1/", allow_http: true }'],
    ["AWS metadata over IPv6", '{ type: slack, url: "https://[fd00:ec2::254]/latest" }'],
    ["a Telegram api_url", '{ type: telegram, bot_token: "123:abc", chat_id: "1", api_url: "https://169.254.169.254" }'],
    ["a PagerDuty url", '{ type: pagerduty, routing_key: "abcdefghijklmnopqrstuvwxyz012345", url: "https://metadata.goog/v2/enqueue" }'],
  ])("%s is refused, naming the key and the host", (_what, sink) => {
    const error = configErrorOf(() => load(sink));
    const text = error.format();
    expect(text).toMatch(/sinks\.s\.(url|api_url): points at (a link-local address|a cloud metadata service)/);
    expect(text).toContain("allow_private_network: true");
  });

  it("is accepted with allow_private_network: true; loopback and public hosts need nothing", () => {
    expect(() => load('{ type: webhook, url: "http://169.254.169.254/hook", allow_http: true, allow_private_network: true }')).not.toThrow();
    expect(() => load('{ type: webhook, url: "http://127.0.0.1:9000/hook", allow_http: true }')).not.toThrow();
    expect(() => load('{ type: slack, url: "http://localhost:9000/hook" }')).not.toThrow();
    expect(() => load('{ type: webhook, url: "https://hooks.example.com/169.254.169.254" }')).not.toThrow();
  });
});
