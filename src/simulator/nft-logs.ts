import { EVENTS } from "./abi.js";
import type { LogRec, NftRec } from "./chain.js";

const ADDRESS = /^0x[0-9a-f]{40}$/;
const UINT = /^[0-9]+$/;
const MULTI_TYPES = new Set(["KIP37", "ERC1155"]);

/**
 * The log a node shows of an NFT transfer: TransferSingle for a KIP-37/ERC-1155 contract
 * (the transaction's sender as operator), else the KIP-17/ERC-721 Transfer with the id as
 * its fourth topic. None for a transfer no contract could have logged (a contract or party
 * that is not an address, an id that is not an integer, a count other than 1 of a
 * single-token contract): a test that chose one wants the explorer's record alone.
 */
export function nftTransferLog(rec: NftRec, contractType: string | undefined, logIndex: number): LogRec | undefined {
  const to = rec.to === "" ? "0x0000000000000000000000000000000000000000" : rec.to;
  if (!ADDRESS.test(rec.contract) || !ADDRESS.test(rec.from) || !ADDRESS.test(to) || !UINT.test(rec.tokenId)) return undefined;
  const count = rec.custom === undefined ? String(rec.count) : String(rec.custom.token_count);
  if (!UINT.test(count)) return undefined;
  const base = { block: rec.block, tx: rec.tx, logIndex, contract: rec.contract };
  if (contractType !== undefined && MULTI_TYPES.has(contractType.toUpperCase())) {
    return { ...base, topic0: EVENTS.transferSingle.topic0, event: EVENTS.transferSingle, args: [rec.tx.from.toLowerCase(), rec.from, to, rec.tokenId, BigInt(count).toString()] };
  }
  if (BigInt(count) !== 1n) return undefined;
  return { ...base, topic0: EVENTS.transfer721.topic0, event: EVENTS.transfer721, args: [rec.from, to, rec.tokenId] };
}
