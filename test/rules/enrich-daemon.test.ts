import { afterEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { simpleParser, type ParsedMail } from "mailparser";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import type { InternalTransactionListItem, NftItem, NftTransfer } from "../../src/explorer/types.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { createSimulator, type Simulator, type SimulatorOptions } from "../../src/simulator/index.js";
import type { SlackMessage } from "../../src/notify/sinks/slack.js";
import { configFromText, quietCommon, readJsonLines, recordKeyOf, tempDir } from "../helpers/harness.js";
import { startReceiver, type Receiver } from "../notify/receiver.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";

/**
 * Enrichment wired into the daemon: `kaiawatch once` against the simulator with rules that
 * ask for extra lookups; what arrives in Slack, email and a file carries the extra data,
 * and an explorer out of quota still lets every alert through, marked.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const ZERO = "0x0000000000000000000000000000000000000000";

async function simulator(options: SimulatorOptions): Promise<Simulator> {
  const sim = await createSimulator(options);
  cleanups.push(() => sim.close());
  return sim;
}

async function startSmtp(): Promise<{ port: number; mails: ParsedMail[] }> {
  const smtp = { port: 0, mails: [] as ParsedMail[] };
  const server = new SMTPServer({
    disabledCommands: ["STARTTLS", "AUTH"],
    authOptional: true,
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((mail) => {
          smtp.mails.push(mail);
          callback();
        })
        .catch(callback);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  smtp.port = (server.server.address() as AddressInfo).port;
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return smtp;
}

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  cleanups.push(() => r.close());
  return r;
}

async function daemonFor(sim: Simulator, start: number, body: string): Promise<{ daemon: Daemon; alertsFile: string }> {
  const dir = tempDir();
  const alertsFile = join(dir.path, "alerts.jsonl");
  const config = configFromText(`
explorer: { base_url: ${sim.url}, requests_per_second: 1000, page_size: 2000, max_retries: 1 }
chain: { rpc_url: ${sim.rpcUrl}, lag_blocks: 0 }
store: { path: ${join(dir.path, "store.json")} }
status: { listen: false }
defaults: { start: ${start}, max_window_blocks: 1000, jitter: 0s }
${body.replaceAll("ALERTS_FILE", alertsFile)}
`);
  const daemon = await createDaemon(quietCommon(), { config });
  cleanups.push(async () => {
    await daemon.stop();
    dir.remove();
  });
  return { daemon, alertsFile };
}

describe("enrichment in the daemon", () => {
  it("an NFT transfer's alert shows the NFT's name beside its contract in Slack and email; failed calls carry their revert reason", async () => {
    const sim = await simulator({ seed: 21, initialBlocks: 150 });
    const slack = await receiver();
    const smtp = await startSmtp();
    const start = sim.head() - 140;
    const { busyCollection, busyWallet } = sim.addresses;
    const window = { from: start + 1, to: sim.head() };
    // One transfer the rule picks out exactly: its transaction and token id.
    const transfers = sim.truth.nftTransfers(busyCollection, window);
    const chosen = transfers.find((t) => t.to !== undefined && t.to !== ZERO && transfers.filter((u) => u.transaction_hash === t.transaction_hash && u.token_id === t.token_id).length === 1) as NftTransfer;
    const failedCalls = sim.truth.accountInternalTransactions(busyWallet, window).filter((r) => r.transaction_status?.status === "Fail");
    expect(failedCalls.length).toBeGreaterThan(0);

    const { daemon, alertsFile } = await daemonFor(
      sim,
      start,
      `watches:
  - { name: kitties, collection: "${busyCollection}" }
  - { name: wallet, account: "${busyWallet}", sources: [internal_transactions] }
rules:
  - name: kitty-moved
    watch: kitties
    when: { transaction: "${chosen.transaction_hash}", token_id: "${chosen.token_id}" }
    enrich: [nft, inventory, tx_nft_transfers]
    notify: [ops-slack, ops-email, file]
  - name: failed-calls
    watch: wallet
    source: internal_transactions
    when: { status: Fail }
    enrich: [tx_internal]
    notify: [file]
sinks:
  ops-slack: { type: slack, url: "${slack.url}/hook" }
  ops-email: { type: email, smtp: { host: 127.0.0.1, port: ${smtp.port}, starttls: false }, from: "kaiawatch <alerts@example.com>", to: [ops@example.com] }
  file: { type: file, path: ALERTS_FILE }`,
    );
    const { scan, delivery } = await daemon.runOnce();
    expect(scan.results.every((r) => r.error === undefined)).toBe(true);
    expect(delivery).toMatchObject({ pending: 0 });

    const alerts = readJsonLines<AlertDocument>(alertsFile);
    const kitty = alerts.filter((a) => a.rule === "kitty-moved");
    expect(kitty).toHaveLength(1);
    const nft = kitty[0]?.enrichment?.nft as NftItem;
    expect(nft.info.name).toBe("Kaia Kitties");
    expect(nft.token_id).toBe(chosen.token_id);
    expect(kitty[0]?.enrichment?.inventory).toMatchObject({ holder: chosen.to?.toLowerCase() });
    expect(kitty[0]?.enrichment?.tx_nft_transfers).toMatchObject({ total: sim.truth.nftTransfers(busyCollection, window).filter((t) => t.transaction_hash === chosen.transaction_hash).length });

    // Every failed call became an alert (none lost to enrichment), each with its transaction's revert reason.
    const failed = alerts.filter((a) => a.rule === "failed-calls");
    expect(new Set(failed.map(recordKeyOf))).toEqual(new Set(failedCalls.map((r) => NORMALIZERS.internal_transactions(r).key)));
    for (const alert of failed) {
      expect((alert.enrichment?.tx_internal as { revert_reason: string }).revert_reason).toBe((alert.record as InternalTransactionListItem).transaction_status?.fail_message);
    }

    // The name a stranger chose is never shown without the contract it belongs to.
    const contract = chosen.contract.contract_address;
    expect(slack.requests).toHaveLength(1);
    const message = JSON.parse(slack.requests[0]?.body ?? "{}") as SlackMessage;
    const fieldTexts = message.blocks.flatMap((b) => ("fields" in b ? b.fields.map((f) => f.text) : []));
    const nftField = fieldTexts.find((t) => t.startsWith("*nft*"));
    expect(nftField).toContain("Kaia Kitties (KKT)");
    expect(nftField).toContain(contract);
    expect(smtp.mails).toHaveLength(1);
    const line = smtp.mails[0]?.text?.split("\n").find((l) => l.startsWith("nft: "));
    expect(line).toContain("Kaia Kitties (KKT)");
    expect(line).toContain(contract);
    expect(smtp.mails[0]?.html).toContain(contract);
  });

  it("an explorer out of daily quota: polling fits, every alert is still committed and marked, the cursor reaches the head", async () => {
    const sim = await simulator({ seed: 22, initialBlocks: 120 });
    const start = sim.head() - 100;
    const { busyCollection } = sim.addresses;
    const truth = sim.truth.nftTransfers(busyCollection, { from: start + 1, to: sim.head() });
    expect(truth.length).toBeGreaterThan(5);
    // One page of collection transfers costs 5 credits: exactly what the explorer still allows today.
    sim.setFaults({ dailyCreditQuota: 5 });
    const { daemon, alertsFile } = await daemonFor(
      sim,
      start,
      `watches:
  - { name: kitties, collection: "${busyCollection}" }
rules:
  - { name: every-transfer, watch: kitties, enrich: [nft, tx_internal], notify: [file] }
sinks:
  file: { type: file, path: ALERTS_FILE }`,
    );
    const { scan } = await daemon.runOnce();
    expect(scan.results.every((r) => r.error === undefined)).toBe(true);
    expect((await daemon.store.listCursors()).map((c) => c.block)).toEqual([sim.head()]);
    const alerts = readJsonLines<AlertDocument>(alertsFile);
    expect(new Set(alerts.map(recordKeyOf))).toEqual(new Set(truth.map((t) => NORMALIZERS.nft_transfers(t).key)));
    for (const alert of alerts) {
      for (const kind of ["nft", "tx_internal"]) expect((alert.enrichment?.[kind] as { error?: string }).error).toEqual(expect.any(String));
    }
    expect(alerts.some((a) => String((a.enrichment?.nft as { error: string }).error).includes("KW_EXPLORER_DAILY_QUOTA"))).toBe(true);
    // The explorer charged nothing beyond the poll.
    expect(sim.stats().creditsTotal).toBe(5);
  });

  it("refuses a config whose enrichment does not fit the rule's source, naming the rule and the key", async () => {
    const sim = await simulator({ seed: 23, initialBlocks: 5 });
    await expect(
      daemonFor(
        sim,
        0,
        `watches:
  - { name: token, contract: "${sim.addresses.busyToken}" }
rules:
  - { name: token-moves, watch: token, enrich: [tx_logs, nft, inventory], notify: [file] }
sinks:
  file: { type: file, path: ALERTS_FILE }`,
      ),
    ).rejects.toThrow(/rules\[0\]\.enrich\[1\]: rule "token-moves": enrich "nft" applies only to nft_transfers records[^\n]*this rule reads event_logs[\s\S]*rules\[0\]\.enrich\[2\]: rule "token-moves": enrich "inventory"/);
  });
});
