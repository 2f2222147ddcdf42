/** Records with every documented field set (explorer-api.md), for round-trip tests. */
export const ADDR_A = "0x1111111111111111111111111111111111111111";
export const ADDR_B = "0x2222222222222222222222222222222222222222";
export const TOKEN = "0x3333333333333333333333333333333333333333";
export const TX = `0x${"ab".repeat(32)}`;
export const TOPIC = `0x${"dd".repeat(32)}`;

export const paging = (over: Partial<{ total_count: number; current_page: number; last: boolean; total_page: number }> = {}) => ({
  total_count: 1,
  current_page: 1,
  last: true,
  total_page: 1,
  ...over,
});

export const accountSummary = {
  address: ADDR_A,
  account_type: "SCA",
  contract_type: "KIP17",
  symbol: "CAT",
  name: "Cats",
  icon: "aWNvbg==",
  verified: true,
  kns_domain: "cats.klay",
  address_label: "Cat contract",
};

export const nftMetadata = {
  id: 77,
  contract_address: TOKEN,
  token_id: "42",
  metadata: "{\"name\":\"cat\"}",
  image: "https://example.com/cat.png",
  image_data: "<svg/>",
  external_url: "https://example.com",
  description: "a cat",
  name: "cat #42",
  animation_url: "https://example.com/cat.mp4",
  youtube_url: "https://youtube.com/watch?v=cat",
  background_color: "ffffff",
  display_image: "https://example.com/cat-small.png",
  last_updated: "2024-05-01T12:00:00.000Z",
};

const nftInfo = {
  symbol: "CAT",
  name: "Cats",
  icon: "aWNvbg==",
  contract_address: TOKEN,
  decimal: 0,
  verified: true,
  total_supply: "10000",
  implementation_address: ADDR_B,
};

export const nftItem = {
  contract_type: "KIP37",
  info: nftInfo,
  token_id: "42",
  token_uri: "ipfs://cat/42",
  holder: accountSummary,
  total_supply: "500",
  total_transfer: 12,
  burn_amount: "3",
  total_burn: 1,
  metadata: nftMetadata,
  is_burned: false,
};

export const nftTransfer = {
  contract: { contract_address: TOKEN, contract_type: "KIP17" },
  block_id: 150_000_123,
  transaction_hash: TX,
  fee_payer: ADDR_B,
  transaction_index: 4,
  datetime: "2024-05-01T12:00:00.000Z",
  from: ADDR_A,
  to: ADDR_B,
  token_id: "42",
  token_count: "1",
};

export const nftInventoryDetail = {
  contract_type: "KIP17",
  token_id: "42",
  holder: accountSummary,
  token_uri: "ipfs://cat/42",
  token_count: "1",
  metadata: nftMetadata,
};

export const accountNftInventory = {
  nft: { ...nftInfo, nft_type: "KIP17" },
  token_id: "42",
  token_uri: "ipfs://cat/42",
  token_count: "2",
};

export const internalTransactionOfTransaction = {
  call_id: 1,
  parent_call_id: 0,
  level: 1,
  type: "CALL",
  from: accountSummary,
  to: { address: ADDR_B },
  amount: "1.5",
  gas_limit: 21000,
  input_data: {
    original_value: "0xa9059cbb",
    decoded_value: { signature: "transfer(address,uint256)", method_id: "0xa9059cbb", parameters: [{ type: "address", name: "to", value: ADDR_B }, { type: "uint256", value: "10" }] },
    utf8_value: "transfer",
  },
  output_data: "0x",
  error: "execution reverted",
  reverted: { contract: ADDR_B, message: "not allowed" },
};

export const internalTransactionListItem = {
  call_id: 2,
  block_id: 150_000_123,
  transaction_hash: TX,
  transaction_index: 3,
  fee_payer: ADDR_B,
  datetime: "2024-05-01T12:00:00.000Z",
  type: "CALL",
  from: ADDR_A,
  to: ADDR_B,
  amount: "1000.000000000000000001",
  error: "out of gas",
  method_id: "0xa9059cbb",
  signature: "transfer(address,uint256)",
  transaction_status: { status: "Fail", fail_message: "out of gas" },
};

export const eventLog = {
  log_index: 5,
  contract_address: TOKEN,
  type: "Transfer",
  topics: [TOPIC, `0x${"00".repeat(12)}${ADDR_A.slice(2)}`],
  data: "0x01",
  items: [{ name: "from", value: ADDR_A }, { name: "value", value: "1" }],
  block_number: 150_000_123,
  transaction_hash: TX,
  estimated_event_log: true,
};

export const list = <T>(record: T, over: Parameters<typeof paging>[0] = {}) => ({ results: [record], paging: paging(over), property: { [ADDR_A]: { name: "Cats" } } });
