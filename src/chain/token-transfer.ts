import { eventTopic } from "./signatures.js";

/** topic0 of the KIP-7 (ERC-20) `Transfer(address indexed from, address indexed to, uint256 value)`. */
export const TRANSFER_TOPIC = eventTopic("Transfer(address,address,uint256)");

/** A fungible-token transfer read from its log: lowercase addresses, the value in base units. */
export interface TokenTransferValues {
  from: string;
  to: string;
  value: bigint;
}

const TOPIC_ADDRESS = /^0x0{24}([0-9a-fA-F]{40})$/;
const WORD = /^0x[0-9a-fA-F]{64}$/;

/**
 * The from, to and value of a KIP-7 Transfer log, or undefined when the log is not one:
 * another topic0, an ERC-721 Transfer (the id as a fourth topic, no data), a topic that is
 * not a padded address, or data that is not one 32-byte word. Read from the raw topics and
 * data, never from the explorer's decoded items: those are guesses and may be estimated.
 */
export function decodeTokenTransfer(log: { topics: readonly string[]; data: string }): TokenTransferValues | undefined {
  const [topic0, fromTopic, toTopic] = log.topics;
  if (log.topics.length !== 3 || topic0?.toLowerCase() !== TRANSFER_TOPIC) return undefined;
  const from = TOPIC_ADDRESS.exec(fromTopic ?? "");
  const to = TOPIC_ADDRESS.exec(toTopic ?? "");
  if (!from || !to || !WORD.test(log.data)) return undefined;
  return { from: `0x${(from[1] as string).toLowerCase()}`, to: `0x${(to[1] as string).toLowerCase()}`, value: BigInt(log.data) };
}
