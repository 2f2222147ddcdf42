import { afterEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { resolvedAlertId } from "../../src/model/alert-status.js";
import type { Delivery } from "../../src/notify/sink.js";
import { SinkConfigError } from "../../src/notify/errors.js";
import { PAGERDUTY_LIMITS, buildPagerDutyEvents, createPagerDutySink, type PagerDutyOptions, type PagerDutyTrigger } from "../../src/notify/sinks/pagerduty.js";
import type { Receiver } from "./receiver.js";
import { startPagerDutyReceiver } from "./pagerduty-receiver.js";
import { HOSTILE, HOSTILE_NAME, INVISIBLE_OR_BIDI, LONE_SURROGATE, nftAlert } from "./fixtures.js";
import { sendError } from "./send-error.js";

const signal = new AbortController().signal;
const ROUTING_KEY = "R0utingKey0123456789abcdefABCDEF";
const EPISODE = "kw_fedcba9876543210fedcba9876543210";

let receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  receivers = [];
});

async function pagerDuty(...args: Parameters<typeof startPagerDutyReceiver>) {
  const r = await startPagerDutyReceiver(...args);
  receivers.push(r);
  return r;
}

function options(url: string, written: Partial<PagerDutyOptions> = {}): PagerDutyOptions {
  return { routing_key: ROUTING_KEY, url: `${url}/v2/enqueue`, severity: "error", ...written };
}

const deliveryOf = (alert: AlertDocument): Delivery => ({ id: alert.id, rule: alert.rule, alerts: [alert], attempt: 1 });

/** Every string of a value, wherever it sits. */
function strings(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (typeof value === "object" && value !== null) return Object.entries(value).flatMap(([k, v]) => [k, ...strings(v)]);
  return [];
}

describe("PagerDuty sink (Events API v2)", () => {
  it("triggers an episode under its id and resolves it under the same dedup_key; severity from the rule, else the sink", async () => {
    const r = await pagerDuty();
    const sink = createPagerDutySink(createTestCommon(), "oncall", options(r.url, { severity: "warning" }));
    const firing = nftAlert({ id: EPISODE, rule: "hot-wallet-low", status: "firing", severity: "critical", summary: "balance of the hot wallet is 12 KAIA, below 100 KAIA" });
    const resolved = nftAlert({ id: resolvedAlertId(EPISODE), rule: "hot-wallet-low", status: "resolved", summary: "balance back at 250 KAIA" });
    await sink.send(deliveryOf(firing), signal);
    await sink.send(deliveryOf(resolved), signal);
    await sink.send(deliveryOf(nftAlert({ id: "kw_oneshot" })), signal);

    expect(r.requests.map((req) => req.url)).toEqual(["/v2/enqueue", "/v2/enqueue", "/v2/enqueue"]);
    const [trigger, resolve, oneShot] = r.events() as unknown as [PagerDutyTrigger, Record<string, unknown>, PagerDutyTrigger];
    expect(trigger).toMatchObject({
      routing_key: ROUTING_KEY,
      event_action: "trigger",
      dedup_key: EPISODE,
      client: "kaiawatch",
      payload: {
        summary: "FIRING: hot-wallet-low: balance of the hot wallet is 12 KAIA, below 100 KAIA",
        source: "kaiawatch/mainnet/collection",
        severity: "critical",
        component: "nft_transfers",
        class: "hot-wallet-low",
        timestamp: firing.created_at,
        custom_details: { "alert id": EPISODE, rule: "hot-wallet-low", status: "firing", Block: String(firing.block) },
      },
    });
    expect(trigger.links.map((link) => link.text)).toEqual(["Transaction", "Block", "Contract"]);
    expect(trigger.links.every((link) => link.href.startsWith("https://kaiascan.io/"))).toBe(true);
    // A resolve carries only what PagerDuty needs to find the alert.
    expect(resolve).toEqual({ routing_key: ROUTING_KEY, event_action: "resolve", dedup_key: EPISODE });
    // A one-shot alert is an incident of its own, with the sink's default severity.
    expect(oneShot).toMatchObject({ event_action: "trigger", dedup_key: "kw_oneshot", payload: { severity: "warning" } });
    expect("status" in oneShot.payload.custom_details).toBe(false);
  });

  it("defuses hostile on-chain text: one clean line, within the limits, and no link but the explorer's", async () => {
    const r = await pagerDuty();
    const sink = createPagerDutySink(createTestCommon(), "oncall", options(r.url));
    const hostile = nftAlert({ summary: `Transfer of ${HOSTILE_NAME} ${HOSTILE.huge}` });
    hostile.record = { ...(hostile.record as object), token_id: HOSTILE.crlf };
    await sink.send(deliveryOf(hostile), signal);
    expect(r.requests).toHaveLength(1);
    const [event] = r.events() as unknown as [PagerDutyTrigger];
    expect(event.payload.summary.length).toBeLessThanOrEqual(PAGERDUTY_LIMITS.summary);
    expect(event.payload.summary).not.toMatch(/[\r\n]/);
    for (const text of strings(event)) {
      expect(text).not.toMatch(INVISIBLE_OR_BIDI);
      expect(text).not.toMatch(LONE_SURROGATE);
      expect(text).not.toMatch(/[\r\n]/);
      expect(text.length).toBeLessThanOrEqual(PAGERDUTY_LIMITS.summary);
    }
    // The token's text never becomes a link: only kaiawatch's own explorer links are links.
    expect(event.links.every((link) => link.href.startsWith("https://kaiascan.io/") && !link.href.includes("evil"))).toBe(true);
    expect(JSON.stringify(event.payload.custom_details)).not.toContain("\\r\\nBcc");
  });

  it("sends a digest's one-shot alerts as one trigger under the digest id, and its lifecycle alerts as their own events", () => {
    const oneShots = Array.from({ length: 30 }, (_, i) => nftAlert({ severity: i === 7 ? "critical" : "info" }));
    const resolved = nftAlert({ id: resolvedAlertId(EPISODE), status: "resolved" });
    const digest: Delivery = { id: "grp_0123", rule: "collection-feed", alerts: [...oneShots, resolved], attempt: 1 };
    const events = buildPagerDutyEvents(digest, { routing_key: ROUTING_KEY, severity: "error" });
    expect(events.map((e) => [e.event_action, e.dedup_key])).toEqual([
      ["resolve", EPISODE],
      ["trigger", "grp_0123"],
    ]);
    const trigger = events[1] as PagerDutyTrigger;
    // The most severe of its alerts; the headline counts them all and says how many are listed.
    expect(trigger.payload.severity).toBe("critical");
    expect(trigger.payload.summary).toMatch(/^30 NFT transfers for rule collection-feed .*; first 20 shown$/);
    expect(trigger.payload.custom_details).toMatchObject({ "digest id": "grp_0123", count: 30 });
    expect(Object.keys(trigger.payload.custom_details).filter((key) => key.startsWith("#"))).toHaveLength(20);
  });

  it("treats 202 as delivered, 429 and 5xx as retryable, and 400 as permanent with PagerDuty's reason, never the routing key", async () => {
    let answer = 429;
    const r = await pagerDuty((res) => {
      if (answer === 202) return false;
      res.statusCode = answer;
      if (answer === 429) res.setHeader("retry-after", "30");
      res.end(answer === 429 ? "Too Many Requests" : "upstream trouble");
      return true;
    });
    const common = createTestCommon();
    const sink = createPagerDutySink(common, "oncall", options(r.url));
    const delivery = deliveryOf(nftAlert());

    const limited = await sendError(() => sink.send(delivery, signal));
    expect(limited).toMatchObject({ permanent: false, retryAfterMs: 30_000 });
    answer = 503;
    expect((await sendError(() => sink.send(delivery, signal))).permanent).toBe(false);
    answer = 202;
    await sink.send(delivery, signal);

    // A routing key PagerDuty refuses (the receiver checks its length) is a dead letter with the reason.
    const refused = createPagerDutySink(common, "oncall", options(r.url));
    const bad = await sendError(() => refused.send({ ...delivery, alerts: [{ ...delivery.alerts[0]!, created_at: "not a time" }] }, signal));
    expect(bad.permanent).toBe(true);
    expect(bad.message).toContain("answered HTTP 400");
    expect(bad.message).toContain("timestamp");
    expect(bad.message).not.toContain(ROUTING_KEY);
  });

  it("refuses a malformed routing key or URL at start-up without echoing the key", () => {
    const common = createTestCommon();
    const attempt = (written: Partial<PagerDutyOptions>) => () => createPagerDutySink(common, "oncall", { ...options("https://events.example"), ...written });
    expect(attempt({ routing_key: "short-secret-key" })).toThrow(SinkConfigError);
    expect(attempt({ url: "http://events.example/v2/enqueue" })).toThrow(/must use https/);
    try {
      attempt({ routing_key: "short-secret-key" })();
    } catch (error) {
      expect(String(error)).not.toContain("short-secret-key");
    }
    // The key is registered for the log scrubber.
    createPagerDutySink(common, "oncall", options("https://events.example"));
    expect(common.secrets.redact(`key ${ROUTING_KEY}`)).not.toContain(ROUTING_KEY);
  });
});
