import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readSuppressedNotes } from "../../src/notify/cooldown.js";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import { createSimulator } from "../../src/simulator/index.js";
import { openStore } from "../../src/store/open-store.js";
import { readOnDisk } from "../store/fixtures/on-disk.js";
import type { InternalTransactionListItem } from "../../src/explorer/types.js";
import { startKaiawatch, waitFor, type Child } from "../helpers/child.js";
import { configFromText, quietCommon, readJsonLines, tempDir } from "../helpers/harness.js";
import { runCli } from "../helpers/run-cli.js";
import { simulatorHead } from "../helpers/simulator-config.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A config with one wallet, its rule `outflow` and a console sink, in a directory of its own (no daemon: the CLI writes the store). */
function walletConfig(): string {
  const dir = tempDir();
  cleanups.push(() => dir.remove());
  const config = join(dir.path, "config.yaml");
  writeFileSync(
    config,
    `
store: { path: ${join(dir.path, "store.json")} }
watches:
  - { name: wallet, account: "0x1111111111111111111111111111111111111111", sources: [internal_transactions] }
rules:
  - { name: outflow, watch: wallet, notify: [out] }
sinks:
  out: { type: console }
`,
  );
  return config;
}

describe("kaiawatch silence with a running daemon", () => {
  it("holds back exactly the alerts it matches until it expires, picked up without a restart", { timeout: 60_000 }, async () => {
    const sim = await createSimulator({ seed: 5, initialBlocks: 5 });
    const dir = tempDir();
    cleanups.push(async () => {
      await sim.close();
      dir.remove();
    });
    const [wallet, quiet, loud, removed] = sim.addresses.wallets as [string, string, string, string];
    const store = join(dir.path, "store.json");
    const alerts = join(dir.path, "alerts.jsonl");
    const config = join(dir.path, "config.yaml");
    writeFileSync(
      config,
      `
${simulatorHead(sim, { storePath: store })}
defaults: { schedule: "* * * * * *", start: latest, jitter: 0s }
watches:
  - { name: wallet, account: "${wallet}", sources: [internal_transactions] }
rules:
  - { name: outflow, watch: wallet, notify: [out] }
sinks:
  out: { type: file, path: ${alerts} }
`,
    );
    const daemon: Child = startKaiawatch(["run", "--config", config, "--log-format", "json", "--log-level", "warn"]);
    cleanups.push(async () => {
      if (daemon.process.exitCode === null) {
        daemon.process.kill("SIGKILL");
        await daemon.exited;
      }
    });
    const cursorSet = () => existsSync(store) && Object.keys(readOnDisk(store).cursors).length > 0;
    await waitFor(cursorSet, 15_000, `the daemon's first tick (stderr: ${daemon.stderr()})`);

    const call = (to: string): Partial<InternalTransactionListItem> => ({ from: wallet, to, amount: "1" });
    const sent = (block: number, to: string) => readJsonLines(alerts).some((a) => a.block === block && (a.record as InternalTransactionListItem).to === to);

    // Before any silence, an alert to `quiet` goes out.
    const before = sim.addBlock({ internalTransactions: [call(quiet)] });
    await waitFor(() => sent(before, quiet), 15_000, "the alert before the silence");

    const added = await runCli("silence", "add", "--config", config, "--rule", "outflow", "--match", `to=${quiet.toUpperCase().replace("0X", "0x")}`, "--for", "8s", "--reason", "planned sweep");
    expect(added.err).toBe("");
    expect(added.code).toBe(0);
    expect(added.out).toContain("It holds from the next delivery round of the daemon");
    const id = /Silence (sil_[0-9a-f]{8}) added/.exec(added.out)?.[1];
    expect(id).toBeDefined();

    // While it holds: the alert to `quiet` is recorded as held back, the one to `loud` goes out.
    const during = sim.addBlock({ internalTransactions: [call(quiet), call(loud)] });
    await waitFor(() => sent(during, loud), 15_000, "the alert the silence does not match");
    const heldBack = async () => {
      const reader = await openStore(quietCommon(), { path: store, readOnly: true });
      try {
        const entry = (await reader.listOutbox()).find((e) => e.alert.block === during && (e.alert.record as InternalTransactionListItem).to === quiet);
        return entry !== undefined && entry.state === "delivered" && (await readSuppressedNotes(reader, [entry]))[entry.id]?.reason === "silence";
      } finally {
        await reader.close();
      }
    };
    // The outcome of the pass reaches the file with the store's next write: poll for it.
    await waitFor(heldBack, 10_000, "the silenced alert recorded as held back");
    expect(sent(during, quiet)).toBe(false);

    const listed = await runCli("silence", "list", "--config", config, "--json");
    const [silence] = listed.out.trim().split("\n").map((line) => JSON.parse(line) as { id: string; expires_at: string; suppressed: number; match: Record<string, string> });
    expect(silence?.id).toBe(id);
    expect(silence?.match).toEqual({ to: quiet.toLowerCase() });
    expect(silence?.suppressed).toBe(1);

    // A second silence, removed again: it must not hold anything back afterwards.
    const second = await runCli("silence", "add", "--config", config, "--rule", "outflow", "--match", `to=${removed}`, "--for", "1h", "--reason", "by mistake");
    const secondId = /Silence (sil_[0-9a-f]{8}) added/.exec(second.out)?.[1];
    const removal = await runCli("silence", "remove", "--config", config, secondId ?? "missing");
    expect(removal.code).toBe(0);
    expect(removal.out).toContain("Its alerts are sent again from the next delivery round of the daemon");
    expect(removal.out).not.toContain("It holds");

    // After it expires by itself, alerts to `quiet` go out again.
    await waitFor(async () => (await runCli("silence", "list", "--config", config)).out.includes("No active silences."), 15_000, "the silence to expire");
    const after = sim.addBlock({ internalTransactions: [call(quiet), call(removed)] });
    await waitFor(() => sent(after, quiet) && sent(after, removed), 15_000, "the alerts after the silence ended");
    expect(sent(during, quiet)).toBe(false);

    daemon.process.kill("SIGTERM");
    expect((await daemon.exited).code).toBe(0);
  });

  it("shows the active silences on /status", async () => {
    const sim = await createSimulator({ seed: 5, initialBlocks: 5 });
    const dir = tempDir();
    cleanups.push(async () => {
      await sim.close();
      dir.remove();
    });
    const text = `
${simulatorHead(sim, { storePath: join(dir.path, "store.json"), listen: "127.0.0.1:0" })}
watches:
  - { name: wallet, account: "${sim.addresses.wallets[0]}", sources: [internal_transactions] }
rules:
  - { name: outflow, watch: wallet, notify: [out] }
sinks:
  out: { type: file, path: ${join(dir.path, "alerts.jsonl")} }
`;
    const config = join(dir.path, "config.yaml");
    writeFileSync(config, text);
    const daemon = await createDaemon(quietCommon(), { config: configFromText(text) });
    cleanups.push(() => daemon.stop());
    await daemon.start();
    const added = await runCli("silence", "add", "--config", config, "--rule", "outflow", "--match", "to=0x2222222222222222222222222222222222222222", "--for", "2h", "--reason", "migration");
    expect(added.out).toContain("It holds from the next delivery round of the daemon");
    const id = /Silence (sil_[0-9a-f]{8}) added/.exec(added.out)?.[1];
    const response = await fetch(`${daemon.statusUrl()}/status`);
    const status = (await response.json()) as { silences: Array<{ id: string; rule: string; match: Record<string, string>; reason: string; suppressed: number }> };
    expect(status.silences).toEqual([expect.objectContaining({ id, rule: "outflow", match: { to: "0x2222222222222222222222222222222222222222" }, reason: "migration", suppressed: 0 })]);
  });

  it("explains mistakes: an unknown rule, a missing --for or --reason, a malformed --match, an unknown id", async () => {
    const config = walletConfig();
    const typo = await runCli("silence", "add", "--config", config, "--rule", "outflw", "--for", "1h", "--reason", "x");
    expect(typo.code).toBe(2);
    expect(typo.err).toContain('did you mean "outflow"');
    expect((await runCli("silence", "add", "--config", config, "--rule", "outflow", "--reason", "x")).err).toContain("--for");
    expect((await runCli("silence", "add", "--config", config, "--rule", "outflow", "--for", "1h")).err).toContain("--comment");
    expect((await runCli("silence", "add", "--config", config, "--rule", "outflow", "--for", "90", "--reason", "x")).err).toContain('add a unit, e.g. "90s"');
    expect((await runCli("silence", "add", "--config", config, "--rule", "outflow", "--for", "1h", "--reason", "x", "--match", "to")).err).toContain("FIELD=VALUE");
    // Only fields that records of the rule's source have: token_id is an NFT transfer's, not an internal transaction's.
    const noField = await runCli("silence", "add", "--config", config, "--rule", "outflow", "--for", "1h", "--reason", "x", "--match", "token_id=5");
    expect(noField.code).toBe(2);
    expect(noField.err).toContain('internal_transactions records (the source of rule outflow) have no field "token_id"');
    for (const field of ["to", "transaction_status.status", "method_id"]) {
      const ok = await runCli("silence", "add", "--config", config, "--rule", "outflow", "--for", "1m", "--reason", "x", "--match", `${field}=y`);
      expect(ok.code, field).toBe(0);
    }
    for (const field of ["transaction_status.nope", "to.deeper"]) {
      expect((await runCli("silence", "add", "--config", config, "--rule", "outflow", "--for", "1m", "--reason", "x", "--match", `${field}=y`)).code, field).toBe(2);
    }
    const unknown = await runCli("silence", "remove", "--config", config, "sil_00000000");
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain("no active silence");

    // Without a daemon the silence goes into the store (created if need be), where the daemon finds it when it starts.
    const added = await runCli("silence", "add", "--config", config, "--rule", "outflow", "--for", "1h", "--reason", "nobody home");
    expect(added.code).toBe(0);
    expect(added.out).toContain("It holds from the next delivery round of the daemon");
    expect((await runCli("silence", "list", "--config", config)).out).toMatch(/sil_[0-9a-f]{8} +outflow +\(every alert\)/);
  });

  it("adds a label silence from matchers as Alertmanager writes them, and lists both kinds in one vocabulary", async () => {
    const config = walletConfig();
    const added = await runCli("silence", "add", "--config", config, 'severity="warning"', 'team=~"nft.*"', "--for", "2h", "--comment", "release night");
    expect(added.code).toBe(0);
    expect(added.out).toMatch(/^Silence sil_[0-9a-f]{8} added: any rule, \{severity="warning", team=~"nft\.\*"\}, until .*; reason: release night\n/);
    expect((await runCli("silence", "add", "--config", config, "--rule", "outflow", "--match", "to=0xAA", "--for", "1h", "--comment", "noisy")).code).toBe(0);
    const listed = (await runCli("silence", "list", "--config", config)).out;
    expect(listed).toMatch(/sil_[0-9a-f]{8} +\(any\) +\{severity="warning", team=~"nft\.\*"\} +/);
    expect(listed).toMatch(/sil_[0-9a-f]{8} +outflow +to=0xaa +/);
    const json = (await runCli("silence", "list", "--config", config, "--json")).out.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(json.map((s) => [s.rule, s.matchers, s.match])).toEqual([
      [undefined, ['severity="warning"', 'team=~"nft.*"'], {}],
      ["outflow", undefined, { to: "0xaa" }],
    ]);

    // Refused with the matcher parser's message, or because it would hold too much.
    const bad = await runCli("silence", "add", "--config", config, "severity", "--for", "1h", "--comment", "x");
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("bad matcher format: severity");
    expect((await runCli("silence", "add", "--config", config, 'team=~".*"', "--for", "1h", "--comment", "x")).err).toContain("must not match the empty string");
    expect((await runCli("silence", "add", "--config", config, "--for", "1h", "--comment", "x")).err).toContain("a silence of every alert is refused");
    expect((await runCli("silence", "add", "--config", config, "--match", "to=0xaa", "--for", "1h", "--comment", "x")).err).toContain("--match reads a rule's record fields: it needs --rule NAME");
  });
});
