import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/index.js";
import { definitionsOfWatch } from "../../src/watch/plan.js";
import { ADDRESS_A, ADDRESS_B, configErrorOf, issueAt } from "./helpers.js";

describe("a watch's source (explorer, node or both)", () => {
  it("is explorer unless the watch or defaults.source says otherwise", () => {
    const text = (defaults: string) => `
${defaults}
watches:
  - { name: a, contract: "${ADDRESS_A}" }
  - { name: b, collection: "${ADDRESS_B}", source: both }
  - { name: c, account: "${ADDRESS_A}", source: explorer }
  - { name: d, every_block: true }
`;
    expect(parseConfigText(text("")).config.watches.map((w) => w.source)).toEqual(["explorer", "both", "explorer", "explorer"]);
    // every_block reads internal transactions, which are not logs: from the explorer, unless the node traces blocks.
    expect(parseConfigText(text("defaults: { source: node }")).config.watches.map((w) => w.source)).toEqual(["node", "both", "explorer", "explorer"]);
    expect(parseConfigText(text("defaults: { source: node }\nchain: { traces: true }")).config.watches.map((w) => w.source)).toEqual(["node", "both", "explorer", "node"]);
  });

  it("with chain.traces, is taken by every_block watches and by account watches of internal transactions alone", () => {
    const { config } = parseConfigText(`
chain: { traces: true }
watches:
  - { name: blocks, every_block: true, source: both }
  - { name: calls, account: "${ADDRESS_A}", sources: [internal_transactions], source: node }
`);
    expect(config.chain.traces).toBe(true);
    expect(config.watches.map((w) => w.source)).toEqual(["both", "node"]);
    expect(parseConfigText(`watches: [{ name: a, every_block: true }]`).config.chain.traces).toBe(false);
  });

  it("is refused where it reads nothing, at its key and line", () => {
    const text = `
watches:
  - name: blocks
    every_block: true
    source: node
  - name: calls
    account: "${ADDRESS_A}"
    sources: [internal_transactions]
    source: both
  - name: bad
    contract: "${ADDRESS_B}"
    source: nodes
`;
    const at = issueAt(text, configErrorOf(() => parseConfigText(text, { fileName: "test.yaml" })));
    at("source: node", "watches[0].source", "an every_block watch reads internal transactions, which the node gives only by tracing blocks: set chain.traces: true");
    at("source: both", "watches[1].source", "reads an account watch's nft_transfers and tokens (internal_transactions too with chain.traces: true, where chain.rpc_url traces blocks); this one has neither");
    at("source: nodes", "watches[2].source", '"explorer", "node", "both"');
  });

  it("with chain.traces, refuses the internal transaction fields the node's records lack (node, both) or tell otherwise (both), at their line", () => {
    const text = `
chain: { traces: true }
sinks: { out: { type: console } }
watches:
  - { name: blocks, every_block: true, source: node }
  - { name: calls, account: "${ADDRESS_A}", sources: [internal_transactions], source: both }
  - { name: old, account: "${ADDRESS_B}", sources: [internal_transactions] }
rules:
  - { name: named, watch: blocks, when: { signature: { starts_with: withdraw } }, notify: [out] }
  - { name: both-message, watch: calls, source: internal_transactions, when: { fail_message: { contains: "x" } }, notify: [out] }
  - { name: node-message, watch: blocks, when: { fail_message: { contains: "insufficient" } }, notify: [out] }
  - { name: explorer-named, watch: old, source: internal_transactions, when: { signature: { starts_with: withdraw }, fail_message: { contains: "EVM" } }, notify: [out] }
`;
    const error = configErrorOf(() => parseConfigText(text, { fileName: "test.yaml" }));
    const at = issueAt(text, error);
    at("signature: { starts_with: withdraw } }, notify: [out] }\n  - { name: both", "rules[0].when.signature", '"signature" has no value in the node\'s records (the explorer names the selector from its own database');
    at('fail_message: { contains: "x" }', "rules[1].when.fail_message", "\"fail_message\" has another text in the node's records than in the explorer's, and with source: both either may make the alert");
    // The node's own text is allowed under node, and the explorer's fields under explorer.
    expect(error.issues).toHaveLength(2);
  });

  it("reads events written with indexed and names as their canonical form's topic0", () => {
    const { config } = parseConfigText(`
watches:
  - { name: named, contract: "${ADDRESS_A}", events: ["Transfer(address indexed from, address indexed to, uint256 value)"] }
  - { name: plain, contract: "${ADDRESS_A}", events: ["Transfer(address,address,uint256)"] }
`);
    const [named, plain] = config.watches.map((w) => definitionsOfWatch("mainnet", w));
    expect(named).toEqual(plain);
    expect(named?.[0]?.signature).toBe("0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");
  });
});
