import { afterEach, describe, expect, it } from "vitest";
import { mkdtemp, readFile, rm, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { createTestCommon } from "../../src/common/common.js";
import { createFileSink } from "../../src/notify/sinks/file.js";
import { createConsoleSink } from "../../src/notify/sinks/console.js";
import { createSink, validateSinkConfig } from "../../src/notify/create-sink.js";
import type { SinkOptions } from "../../src/notify/sinks/index.js";
import { SinkError } from "../../src/notify/sink.js";
import { SinkConfigError } from "../../src/notify/errors.js";
import { HOSTILE, HOSTILE_NAME, INVISIBLE_OR_BIDI, digest, nftAlert, single } from "./fixtures.js";

const signal = new AbortController().signal;
let dir = "";
afterEach(async () => {
  if (dir !== "") await rm(dir, { recursive: true, force: true });
  dir = "";
});

describe("file sink", () => {
  it("appends one valid JSON line per alert, across deliveries", async () => {
    dir = await mkdtemp(join(tmpdir(), "kw-file-"));
    const path = join(dir, "alerts.jsonl");
    const sink = createFileSink(createTestCommon(), "audit-file", { path });
    const first = single(nftAlert({}, `${HOSTILE_NAME}\n${HOSTILE.crlf}`));
    const second = digest(3);
    await sink.send(first, signal);
    await sink.send(second, signal);
    const lines = (await readFile(path, "utf8")).split("\n");
    expect(lines.pop()).toBe("");
    expect(lines).toHaveLength(4);
    const docs = lines.map((l) => JSON.parse(l) as { id: string; enrichment: unknown });
    expect(docs.map((d) => d.id)).toEqual([...first.alerts, ...second.alerts].map((a) => a.id));
    // The document is stored as received: data, byte for byte.
    expect(docs[0]!.enrichment).toEqual(first.alerts[0]!.enrichment);
  });

  it("a missing directory is a retryable SinkError naming the sink", async () => {
    dir = await mkdtemp(join(tmpdir(), "kw-file-"));
    const sink = createFileSink(createTestCommon(), "audit-file", { path: join(dir, "missing", "alerts.jsonl") });
    const error = (await sink.send(single(), signal).catch((e: unknown) => e)) as SinkError;
    expect(error).toBeInstanceOf(SinkError);
    expect(error.permanent).toBe(false);
    expect(error.message).toContain("sink audit-file (file)");
    await mkdir(join(dir, "missing"));
    await sink.send(single(), signal);
  });
});

describe("console sink", () => {
  it("writes readable, sanitized lines", async () => {
    const stream = new PassThrough();
    const chunks: string[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c.toString("utf8")));
    const sink = createConsoleSink(createTestCommon(), "stdout", {}, stream);
    await sink.send(single(nftAlert({ summary: `${HOSTILE_NAME} \u001b[2J\u001b[31mred` })), signal);
    await sink.send(digest(30, "Kitty"), signal);
    const out = chunks.join("");
    expect(out).not.toMatch(INVISIBLE_OR_BIDI);
    // eslint-disable-next-line no-control-regex
    expect(out).not.toMatch(/[\u0000-\u0009\u000B-\u001F\u007F-\u009F]/);
    expect(out).toContain("<U+001B>[2J");
    expect(out).toContain("invoice<U+202E>gpj.exe");
    const lines = out.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^\[kaiawatch\] collection-feed · collection · nft_transfers · mainnet · block \d+$/);
    expect(lines[2]).toMatch(/^ {2}https:\/\/kaiascan\.io\/tx\/0x/);
    expect(lines[3]).toMatch(/^\[kaiawatch\] 30 NFT transfers .*; first 20 shown$/);
    expect(lines).toHaveLength(3 + 1 + 20);
  });
});

describe("createSink", () => {
  it("builds each type and collects problems per type", () => {
    const common = createTestCommon();
    const configs: SinkOptions[] = [
      { type: "slack", url: "https://hooks.slack.com/services/T/B/x" },
      { type: "discord", url: "https://discord.com/api/webhooks/1/x" },
      { type: "telegram", bot_token: "1:abc", chat_id: "@mychannel", api_url: "https://api.telegram.org" },
      { type: "email", smtp: { host: "smtp.example.com", port: 587, secure: false, starttls: true, timeout: 30_000 }, from: "a@example.com", to: ["b@example.com"], cc: [] },
      { type: "webhook", url: "https://example.com/hook", headers: {}, timeout: 10_000, allow_http: false },
      { type: "console" },
      { type: "file", path: "./alerts.jsonl" },
    ];
    for (const config of configs) {
      expect(validateSinkConfig(config)).toEqual([]);
      const sink = createSink(common, `s-${config.type}`, config);
      expect(sink.type).toBe(config.type);
      void sink.close?.();
    }
    expect(validateSinkConfig({ type: "pager" } as unknown as SinkOptions)).toEqual([{ key: "type", message: expect.stringContaining("unknown sink type 'pager'") as string }]);
    expect(() => createSink(common, "x", { type: "pager" } as unknown as SinkOptions)).toThrow(SinkConfigError);
    expect(validateSinkConfig({ type: "slack", url: "ftp://x" })).toEqual([{ key: "url", message: "must be an https URL, not ftp" }]);
    expect(validateSinkConfig({ type: "slack", url: "not a url/with-secret" })[0]!.message).not.toContain("with-secret");
  });
});
