import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { EVENTS, padAddress, uint256Hex } from "../../src/simulator/abi.js";
import { HOSTILE_STRINGS, hostileLong } from "../../src/simulator/hostile.js";
import type { PagerDutyTrigger } from "../../src/notify/sinks/pagerduty.js";
import type { TeamsMessage } from "../../src/notify/sinks/teams.js";
import { configFromText, tempDir } from "../helpers/harness.js";
import { withDaemon } from "../helpers/with-daemon.js";
import { INVISIBLE_OR_BIDI } from "./fixtures.js";
import type { Receiver } from "./receiver.js";
import { pagerDutyProblems, startPagerDutyReceiver } from "./pagerduty-receiver.js";
import { startTeamsReceiver, teamsProblems } from "./teams-receiver.js";

/**
 * PagerDuty and Teams end to end: the real daemon over the hostile simulator (KIP-7 symbols in token and balance alerts, token and
 * collection names, NFT metadata and revert messages written by strangers, one of 100 KB),
 * into local receivers that check every payload as the services document them.
 */
const EXPLORER = "https://kaiascan.io";
const ROUTING_KEY = "e2eRoutingKey0123456789abcdefABC";
// eslint-disable-next-line no-control-regex -- control characters are what must not arrive
const RAW_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

const HOT = "0x00000000000000000000000000000000000a11e7";
const OTHER = "0x00000000000000000000000000000000000b0b00";
const tokenTransfer = (token: string, from: string, to: string, value: bigint) => ({
  contract_address: token,
  type: "Transfer",
  topics: [EVENTS.transfer20.topic0, padAddress(from), padAddress(to)],
  data: `0x${uint256Hex(value)}`,
  items: [],
});

let sim: Simulator;
let pagerDuty: Receiver & { events: () => Record<string, unknown>[] };
let teams: Receiver;
const dir = tempDir("kaiawatch-e2e-incident-");

beforeAll(async () => {
  sim = await createSimulator({ seed: 7, hostile: true, initialBlocks: 30 });
  const busy = sim.addresses.busyWallet;
  const start = sim.head() - 9;
  sim.addBlock({
    internalTransactions: [...HOSTILE_STRINGS, hostileLong()].map((message) => ({
      from: busy,
      to: sim.addresses.contracts[0],
      amount: "0",
      error: "execution reverted",
      transaction_status: { status: "Fail" as const, fail_message: message },
    })),
  });
  // A hot wallet's transfers of the token whose symbol() is hostile in this mode (STK, 0
  // decimals), and its balance of it: a token alert and a balance alert that fires and resolves.
  const stk = sim.addresses.tokens[3] as string;
  sim.addBlock({ eventLogs: [tokenTransfer(stk, OTHER, HOT, 7n)] });
  pagerDuty = await startPagerDutyReceiver();
  teams = await startTeamsReceiver();
  // The collection whose name and symbol are hostile in this mode.
  const hostileCollection = sim.addresses.nftCollections[1];
  const text = `
explorer: { base_url: "${sim.url}", requests_per_second: 500 }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0, explorer_url: "${EXPLORER}" }
store: { path: "${join(dir.path, "store.json")}" }
status: { listen: false }
defaults: { start: ${start}, jitter: 0s }
watches:
  - { name: wallet, account: "${busy}", sources: [internal_transactions] }
  - { name: shells, collection: "${hostileCollection}" }
  - { name: hot, account: "${HOT}", tokens: ["${stk}"] }
  - { name: hot-balance, balance: ["${HOT}"], tokens: ["${stk}"] }
rules:
  - { name: token-moves, watch: hot, when: { amount: { gte: "1 tokens" } }, notify: [oncall, room] }
  - { name: token-held, watch: hot-balance, when: { balance: { gte: "5 tokens" } }, clear_after: 1, severity: info, notify: [oncall, room] }
  - name: failed-calls
    watch: wallet
    when: { status: Fail }
    summary: "Failed: {{fail_message}}"
    severity: critical
    notify: [oncall, room]
  - { name: shell-moves, watch: shells, enrich: [nft], notify: [oncall, room] }
sinks:
  oncall: { type: pagerduty, routing_key: "${ROUTING_KEY}", url: "${pagerDuty.url}/v2/enqueue", severity: warning, rate_per_second: 500 }
  room: { type: teams, url: "${teams.url}/workflows/w/triggers/manual/paths/invoke?sig=s", rate_per_second: 500, concurrency: 4 }
`;
  await withDaemon({ config: configFromText(text) }, async (daemon) => {
    const { scan, delivery } = await daemon.runOnce({ drainTimeoutMs: 25_000 });
    expect(scan.results.every((r) => r.error === undefined)).toBe(true);
    expect(delivery.pending).toBe(0);
    expect(delivery.dead).toBe(0);
    // The tokens leave: the balance alert resolves.
    sim.addBlock({ eventLogs: [tokenTransfer(stk, HOT, OTHER, 7n)] });
    const again = await daemon.runOnce({ drainTimeoutMs: 25_000 });
    expect(again.delivery.pending).toBe(0);
    expect(again.delivery.dead).toBe(0);
  });
}, 30_000);

afterAll(async () => {
  await pagerDuty?.close();
  await teams?.close();
  await sim?.close();
  dir.remove();
});

function strings(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (typeof value === "object" && value !== null) return Object.entries(value).flatMap(([k, v]) => [k, ...strings(v)]);
  return [];
}

function expectInert(text: string): void {
  expect(text).not.toMatch(RAW_CONTROL);
  expect(text).not.toMatch(INVISIBLE_OR_BIDI);
  expect(text).not.toMatch(/[\r\n]/);
}

describe("PagerDuty and Teams end to end with hostile on-chain text", () => {
  it("PagerDuty accepted every event: triggers of every rule, severities as configured, text inert", () => {
    expect(pagerDuty.requests.length).toBeGreaterThan(HOSTILE_STRINGS.length);
    expect(pagerDuty.requests.map(pagerDutyProblems).filter((p) => p.length > 0)).toEqual([]);
    const events = pagerDuty.events() as unknown as PagerDutyTrigger[];
    const triggers = events.filter((e) => e.event_action === "trigger");
    expect(new Set(triggers.map((e) => e.payload.class))).toEqual(new Set(["failed-calls", "shell-moves", "token-moves", "token-held"]));
    for (const event of triggers) {
      expect(event.payload.severity).toBe(event.payload.class === "failed-calls" ? "critical" : event.payload.class === "token-held" ? "info" : "warning");
      for (const text of strings(event)) expectInert(text);
      for (const link of event.links) expect(link.href.startsWith(`${EXPLORER}/`)).toBe(true);
    }
    // The hostile collection's name reached PagerDuty as text, next to its contract address.
    const nft = events.find((e) => e.payload.class === "shell-moves")!;
    expect(Object.values(nft.payload.custom_details).some((v) => String(v).includes("<!channel>") && String(v).includes("0x"))).toBe(true);
  });

  it("a hostile token symbol reaches PagerDuty defused, next to the token's address; the balance alert triggers and resolves under one dedup_key", () => {
    const stk = sim.addresses.tokens[3] as string;
    const short = `${stk.slice(0, 6)}…${stk.slice(-4)}`;
    const events = pagerDuty.events() as unknown as (Omit<PagerDutyTrigger, "event_action"> & { event_action: string; dedup_key: string })[];
    const moves = events.filter((e) => e.event_action === "trigger" && e.payload.class === "token-moves");
    expect(moves).toHaveLength(2);
    for (const event of moves) {
      // The symbol's zero-width characters are gone; its letters stay, always beside the address.
      expect(event.payload.summary).toContain(`7 zerowidthjoiner (${short})`);
      for (const text of strings(event)) expectInert(text);
    }
    const trigger = events.find((e) => e.event_action === "trigger" && e.payload.class === "token-held")!;
    expect(trigger.payload.summary).toContain(`7 zerowidthjoiner (${short})`);
    const resolves = events.filter((e) => e.event_action === "resolve");
    expect(resolves.map((e) => e.dedup_key)).toEqual([trigger.dedup_key]);
  });

  it("Teams accepted every card: text only in TextRuns, no date function, links only to the explorer", () => {
    expect(teams.requests.length).toBe(pagerDuty.requests.length);
    expect(teams.requests.map(teamsProblems).filter((p) => p.length > 0)).toEqual([]);
    for (const req of teams.requests) {
      expect(Buffer.byteLength(req.body)).toBeLessThanOrEqual(20_000);
      const card = (JSON.parse(req.body) as TeamsMessage).attachments[0].content;
      for (const block of card.body) {
        expect(block.type).toBe("RichTextBlock");
        for (const run of block.inlines) {
          expectInert(run.text);
          expect(run.text).not.toContain("{{");
        }
      }
      for (const action of card.actions ?? []) expect(action.url.startsWith(`${EXPLORER}/`)).toBe(true);
    }
    // The token alerts' cards (two transfers, the balance firing and resolved) carry the symbol defused, beside the address.
    const stk = sim.addresses.tokens[3] as string;
    const tokenCards = teams.requests.filter((req) => req.body.includes(`zerowidthjoiner (${stk.slice(0, 6)}…${stk.slice(-4)})`));
    expect(tokenCards).toHaveLength(4);
  });
});
