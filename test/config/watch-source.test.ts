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
    // every_block reads internal transactions, which are not logs: always from the explorer.
    expect(parseConfigText(text("defaults: { source: node }")).config.watches.map((w) => w.source)).toEqual(["node", "both", "explorer", "explorer"]);
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
    at("source: node", "watches[0].source", "applies to contract, collection and account watches only");
    at("source: both", "watches[1].source", "reads an account watch's nft_transfers and tokens; this one has neither");
    at("source: nodes", "watches[2].source", '"explorer", "node", "both"');
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
