import { describe, expect, it } from "vitest";
import { explorerLinkWarning } from "../../src/config/link-warning.js";
import { createSimulator } from "../../src/simulator/index.js";
import { configFromText } from "../helpers/harness.js";

/**
 * Issue 30: a config reading another explorer (here the simulator) with `network: mainnet`
 * linked its synthetic transactions to kaiascan.io. It is warned of, and the simulator's own
 * /tx/… and /block/… pages answer.
 */
const config = (chain: string) =>
  configFromText(`
explorer: { base_url: "http://127.0.0.1:8080" }
chain: { ${chain} }
store: { path: /tmp/unused.db }
watches: [{ name: token, contract: "0x3333333333333333333333333333333333333333" }]
rules: [{ name: logs, watch: token, notify: [out] }]
sinks: { out: { type: console } }
`);

describe("links of another explorer", () => {
  it("warns when base_url is not KaiaScan's and the links still go to kaiascan.io", () => {
    expect(explorerLinkWarning(config("rpc_url: http://127.0.0.1:8080"))).toContain("explorer.base_url (127.0.0.1:8080) is not KaiaScan's API for network mainnet, but alert links go to https://kaiascan.io");
    expect(explorerLinkWarning(config("rpc_url: http://127.0.0.1:8080, explorer_url: http://127.0.0.1:8080"))).toBeUndefined();
    expect(
      explorerLinkWarning(
        configFromText(`
watches: [{ name: token, contract: "0x3333333333333333333333333333333333333333" }]
rules: [{ name: logs, watch: token, notify: [out] }]
sinks: { out: { type: console } }
`),
      ),
    ).toBeUndefined();
  });

  it("the simulator serves the /tx/… and /block/… pages alerts link to", async () => {
    const sim = await createSimulator({ seed: 48, initialBlocks: 3 });
    try {
      const hash = `0x${"ab".repeat(32)}`;
      const tx = await fetch(`${sim.url}/tx/${hash}`);
      expect(tx.status).toBe(200);
      expect(tx.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const html = await tx.text();
      expect(html).toContain(`<h1>Transaction ${hash}</h1>`);
      expect(html).toContain(`href="/api/v1/transactions/${hash}/internal-transactions"`);
      expect((await fetch(`${sim.url}/block/${sim.head()}`)).status).toBe(200);
      expect((await fetch(`${sim.url}/tx/not-a-hash`)).status).toBe(404);
    } finally {
      await sim.close();
    }
  });
});
