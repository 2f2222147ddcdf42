import { validateSinkConfig } from "../../src/notify/create-sink.js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, ConfigFileError, describeConfigFailure, loadConfig, parseConfigText, type ConfigCheck } from "../../src/config/index.js";
import { CONFIG_CHECKS } from "../../src/daemon/config-checks.js";
import { ADDRESS_A, ADDRESS_B, configErrorOf, positionIn } from "./helpers.js";

const MINIMAL = `watches:\n  - name: w\n    account: "${ADDRESS_A}"\n`;

describe("defaults", () => {
  it("completes a minimal config with every documented default", () => {
    const { config, secrets } = parseConfigText(MINIMAL);
    expect(config.explorer).toEqual({ base_url: "https://mainnet-oapi.kaiascan.io", requests_per_second: 5, max_retries: 5, timeout: 30_000, request_deadline: 60_000, page_size: 2000, api_plan: "FREE" });
    expect(config.chain).toEqual({ network: "mainnet", rpc_url: "https://public-en.node.kaia.io", lag_blocks: 2, explorer_url: "https://kaiascan.io", request_deadline: 30_000, head_interval: 200, requests_per_second: 10, max_request_bytes: 524_288, traces: false });
    expect(config.store).toEqual({ path: "./data/kaiawatch.db", lease: 10_000, retention: 7 * 86_400_000, statement_timeout: 10_000, lock_timeout: 3_000, pool_timeout: 5_000 });
    expect(config.status).toEqual({ listen: { host: "127.0.0.1", port: 9464 }, allowed_hosts: [], write_token_file: "data/status-write-token", trust_loopback: false, frozen_after: 30_000 });
    expect(config.log).toEqual({ level: "info", format: "json" });
    expect(config.defaults).toEqual({ schedule: "*/10 * * * * *", start: { kind: "latest" }, max_window_blocks: 1000, jitter: 1000, tick_timeout: 600_000, source: "explorer" });
    expect(config.watches).toEqual([
      { name: "w", kind: "account", account: ADDRESS_A, sources: ["nft_transfers"], nft_contract: undefined, tokens: [], methods: [], schedule: "*/10 * * * * *", start: { kind: "latest" }, max_window_blocks: 1000, jitter: 1000, via: "auto", source: "explorer" },
    ]);
    expect(config.rules).toEqual([]);
    expect(config.sinks).toEqual({});
    expect(secrets).toEqual([]);
  });

  it("lets a watch override the defaults, and the defaults apply to the others", () => {
    const { config } = parseConfigText(`
defaults: { schedule: "0 * * * * *", start: 5000, max_window_blocks: 200, jitter: 250ms }
watches:
  - { name: a, every_block: true, schedule: "*/2 * * * * *", start: "-30", max_window_blocks: 10, jitter: 0s }
  - { name: b, collection: "${ADDRESS_B}", token_id: 7 }
`);
    const [a, b] = config.watches;
    expect(a).toMatchObject({ kind: "every_block", schedule: "*/2 * * * * *", start: { kind: "relative", blocks: 30 }, max_window_blocks: 10, jitter: 0 });
    expect(b).toMatchObject({ kind: "collection", token_id: "7", schedule: "0 * * * * *", start: { kind: "block", block: 5000 }, max_window_blocks: 200, jitter: 250 });
  });

  it("takes the URLs of the network, and asks for them when it does not know the network", () => {
    const { config } = parseConfigText(`chain: { network: kairos }\n${MINIMAL}`);
    expect(config.explorer.base_url).toBe("https://kairos-oapi.kaiascan.io");
    expect(config.chain.rpc_url).toBe("https://public-en-kairos.node.kaia.io");
    expect(config.chain.explorer_url).toBe("https://kairos.kaiascan.io");

    const error = configErrorOf(() => parseConfigText(`chain:\n  network: devnet\n  rpc_url: http://127.0.0.1:8551\n${MINIMAL}`));
    expect(error.issues.map((i) => i.path).sort()).toEqual(["chain.explorer_url", "explorer.base_url"]);
    expect(error.issues[0]?.message).toContain('required for network "devnet"');
  });

  it("fills sink defaults per type and resolves a rule's only source", () => {
    const { config } = parseConfigText(`
watches:
  - { name: c, contract: "${ADDRESS_A}" }
rules:
  - { name: r, watch: c, notify: [s, d, m, h] }
sinks:
  s: { type: slack, url: "https://hooks.example/s" }
  d: { type: discord, url: "https://discord.example/d" }
  m: { type: email, smtp: { host: mail.example, secure: true }, from: "kaiawatch <a@example.com>", to: [ops@example.com] }
  h: { type: webhook, url: "http://10.0.0.1/h", allow_http: true }
`);
    expect(config.rules[0]).toMatchObject({ source: "event_logs", enrich: [] });
    expect(config.rules[0]?.when).toBeUndefined();
    expect(config.sinks.s).toMatchObject({ name: "s", rate_per_second: 1, concurrency: 1, max_attempts: 10, max_age: 86_400_000, operational: false });
    expect(config.sinks.d?.rate_per_second).toBe(0.5);
    expect(config.sinks.m).toMatchObject({ type: "email", smtp: { port: 465, secure: true, starttls: false, timeout: 30_000 }, cc: [] });
    // secure: true alone is a complete TLS setting: no check may ask for starttls: false as well.
    expect(validateSinkConfig(config.sinks.m!)).toEqual([]);
    expect(config.sinks.m?.rate_per_second).toBeUndefined();
    expect(config.sinks.h).toMatchObject({ type: "webhook", timeout: 10_000, headers: {} });
  });

  it("asks for a rule's source when its watch produces two families", () => {
    const text = `${MINIMAL}    sources: [nft_transfers, internal_transactions]\nrules:\n  - name: r\n    watch: w\n    notify: [t]\nsinks:\n  t: { type: console }\n`;
    const error = configErrorOf(() => parseConfigText(text));
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]).toMatchObject({ path: "rules[0].source", line: positionIn(text, "- name: r").line });
    expect(error.issues[0]?.message).toContain('required: watch "w" produces nft_transfers and internal_transactions');
  });
});

describe("matches patterns", () => {
  it("refuses what RE2 cannot match in linear time at the pattern's key path and line, and accepts what only froze a backtracking engine", () => {
    const text = `${MINIMAL}    sources: [internal_transactions]
rules:
  - name: r
    watch: w
    when:
      any:
        - fail_message: { matches: "/(a|aa)+$/" }
        - error: { matches: "(?<!not )owner" }
        - fail_message: { matches: "(a)\\\\1" }
    notify: [t]
sinks:
  t: { type: console }
`;
    const error = configErrorOf(() => parseConfigText(text, { checks: CONFIG_CHECKS })); // as validate and run check it
    expect(error.issues.map((i) => [i.path, i.line])).toEqual([
      ["rules[0].when.any[1].error.matches", positionIn(text, "(?<!").line],
      ["rules[0].when.any[2].fail_message.matches", positionIn(text, "(a)").line],
    ]);
    expect(error.issues[0]?.message).toMatch(/lookbehind \(\(\?<= or \(\?<!\), which cannot be matched in linear time/);
    expect(error.issues[1]?.message).toMatch(/a backreference \(\\1 to \\9\)/);
  });
});

describe("environment variables", () => {
  it("substitutes ${VAR}, ${VAR:-default} and $${ after parsing", () => {
    const text = `
explorer:
  api_key: \${KEY}
  base_url: \${BASE:-https://kairos-oapi.kaiascan.io}
status:
  token: "\${TOKEN:-}"
watches:
  - name: w
    contract: "${ADDRESS_A}"
rules:
  - name: r
    watch: w
    notify: [h]
    summary: "cost $\${PRICE} for \${WHO}-x"
sinks:
  h:
    type: email
    smtp:
      host: \${SMTP_HOST}
      port: \${SMTP_PORT:-2525}
      secure: \${SECURE}
    from: a@example.com
    to: [b@example.com]
`;
    const { config, secrets } = parseConfigText(text, { env: { KEY: "secret-key-1", TOKEN: "", WHO: "ops", SMTP_HOST: "mail.example", SECURE: "false" } });
    expect(config.explorer.api_key).toBe("secret-key-1");
    expect(config.explorer.base_url).toBe("https://kairos-oapi.kaiascan.io");
    expect(config.status.token).toBeUndefined(); // empty means unset
    expect(config.rules[0]?.summary).toBe("cost ${PRICE} for ops-x");
    const sink = config.sinks.h;
    expect(sink?.type === "email" && sink.smtp).toMatchObject({ host: "mail.example", port: 2525, secure: false });
    expect(secrets).toEqual(["secret-key-1"]);
  });

  it("keeps a substituted number a string where the schema wants a string", () => {
    const text = `${MINIMAL}sinks:\n  m:\n    type: email\n    smtp: { host: h, user: "\${U}", pass: "\${P}" }\n    from: a@example.com\n    to: [b@example.com]\n`;
    const { config } = parseConfigText(text, { env: { U: "1234567", P: "0042" } });
    const sink = config.sinks.m;
    expect(sink?.type === "email" && [sink.smtp.user, sink.smtp.pass]).toEqual(["1234567", "0042"]);
  });

  it("reports every unset variable, by name, at the reference", () => {
    const text = `explorer:\n  api_key: \${KAIASCAN_API_KEY}\n${MINIMAL}sinks:\n  s:\n    type: slack\n    url: "https://hooks.example/\${SLACK_PATH}"\n`;
    const error = configErrorOf(() => parseConfigText(text, { env: {} }));
    expect(error.issues.map((i) => [i.path, i.line, i.column, i.message])).toEqual([
      ["explorer.api_key", 2, 12, "environment variable KAIASCAN_API_KEY is not set (set it, or write ${KAIASCAN_API_KEY:-default})"],
      ["sinks.s.url", positionIn(text, "${SLACK_PATH}").line, positionIn(text, "${SLACK_PATH}").column, "environment variable SLACK_PATH is not set (set it, or write ${SLACK_PATH:-default})"],
    ]);
  });

  it("refuses a malformed reference", () => {
    const error = configErrorOf(() => parseConfigText(`explorer:\n  api_key: "\${1KEY}"\n${MINIMAL}`));
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]?.message).toContain('"${1KEY}" is not a variable reference');
    const unclosed = configErrorOf(() => parseConfigText(`explorer:\n  api_key: "\${KEY"\n${MINIMAL}`));
    expect(unclosed.issues[0]?.message).toContain('unclosed "${"');
  });

  it("does not substitute in keys", () => {
    const error = configErrorOf(() => parseConfigText(`explorer:\n  \${X}: 1\n${MINIMAL}`, { env: { X: "timeout" } }));
    expect(error.issues[0]).toMatchObject({ path: 'explorer["${X}"]', message: "unknown key" });
  });
});

describe("unknown keys", () => {
  it("suggests the closest key within two edits, and nothing when none is close", () => {
    const text = `chain:\n  lag_block: 1\n  network_name: x\n${MINIMAL}    shedule: "* * * * * *"\n`;
    const error = configErrorOf(() => parseConfigText(text));
    expect(error.format().split("\n")).toEqual([
      'config.yaml:2:3 chain.lag_block: unknown key (did you mean "lag_blocks"?)',
      "config.yaml:3:3 chain.network_name: unknown key",
      'config.yaml:7:5 watches[0].shedule: unknown key (did you mean "schedule"?)',
    ]);
  });

  it("reports a misspelt top-level section and sink option", () => {
    const text = `${MINIMAL}sinkz: {}\nsinks:\n  t: { type: console, concurency: 2 }\n`;
    const error = configErrorOf(() => parseConfigText(text));
    expect(error.issues.map((i) => `${i.path}: ${i.message}`)).toEqual([
      'sinkz: unknown key (did you mean "sinks"?)',
      'sinks.t.concurency: unknown key (did you mean "concurrency"?)',
    ]);
  });
});

describe("durations and values", () => {
  it("turns durations into milliseconds", () => {
    const { config } = parseConfigText(`explorer: { timeout: 1h30m }\ndefaults: { jitter: 500ms }\n${MINIMAL}`);
    expect(config.explorer.timeout).toBe(5_400_000);
    expect(config.defaults.jitter).toBe(500);
  });

  it("refuses plain numbers and unknown units with a hint", () => {
    const text = `explorer: { timeout: 30 }\ndefaults: { jitter: 2 weeks }\n${MINIMAL}`;
    const error = configErrorOf(() => parseConfigText(text));
    expect(error.issues.map((i) => `${i.line}:${i.column} ${i.path}: ${i.message}`)).toEqual([
      '1:22 explorer.timeout: a duration needs a unit, e.g. "30ms" or "30s"',
      '2:21 defaults.jitter: not a duration: use ms, s, m, h or d, e.g. "500ms", "30s", "5m", "1h30m"',
    ]);
  });

  it("checks ranges, enums, schedules, addresses and signatures", () => {
    const text = `explorer:
  page_size: 5000
  requests_per_second: 0
log:
  level: verbos
watches:
  - name: t
    contract: "0x${"a".repeat(39)}"
    events:
      - Transfer(address,address,uint)
      - "0x1234"
      - Approval(address,address

    schedule: "61 * * * * *"
`;
    const error = configErrorOf(() => parseConfigText(text));
    expect(error.issues.map((i) => `${i.path}: ${i.message}`)).toEqual([
      "explorer.page_size: must be <= 2000",
      "explorer.requests_per_second: must be > 0",
      'log.level: must be one of "trace", "debug", "info", "warn", "error", "fatal", "silent"',
      "watches[0].contract: not an address (0x followed by 40 hex digits)",
      "watches[0].events[0]: not an event signature: write uint256/int256, not uint/int (the hash uses the canonical type)",
      "watches[0].events[1]: not a topic hash (0x followed by 64 hex digits)",
      'watches[0].events[2]: not an event signature: it has no ")"; in a [ ] list, quote each signature ("Transfer(address,address,uint256)"), as commas separate items',
      "watches[0].schedule: not a schedule: Invalid value for second: 61",
    ]);
  });

  it("points a missing key at the map that lacks it", () => {
    const text = `${MINIMAL}sinks:\n  m:\n    type: email\n    smtp: { host: h }\n    from: a@example.com\n`;
    const error = configErrorOf(() => parseConfigText(text));
    expect(error.issues).toEqual([{ file: "config.yaml", line: 5, column: 3, path: "sinks.m.to", message: "required" }]);
  });

  it("needs at least one watch", () => {
    expect(configErrorOf(() => parseConfigText("log: { level: info }\n")).format()).toBe("config.yaml:1:1 watches: required: add at least one watch");
    expect(configErrorOf(() => parseConfigText("watches: []\n")).format()).toBe("config.yaml:1:10 watches: add at least one watch");
    expect(configErrorOf(() => parseConfigText("")).format()).toContain("the configuration is empty");
  });

  it("refuses a webhook secret that is not whsec_ and plain http without allow_http", () => {
    const text = `${MINIMAL}sinks:\n  h: { type: webhook, url: "https://x.example/h", secret: "abc" }\n`;
    expect(configErrorOf(() => parseConfigText(text)).issues[0]?.message).toContain('starts with "whsec_"');
  });
});

describe("YAML problems", () => {
  it("reports a syntax error with its position and nothing after it", () => {
    const text = `watches:\n  - name: w\n    account: [unclosed\n  - name: 5\n`;
    const error = configErrorOf(() => parseConfigText(text, { fileName: "broken.yaml" }));
    expect(error.issues.length).toBeGreaterThanOrEqual(1);
    expect(error.issues[0]).toMatchObject({ file: "broken.yaml", line: 4 });
    expect(error.issues[0]?.message).toMatch(/^YAML syntax error: /);
    expect(error.issues.every((i) => i.message.startsWith("YAML syntax error"))).toBe(true);
  });

  it("reports a one-space mis-indent under a sink once, at the deeper line, with the lines and no key path read from the broken tree", () => {
    // The parser folds every following line into one more nested key: four errors whose paths were
    // `sinks.ops-webhook.type["webhook url"]["http://127.0.0.1:9/webhook secret"]…`.
    const text = `${MINIMAL}sinks:\n  ops-webhook:\n    type: webhook\n     url: http://127.0.0.1:9/webhook\n     secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n     max_attempts: 5\n     timeout: 5s\n`;
    const line = text.split("\n").indexOf("     url: http://127.0.0.1:9/webhook") + 1;
    const error = configErrorOf(() => parseConfigText(text));
    expect(error.issues).toEqual([
      {
        file: "config.yaml",
        line,
        column: 6,
        path: "",
        message: `YAML syntax error: this line is indented more than the key on line ${line - 1} above it, so YAML reads it as part of that key's value; keys of one map start in the same column`,
        excerpt: `  ${line - 1} |     type: webhook\n  ${line} |      url: [redacted]\n    |      ^`,
      },
    ]);
    expect(error.format()).not.toContain("whsec_");
  });

  it("reports only the first of several syntax errors, its caret under the line's first character", () => {
    const text = `${MINIMAL}sinks:\n  hook:\n    type: webhook\n   secret: x\n  other: { type: console\n`;
    const line = text.split("\n").indexOf("   secret: x") + 1;
    const error = configErrorOf(() => parseConfigText(text));
    expect(error.format()).toBe(`config.yaml:${line}:4 YAML syntax error: All mapping items must start at the same column\n  ${line} |    secret: [redacted]\n    |    ^`);
  });

  it("hints at quoting ${VAR} inside a flow map", () => {
    const error = configErrorOf(() => parseConfigText(`explorer: { api_key: \${KEY} }\n${MINIMAL}`, { env: { KEY: "k" } }));
    expect(error.issues[0]?.message).toContain('quote "${…}"');
    expect(error.issues[0]).toMatchObject({ line: 1 });
  });

  it("reports duplicate keys together with the other problems", () => {
    const text = `${MINIMAL}log:\n  level: info\n  level: debug\nstore:\n  path: 5\n`;
    const error = configErrorOf(() => parseConfigText(text));
    expect(error.format().split("\n")).toEqual([
      "config.yaml:6:3 log.level: duplicate key (a key may appear only once in a map)",
      "config.yaml:8:9 store.path: expected a string, got an integer",
    ]);
  });

  it("follows anchors and merge keys, and places problems inside them", () => {
    const text = `
watches:
  - name: w
    account: &addr "${ADDRESS_A}"
  - name: v
    collection: *addr
sinks:
  base: &base { type: console, concurrency: 3, max_age: 1h }
  t:
    <<: *base
    max_attempts: 2
`;
    const { config } = parseConfigText(text);
    expect(config.watches[1]).toMatchObject({ kind: "collection", collection: ADDRESS_A });
    expect(config.sinks.t).toMatchObject({ type: "console", concurrency: 3, max_age: 3_600_000, max_attempts: 2 });
    const error = configErrorOf(() => parseConfigText(text.replace("concurrency: 3", "concurrency: 0")));
    expect(error.issues.map((i) => `${i.path}: ${i.message}`)).toEqual(["sinks.base.concurrency: must be >= 1", "sinks.t.concurrency: must be >= 1"]);
    expect(error.issues[0]?.line).toBe(positionIn(text, "&base").line);
  });
});

describe("checks from other subsystems", () => {
  const text = `
watches:
  - name: w
    every_block: true
rules:
  - name: broken
    watch: w
    notify: []
  - name: good
    watch: w
    when: { status: Fail }
    notify: [t]
sinks:
  t: { type: console }
`;
  // A condition the rules' compile accepts, refused by another subsystem's check.
  const noStatus: ConfigCheck = (config) =>
    config.rules.flatMap((rule, i) => ("status" in (rule.when ?? {}) ? [{ path: ["rules", i, "when", "status"], message: `no status for ${rule.source}` }] : []));

  it("run with the valid parts and report at the right line, together with the schema's problems", () => {
    const error = configErrorOf(() => parseConfigText(text, { checks: [noStatus] }));
    expect(error.issues.map((i) => `${i.line}:${i.column} ${i.path}: ${i.message}`)).toEqual([
      `${positionIn(text, "[]").line}:${positionIn(text, "[]").column} rules[0].notify: must not be empty`,
      // rules[0] is invalid and left out of the config the check sees: its rules[0] is the file's rules[1].
      `${positionIn(text, "Fail").line}:${positionIn(text, "Fail").column} rules[1].when.status: no status for internal_transactions`,
    ]);
  });

  it("see a complete config when it is valid", () => {
    const seen: string[] = [];
    parseConfigText(text.replace("notify: []", "notify: [t]"), {
      checks: [
        (config) => {
          seen.push(...config.rules.map((r) => `${r.name}/${r.source}`));
          return [];
        },
      ],
    });
    expect(seen).toEqual(["broken/internal_transactions", "good/internal_transactions"]);
  });
});

describe("secrets", () => {
  it("lists every secret value for the log scrubber", () => {
    const { secrets } = parseConfigText(
      `
explorer: { api_key: api-key-1 }
status: { token: status-token-00001 }
${MINIMAL}
sinks:
  s: { type: slack, url: "https://hooks.slack.com/services/T/B/slack1" }
  d: { type: discord, url: "https://discord.com/api/webhooks/1/discord1" }
  w: { type: webhook, url: "https://x.example/h", secret: "whsec_c2VjcmV0MQ==", headers: { Authorization: "Bearer header-1" } }
  m: { type: email, smtp: { host: h, user: smtp-user-1, pass: smtp-pass-1 }, from: a@example.com, to: [b@example.com] }
  t: { type: telegram, bot_token: "123456:telegram1", chat_id: 5 }
  c: { type: console }
`,
    );
    expect([...secrets].sort()).toEqual(
      [
        "api-key-1",
        "status-token-00001",
        "https://hooks.slack.com/services/T/B/slack1",
        "https://discord.com/api/webhooks/1/discord1",
        "https://x.example/h",
        "whsec_c2VjcmV0MQ==",
        "Bearer header-1",
        "smtp-user-1",
        "smtp-pass-1",
        "123456:telegram1",
        // The secret URLs' parts but names (issue 41): a receiver may quote one alone.
        "T",
        "B",
        "slack1",
        "/services/T",
        "1",
        "discord1",
        "/api/webhooks/1",
      ].sort(),
    );
  });
});

describe("loadConfig", () => {
  const dir = mkdtempSync(join(tmpdir(), "kaiawatch-config-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reads a file and names it in messages", async () => {
    const path = join(dir, "bad.yaml");
    writeFileSync(path, `${MINIMAL}    start: soon\n`);
    const error = (await loadConfig({ path, env: {} }).catch((rejected: unknown) => rejected)) as ConfigError;
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.format()).toBe(`${path}:4:12 watches[0].start: expected "latest", a block number, or "-N" (N blocks before the head)`);
    expect(describeConfigFailure(error)).toBe(`${path}: 1 error in the configuration:\n${error.format()}\n`);
    const good = join(dir, "good.yaml");
    writeFileSync(good, MINIMAL);
    expect((await loadConfig({ path: good, env: {} })).config.watches).toHaveLength(1);
  });

  it("says clearly when the file is missing", async () => {
    const path = join(dir, "nope.yaml");
    const caught: unknown = await loadConfig({ path, env: {} }).catch((error: unknown) => error);
    expect(caught).toBeInstanceOf(ConfigFileError);
    expect(caught).not.toBeInstanceOf(ConfigError);
    expect((caught as ConfigFileError).code).toBe("KW_CONFIG_UNREADABLE");
    expect((caught as Error).message).toBe(`config file not found: ${path} (start from config.example.yaml, or pass --config PATH)`);
  });
});
