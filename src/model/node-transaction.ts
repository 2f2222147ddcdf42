/**
 * A top-level transaction of a block with its receipt, as kaiawatch keeps it (the record of
 * the `transactions` source). Read from a Kaia node's `kaia_getBlockReceipts`, whose
 * entries are the transaction's fields merged with its receipt's (api/api_kaia_transaction.go
 * RpcOutputReceipt in kaiachain/kaia). Addresses and hashes lowercase, amounts exact decimals.
 */
export interface NodeTransaction {
  hash: string;
  block_number: number;
  block_hash: string;
  transaction_index: number;
  from: string;
  /** Absent for a contract creation (and for the Kaia types that have no recipient: account update, cancel, anchoring). */
  to?: string;
  /** KAIA moved, exact decimal ("0" when the type moves none). */
  value: string;
  /** The same in kei, decimal. */
  value_kei: string;
  /** Kaia's name of the type: TxTypeLegacyTransaction, TxTypeFeeDelegatedValueTransfer, TxTypeEthereumDynamicFee, … */
  type: string;
  type_int: number;
  /** The account that paid the fee of a fee-delegated transaction. */
  fee_payer?: string;
  /** Of a fee-delegated transaction with ratio: the percentage of the fee the fee payer paid (1–99). */
  fee_ratio?: number;
  /** 0x + 8 hex: the first four bytes of the input, when it has them. */
  method_id?: string;
  /** The function name, when the watch's `methods` name the selector. */
  method?: string;
  /** The canonical signature it was decoded with. */
  method_signature?: string;
  /** The decoded arguments (names from the signature, else arg0, arg1, …); absent when they could not be decoded. */
  args?: Array<{ name: string; type: string; value: string }>;
  /** Bytes of input. */
  input_size: number;
  status: "Success" | "Fail";
  /** Kaia's error code of a failed transaction (txError), hex as the node gives it, e.g. 0x9. */
  tx_error?: string;
  /** The node's text for that code: "execution reverted", "out of gas", … */
  error?: string;
  /** The revert message, when the node's tracer gave one (debug_traceTransaction). */
  revert_reason?: string;
  gas_used: string;
  /** Kei per gas actually charged (effectiveGasPrice). */
  gas_price: string;
  /** KAIA, exact: gas_used × gas_price. Paid by the fee payer of a fee-delegated transaction (by both, with a ratio). */
  fee: string;
  /** The contract a creation made. */
  contract_address?: string;
  /** Event logs in the receipt (the logs themselves are the event_logs source's). */
  log_count: number;
}
