import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SINK_TYPES } from "../../src/notify/sinks/index.js";

/**
 * The places a reader learns what kaiawatch delivers to name every sink it has: package.json's
 * description (what the registry shows) named two of nine, and the README's first paragraph.
 */

const NAMES: Record<string, string> = { slack: "Slack", discord: "Discord", telegram: "Telegram", email: "email", webhook: "webhooks", pagerduty: "PagerDuty", teams: "Microsoft Teams", console: "the console", file: "a file", heartbeat: "heartbeat" };

describe("the sinks kaiawatch names", () => {
  it.each([
    ["package.json's description", (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { description: string }).description],
    ["the README's first paragraph", readFileSync(new URL("../../README.md", import.meta.url), "utf8").split("\n\n")[1]!.replace(/\n/g, " ")],
  ])("%s names every sink type", (_where, text) => {
    expect(Object.keys(NAMES).sort()).toEqual([...SINK_TYPES].sort());
    expect(SINK_TYPES.filter((type) => !text.includes(NAMES[type]!))).toEqual([]);
  });
});
