import { describe, expect, it } from "vitest";
import { describeConfigFailure, parseConfigText } from "../../src/config/index.js";
import { toChecksumAddress } from "../../src/chain/address.js";

const LOWER = "0x52908400098527886e0f7030069857d2e4169ee7";
const GOOD = toChecksumAddress(LOWER);
// One letter's case flipped: the checksum no longer matches.
const TYPO = GOOD.replace(/[A-F]/, (c) => c.toLowerCase());

const configWith = (account: string) => `
explorer: { base_url: "http://127.0.0.1:1" }
chain: { rpc_url: "http://127.0.0.1:1" }
watches:
  - { name: hot, account: "${account}", sources: [internal_transactions] }
rules:
  - { name: r, watch: hot, notify: [out] }
sinks:
  out: { type: console }
`;

function problemsOf(account: string): string[] {
  try {
    parseConfigText(configWith(account), { fileName: "c.yaml", env: {} });
    return [];
  } catch (error) {
    return [describeConfigFailure(error) ?? String(error)];
  }
}

describe("watch addresses", () => {
  it("get the EIP-55 check rule addresses get: a mixed-case typo is refused, lowercase and checksummed pass", () => {
    expect(TYPO).not.toBe(GOOD);
    expect(problemsOf(LOWER)).toEqual([]);
    expect(problemsOf(LOWER.toUpperCase().replace("0X", "0x"))).toEqual([]);
    expect(problemsOf(GOOD)).toEqual([]);
    const [problem] = problemsOf(TYPO);
    expect(problem).toContain("EIP-55");
    expect(problem).toContain("watches");
  });
});
