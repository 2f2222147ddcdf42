/**
 * The eleven operations of the explorer API, with their paths and credit costs from the
 * spec's Limits table. The client, the simulator, the credit meter and the planner all
 * read this one table.
 */
export const OPERATIONS = {
  transactionInternalTransactions: { number: 1, path: "/api/v1/transactions/:transactionHash/internal-transactions", cost: 3, plan: "FREE", list: true },
  nftItem: { number: 2, path: "/api/v1/nfts/:tokenAddress/tokenids/:tokenId", cost: 3, plan: "FREE", list: false },
  accountNftTransfers: { number: 3, path: "/api/v1/accounts/:accountAddress/nft-transfers", cost: 3, plan: "FREE", list: true },
  nftTransfers: { number: 4, path: "/api/v1/nfts/:tokenAddress/transfers", cost: 5, plan: "FREE", list: true },
  transactionNftTransfers: { number: 5, path: "/api/v1/transactions/:transactionHash/nft-transfers", cost: 3, plan: "FREE", list: true },
  nftInventoryDetails: { number: 6, path: "/api/v1/nfts/:tokenAddress/inventory-details", cost: 5, plan: "FREE", list: true },
  accountInternalTransactions: { number: 7, path: "/api/v1/accounts/:accountAddress/internal-transactions", cost: 20, plan: "PRO_PLUS", list: true },
  blockInternalTransactions: { number: 8, path: "/api/v1/blocks/:blockNumber/internal-transactions", cost: 1, plan: "FREE", list: true },
  accountNftInventories: { number: 9, path: "/api/v1/accounts/:accountAddress/nft-inventories", cost: 3, plan: "FREE", list: true },
  transactionEventLogs: { number: 10, path: "/api/v1/transactions/:transactionHash/event-logs", cost: 3, plan: "FREE", list: true },
  accountEventLogs: { number: 11, path: "/api/v1/accounts/:accountAddress/event-logs", cost: 3, plan: "FREE", list: true },
} as const satisfies Record<string, { number: number; path: string; cost: number; plan: "FREE" | "PRO_PLUS"; list: boolean }>;

export type OperationName = keyof typeof OPERATIONS;

/** The API's own limits (DESIGN.md §3). */
export const API_LIMITS = {
  maxPageSize: 2000,
  defaultPageSize: 20,
  maxBlockRange: 1000,
  /** `total_count` stops counting here; a window holding more must be split, not paged deeper. */
  maxTotalCount: 40_000,
} as const;
