import type { ServerResponse } from "node:http";
import type { Meter } from "./meter.js";

/**
 * The explorer site's pages that alerts link to (chain.explorer_url set to the simulator):
 * a short page saying what the transaction or block is, with its API lists, rather than a
 * 404 (the chain is synthetic: kaiascan.io has none of it).
 */
export function answerSitePage(res: ServerResponse, meter: Meter, seed: number, head: number, kind: "tx" | "block", id: string): void {
  const hash = kind === "tx" && /^0x[0-9a-fA-F]{64}$/.test(id) ? id.toLowerCase() : undefined;
  const block = kind === "block" && /^\d{1,16}$/.test(id) ? Number(id) : undefined;
  let body: string;
  if (hash !== undefined) {
    const lists = ["internal-transactions", "event-logs", "nft-transfers"].map((list) => `<li><a href="/api/v1/transactions/${hash}/${list}">${list}</a></li>`).join("");
    body = `<h1>Transaction ${hash}</h1><p>A transaction of the kaiawatch simulator's synthetic chain (seed ${seed}): no real explorer has it. Its records, as the API answers them:</p><ul>${lists}</ul>`;
  } else if (block !== undefined) {
    body = `<h1>Block ${block}</h1><p>A block of the kaiawatch simulator's synthetic chain (seed ${seed}, head ${head}): no real explorer has it.</p><ul><li><a href="/api/v1/blocks/${block}/internal-transactions">internal-transactions</a></li></ul>`;
  } else {
    body = "<h1>Not found</h1><p>Not a transaction hash or a block number.</p>";
  }
  const html = `<!doctype html><meta charset="utf-8"><title>kaiawatch simulator</title>${body}`;
  meter.request("site", hash !== undefined || block !== undefined ? "200" : "404");
  res.writeHead(hash !== undefined || block !== undefined ? 200 : 404, { "content-type": "text/html; charset=utf-8", "content-length": Buffer.byteLength(html), "content-security-policy": "default-src 'none'" });
  res.end(html);
}
