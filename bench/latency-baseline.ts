/**
 * The latency benchmark's bare baseline: the fastest a poller can be over the same explorer
 * and receiver. A loop that reads the head (eth_blockNumber) every interval, fetches the new
 * blocks' window of the token's event logs (operation 11, one page), and posts each record
 * to the receiver: no store, no rules, no outbox, no retries. A process of its own, as
 * `kaiawatch run` is.
 *
 * `node --import tsx bench/latency-baseline.ts RPC_URL API_URL TOKEN RECEIVER_URL INTERVAL_MS`
 */
import { setTimeout as sleep } from "node:timers/promises";
import { request } from "undici";

const [rpcUrl, apiUrl, token, receiverUrl, interval] = process.argv.slice(2) as [string, string, string, string, string];
const intervalMs = Number(interval);

async function head(): Promise<number> {
  const res = await request(rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }) });
  const body = (await res.body.json()) as { result: string };
  return Number.parseInt(body.result, 16);
}

let cursor = await head();
process.send?.("ready");
for (;;) {
  const now = await head();
  if (now > cursor) {
    const res = await request(`${apiUrl}/api/v1/accounts/${token}/event-logs?blockNumberStart=${cursor + 1}&blockNumberEnd=${now}&page=1&size=2000`);
    const page = (await res.body.json()) as { results: { block_number: number }[] };
    for (const record of page.results) {
      const posted = await request(receiverUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ block: record.block_number, record }) });
      await posted.body.dump();
    }
    cursor = now;
  }
  await sleep(intervalMs);
}
