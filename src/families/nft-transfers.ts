import { DEAD_ADDRESSES, ZERO_ADDRESS, isBurnAddress } from "../chain/address.js";
import type { NftTransfer } from "../explorer/types.js";
import { capRecord } from "./cap-record.js";
import { defineFamily, type RecordOf, type RecordShape } from "./define-family.js";
import { integerOf, lower } from "./record-values.js";
import { BLOCK_FIELD, TRANSACTION_FIELD, caseBlindField, directionOf, directionOfLower, shortAddress, storedField, storedText, summaryText } from "./shared-fields.js";

type NftTransferRecord = RecordOf<"nft_transfers">;

const NO_ORDER: readonly number[] = Object.freeze([]);

// isBurnAddress(to) on a value already in lower case (it would lower it again).
const isBurnLower = (to: string | undefined) => to === undefined || to === ZERO_ADDRESS || DEAD_ADDRESSES.includes(to);

/** NFT transfers: operation 3 (accountNftTransfers) of an account, 4 (nftTransfers) of a collection. */
export const nftTransfers = defineFamily<"nft_transfers", NftTransfer>({
  name: "nft_transfers",
  noun: ["NFT transfer", "NFT transfers"],
  readers: { explorer: ["accountNftTransfers", "nftTransfers"], node: ["nodeNftTransfers"], account: "accountNftTransfers", transaction: { list: "transactionNftTransfers" } },
  watchedBy: { account: "default source", kinds: ["collection"] },
  enrichments: ["nft", "inventory"],
  normalize(raw, bounded) {
    const data = bounded === true ? raw : capRecord(raw);
    const tx = lower(data.transaction_hash) ?? "";
    // Transfers carry no log index: the identity is everything that tells two transfers apart.
    const key = [data.block_id, tx, data.contract.contract_address.toLowerCase(), data.token_id, data.from.toLowerCase(), lower(data.to) ?? "", data.token_count].join(":");
    return { family: "nft_transfers", block: data.block_id, transactionHash: data.transaction_hash, key, order: [data.transaction_index ?? 0], data };
  },
  probe(raw, bounded) {
    const data = bounded === true ? raw : capRecord(raw);
    return { family: "nft_transfers", block: data.block_id, transactionHash: data.transaction_hash, key: "", order: NO_ORDER, data };
  },
  /*
   * Two KIP-37 transfers of the same count of the same token between the same accounts in one
   * transaction (a batch transfer listing an id twice) are identical in every field: the API
   * gives transfers no log index, so nothing in the record tells them apart.
   */
  twinsPossible: true,
  fields: {
    contract: caseBlindField({ kind: "address", doc: "the NFT contract", example: 'contract: "0x…"' }, (r) => r.data.contract.contract_address),
    contract_type: caseBlindField({ kind: "keyword", doc: "KIP17, KIP37, ERC721, ERC1155, …", example: "contract_type: KIP37" }, (r) => r.data.contract.contract_type),
    token_id: {
      kind: "integer",
      doc: "the token id (any size)",
      example: 'token_id: { in: [1, 2, "115792089237316195423570985008687907853269984665640564039457584007913129639935"] }',
      read: (r) => r.data.token_id,
      prepare: (r) => integerOf(r.data.token_id),
    },
    from: caseBlindField({ kind: "address", doc: "sender", example: 'from: "0x…"' }, (r) => r.data.from),
    to: caseBlindField({ kind: "address", doc: "recipient", example: 'to: { not_in: ["0x…", "0x…"] }' }, (r) => r.data.to),
    token_count: {
      kind: "integer",
      doc: "number of tokens moved (KIP37/ERC1155 amounts)",
      example: "token_count: { gte: 10 }",
      read: (r) => r.data.token_count,
      prepare: (r) => integerOf(r.data.token_count),
    },
    direction: {
      kind: "keyword",
      values: ["in", "out", "self"],
      needsAccount: "it says whether the transfer came in or went out of that account",
      doc: "relative to the watched account (of an accounts watch, any listed one): in (to it), out (from it), self (both); account and accounts watches only",
      example: "direction: in",
      read: (r, _field, accounts) => directionOfLower(r.data.from.toLowerCase(), lower(r.data.to), accounts),
    },
    mint: {
      kind: "boolean",
      doc: "sent from the zero address",
      example: "mint: true",
      read: (r) => r.data.from.toLowerCase() === ZERO_ADDRESS,
      prepare: (r) => r.data.from.toLowerCase() === ZERO_ADDRESS,
    },
    burn: {
      kind: "boolean",
      doc: "sent to the zero address, 0x…dEaD or 0xdEaD…42069 (or to no one)",
      example: "burn: true",
      read: (r) => r.data.to === undefined || isBurnAddress(r.data.to),
      prepare: (r) => isBurnLower(lower(r.data.to)),
    },
    block: BLOCK_FIELD,
    transaction: TRANSACTION_FIELD,
  },
  datetime: (r) => r.data.datetime,
  links(r, under) {
    const d = r.data;
    const contract = encodeURIComponent(d.contract.contract_address);
    return { contract: under(`/account/${contract}`), token: under(`/nft/${contract}/${encodeURIComponent(d.token_id)}`), account: d.to ?? d.from };
  },
  summary(r, watchedAccount) {
    const d = r.data;
    const count = d.token_count !== "1" ? `${summaryText(String(d.token_count), 24)} × ` : "";
    const what = `${count}NFT #${summaryText(d.token_id, 24)} of ${shortAddress(d.contract.contract_address)}`;
    const dir = directionOf(d.from, d.to, watchedAccount);
    const suffix = dir ? ` (${dir})` : "";
    if (d.from.toLowerCase() === ZERO_ADDRESS) return `${what} minted to ${shortAddress(d.to)}${suffix}`;
    if (d.to === undefined || isBurnAddress(d.to)) return `${what} burned by ${shortAddress(d.from)}${suffix}`;
    return `${what} sent ${shortAddress(d.from)} → ${shortAddress(d.to)}${suffix}`;
  },
  templateVariables: ["contract", "contract_type", "token_id", "from", "to", "token_count", "direction", "mint", "burn"],
  templateValue(name, r: NftTransferRecord, account) {
    const d = r.data;
    switch (name) {
      case "contract": return d.contract.contract_address;
      case "contract_type": return d.contract.contract_type;
      case "token_id": case "from": case "to": case "token_count": return d[name];
      case "direction": return directionOf(d.from, d.to, account);
      case "mint": return d.from.toLowerCase() === ZERO_ADDRESS;
      case "burn": return d.to === undefined || isBurnAddress(d.to);
    }
    return undefined;
  },
  view(r, add) {
    add("Collection", storedField(storedField(r, "contract"), "contract_address"));
    add("Token ID", storedField(r, "token_id"), 100);
    add("From", storedField(r, "from"));
    add("To", storedField(r, "to"));
    add("Count", storedField(r, "token_count"), 100);
  },
  contract: { of: (r) => storedText(storedField(storedField(r, "contract"), "contract_address")), noun: "collection" },
  describe: (r, c) => `${c(r.data.contract.contract_address)} token ${c(r.data.token_id)} ×${c(r.data.token_count)} · ${c(r.data.from)} → ${c(r.data.to)}`,
  recordShape: {
    contract: { contract_address: "value", contract_type: "value" },
    block_id: "value",
    transaction_hash: "value",
    fee_payer: "value",
    transaction_index: "value",
    datetime: "value",
    from: "value",
    to: "value",
    token_id: "value",
    token_count: "value",
  } satisfies Record<keyof NftTransfer, RecordShape>,
});
