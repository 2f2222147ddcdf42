import { EVENTS, FUNCTIONS, ZERO_ADDRESS, keccakHex, uint256Hex, type EventSpec, type FunctionSpec } from "./abi.js";
import { KEI_PER_KAIA, formatKaia } from "./amounts.js";
import type { CallRec, NftRec, TxInfo } from "./chain.js";
import type { NftState } from "./nft-state.js";
import type { Prng } from "./prng.js";
import type { World } from "./world.js";

/** Records per block on average, per family. */
export interface Density {
  eventLogs: number;
  nftTransfers: number;
  internalTransactions: number;
}

export const DEFAULT_DENSITY: Density = { eventLogs: 8, nftTransfers: 4, internalTransactions: 12 };

/** An amount in kei: dust, fractions, everyday sums and whales; most above 2^53 kei. */
export function randomKei(p: Prng): bigint {
  const r = p.next();
  if (r < 0.05) return BigInt(1 + p.int(1000));
  if (r < 0.45) return p.bigBits(62);
  if (r < 0.9) return BigInt(1 + p.int(50_000)) * KEI_PER_KAIA + (p.bigBits(60) % KEI_PER_KAIA);
  return BigInt(100_000 + p.int(10_000_000)) * KEI_PER_KAIA + (p.bigBits(60) % KEI_PER_KAIA);
}

/** A count near `mean` (uniform in [mean/2, 3*mean/2]), so busy and quiet blocks alternate. */
function sample(p: Prng, mean: number): number {
  if (mean <= 0) return 0;
  const x = mean * (0.5 + p.next());
  const whole = Math.floor(x);
  return whole + (p.chance(x - whole) ? 1 : 0);
}

function newTx(p: Prng, block: number, datetime: string, from: string, to: string): TxInfo {
  const tx: TxInfo = { hash: `0x${p.hex(32)}`, block, index: 0, datetime, from, to, status: "Success", logs: [], nfts: [], calls: [] };
  if (p.chance(0.15)) tx.feePayer = p.chance(0.5) ? "0x" + "fe".repeat(20) : "0x" + "fd".repeat(20);
  return tx;
}

function addLog(tx: TxInfo, contract: string, event: EventSpec, args: string[]): void {
  tx.logs.push({ block: tx.block, tx, logIndex: 0, contract, topic0: event.topic0, event, args });
}

function addUnknownLog(p: Prng, tx: TxInfo, contract: string): void {
  const topic0 = `0x${p.hex(32)}`;
  const args = [`0x${"0".repeat(24)}${p.hex(20)}`, `0x${p.hex(64)}`];
  tx.logs.push({ block: tx.block, tx, logIndex: 0, contract, topic0, args });
}

/**
 * One block of synthetic activity: NFT transfers (with their Transfer/TransferSingle logs),
 * fungible-token transfers and approvals, and contract calls with internal call trees, some
 * of which revert. Deterministic for a given world, NFT state and PRNG.
 */
export function generateBlock(world: World, nft: NftState, p: Prng, block: number, datetime: string, density: Density): TxInfo[] {
  const txs: TxInfo[] = [];
  let logBudget = sample(p, density.eventLogs);
  let nftBudget = sample(p, density.nftTransfers);
  let callBudget = sample(p, density.internalTransactions);

  while (nftBudget > 0) {
    const k = Math.min(nftBudget, 1 + p.int(3));
    nftBudget -= k;
    txs.push(nftTx(world, nft, p, block, datetime, k));
  }
  while (callBudget > 0) {
    const k = Math.min(callBudget, 1 + p.int(6));
    callBudget -= k;
    const tx = callTx(world, p, block, datetime, k);
    if (tx.status === "Success" && logBudget > 0 && world.routers.includes(tx.to) && p.chance(0.5)) {
      addLog(tx, tx.to, EVENTS.deposit, [tx.from, formatKeiAsUint(randomKei(p))]);
      logBudget -= 1;
    }
    txs.push(tx);
  }
  while (logBudget > 0) {
    const k = Math.min(logBudget, 1 + p.int(2));
    logBudget -= k;
    const sender = world.pickWallet(p);
    const token = p.chance(0.5) ? (world.tokens[0] as (typeof world.tokens)[number]) : p.pick(world.tokens);
    const tx = newTx(p, block, datetime, sender, token.address);
    for (let i = 0; i < k; i++) {
      const r = p.next();
      if (r < 0.75) addLog(tx, token.address, EVENTS.transfer20, [sender, world.pickWallet(p), formatKeiAsUint(inTokenUnits(randomKei(p), token.decimals))]);
      else if (r < 0.9) addLog(tx, token.address, EVENTS.approval, [sender, p.pick(world.routers), p.chance(0.3) ? (2n ** 256n - 1n).toString() : formatKeiAsUint(randomKei(p))]);
      else addUnknownLog(p, tx, world.routers[1] as string);
    }
    txs.push(tx);
  }

  // Shuffled so that kinds interleave; but NFT transactions keep the order in which they moved
  // the NFT state, or a token would leave its holder on chain before the transfer that gave it.
  const nftTxs = txs.filter((tx) => tx.nfts.length > 0);
  for (let i = txs.length - 1; i > 0; i--) {
    const j = p.int(i + 1);
    [txs[i], txs[j]] = [txs[j] as TxInfo, txs[i] as TxInfo];
  }
  let nextNftTx = 0;
  txs.forEach((tx, i) => {
    if (tx.nfts.length > 0) txs[i] = nftTxs[nextNftTx++] as TxInfo;
  });
  let logIndex = 0;
  txs.forEach((tx, index) => {
    tx.index = index;
    for (const log of tx.logs) log.logIndex = logIndex++;
    tx.nfts.forEach((n, seq) => (n.seq = seq));
    if (tx.calls.length === 0) tx.calls.push(topLevelCall(tx));
  });
  return txs;
}

/**
 * An amount drawn as for KAIA (18 decimals), in the base units of a token with `decimals`:
 * the same number of whole tokens, so that a 6-decimal USDT moves everyday sums, not 10^12
 * times more. Draws nothing, so the rest of the chain is the same whatever the decimals.
 */
function inTokenUnits(kei: bigint, decimals: number): bigint {
  return decimals >= 18 ? kei * 10n ** BigInt(decimals - 18) : kei / 10n ** BigInt(18 - decimals);
}

function formatKeiAsUint(kei: bigint): string {
  return kei.toString();
}

function nftTx(world: World, nft: NftState, p: Prng, block: number, datetime: string, k: number): TxInfo {
  const collection = p.chance(0.4) ? (world.collections[0] as (typeof world.collections)[number]) : p.pick(world.collections);
  const operator = world.pickWallet(p);
  const tx = newTx(p, block, datetime, operator, collection.address);
  for (let i = 0; i < k; i++) {
    const live = nft.liveTokens(collection.address);
    let tokenId: string;
    let from: string;
    let to: string;
    let count = 1n;
    const r = p.next();
    if (live.length < 8 || r < 0.2) {
      if (collection.multi) tokenId = String(1 + p.int(30));
      else {
        let id = nft.count(collection.address) + 1;
        while (nft.token(collection.address, String(id))) id++;
        tokenId = String(id);
      }
      from = ZERO_ADDRESS;
      to = world.pickWallet(p);
      if (collection.multi) count = BigInt(1 + p.int(100));
    } else {
      tokenId = p.pick(live);
      const token = nft.token(collection.address, tokenId);
      const holders = token ? [...token.holders] : [];
      const [holder, balance] = holders.length ? p.pick(holders) : [world.pickWallet(p), 1n];
      from = holder;
      to = r < 0.26 ? ZERO_ADDRESS : world.pickWallet(p);
      if (to === from) to = p.pick(world.wallets.filter((w) => w !== from));
      if (collection.multi) count = 1n + BigInt(p.int(Number(balance < 50n ? balance : 50n)));
    }
    nft.apply(collection, tokenId, from, to, count, datetime);
    const rec: NftRec = { block, tx, seq: 0, contract: collection.address, contractType: collection.contractType, from, to, tokenId, count: Number(count) };
    tx.nfts.push(rec);
    if (collection.multi) addLog(tx, collection.address, EVENTS.transferSingle, [operator, from, to, tokenId, count.toString()]);
    else addLog(tx, collection.address, EVENTS.transfer721, [from, to, tokenId]);
  }
  return tx;
}

interface Node {
  type: string;
  from: string;
  to: string;
  amount: bigint;
  gasLimit: number;
  fn?: FunctionSpec;
  fnArgs?: string[];
  output?: string;
  level: number;
  parent?: Node;
  children: Node[];
  error?: string;
  revertMessage?: string;
}

/**
 * The top-level call of a transaction that made no internal calls (an NFT or token
 * transfer): the explorer's indexer records call 0 of every transaction, as the node's
 * tracer gives it (klaytn/finder-spark InternalTransaction toRefined), so both sources list
 * it. Draws nothing: the rest of the chain is the same.
 */
function topLevelCall(tx: TxInfo): CallRec {
  return { block: tx.block, tx, callId: 0, level: 0, type: "CALL", from: tx.from, to: tx.to, amount: "0", gasLimit: 200_000 };
}

function callTx(world: World, p: Prng, block: number, datetime: string, k: number): TxInfo {
  const sender = world.pickWallet(p);
  const r = p.next();
  const target = r < 0.6 ? p.pick(world.routers) : r < 0.85 ? world.proxy : world.factory;
  const rootFn = target === world.proxy ? FUNCTIONS.execute : target === world.factory ? FUNCTIONS.claim : p.chance(0.5) ? FUNCTIONS.swap : FUNCTIONS.deposit;
  const root: Node = { type: "CALL", from: sender, to: target, amount: p.chance(0.5) ? randomKei(p) : 0n, gasLimit: 300_000 + p.int(700_000), fn: rootFn, fnArgs: argsFor(world, p, rootFn), level: 0, children: [] };
  const nodes: Node[] = [root];
  for (let i = 1; i < k; i++) {
    const candidates = nodes.filter((n) => n.level < 4 && n.type !== "STATICCALL");
    const parent = p.pick(candidates.length ? candidates : nodes);
    // Calls made from delegated code run in the caller's context.
    const context = parent.type === "DELEGATECALL" ? parent.from : parent.to;
    const kind = p.next();
    const node: Node = { type: "CALL", from: context, to: "", amount: 0n, gasLimit: Math.max(2300, Math.floor(parent.gasLimit / (2 + p.int(3)))), level: parent.level + 1, parent, children: [] };
    if (kind < 0.4) {
      node.to = world.pickWallet(p);
      node.amount = randomKei(p);
    } else if (kind < 0.6) {
      node.type = "STATICCALL";
      node.to = p.pick(world.tokens).address;
      node.fn = FUNCTIONS.balanceOf;
      node.fnArgs = [context];
      node.output = `0x${uint256Hex(randomKei(p))}`;
    } else if (kind < 0.75) {
      node.type = "DELEGATECALL";
      node.to = world.implementation;
      node.fn = FUNCTIONS.execute;
      node.fnArgs = argsFor(world, p, FUNCTIONS.execute);
    } else if (kind < 0.85) {
      node.type = "CREATE";
      node.to = keccakHex(`${world.seed}:${block}:${context}:${i}:${p.u32()}`).slice(0, 42);
      node.amount = p.chance(0.3) ? randomKei(p) : 0n;
    } else {
      node.to = p.pick(world.tokens).address;
      node.fn = FUNCTIONS.transfer;
      node.fnArgs = argsFor(world, p, FUNCTIONS.transfer);
      node.output = `0x${uint256Hex(1n)}`;
    }
    parent.children.push(node);
    nodes.push(node);
  }
  const tx = newTx(p, block, datetime, sender, target);
  if (p.chance(0.12)) {
    const failing = p.pick(nodes);
    const message = world.revertMessage(p);
    failing.revertMessage = message;
    for (let n: Node | undefined = failing; n; n = n.parent) n.error = "execution reverted";
    tx.status = "Fail";
    tx.failMessage = message;
  }
  // Call ids number the calls in execution (pre-order) order, as a trace does.
  const visit = (node: Node, parentCallId: number | undefined) => {
    const callId = tx.calls.length;
    const rec: CallRec = { block, tx, callId, level: node.level, type: node.type, from: node.from, to: node.to, amount: formatKaia(node.amount), gasLimit: node.gasLimit };
    if (parentCallId !== undefined) rec.parentCallId = parentCallId;
    if (node.fn) rec.fn = node.fn;
    if (node.fnArgs) rec.fnArgs = node.fnArgs;
    if (node.output && !node.error) rec.output = node.output;
    if (node.error) rec.error = node.error;
    if (node.revertMessage) rec.revertMessage = node.revertMessage;
    tx.calls.push(rec);
    for (const child of node.children) visit(child, callId);
  };
  visit(root, undefined);
  return tx;
}

function argsFor(world: World, p: Prng, fn: FunctionSpec): string[] {
  return fn.params.map((param) => {
    if (param.type === "address") return world.pickWallet(p);
    if (param.type === "uint256") return randomKei(p).toString();
    if (param.type === "address[]") return `[${world.tokens[0]?.address},${p.pick(world.tokens).address}]`;
    return `0x${p.hex(8)}`;
  });
}
