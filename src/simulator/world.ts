import type { AccountSummary, ContractType } from "../explorer/types.js";
import { HOSTILE_STRINGS, hostileLong } from "./hostile.js";
import { createPrng, type Prng } from "./prng.js";

/** The actors of a synthetic chain, fixed by the seed. */
export interface Collection {
  address: string;
  index: number;
  contractType: ContractType;
  /** KIP37/ERC1155: many holders per token id and counts above 1. */
  multi: boolean;
  name: string;
  symbol: string;
  verified: boolean;
  uriBase: string;
  implementation?: string;
}

export interface FungibleToken {
  address: string;
  contractType: ContractType;
  name: string;
  symbol: string;
  /** What decimals() answers: the tokens cover 18, 6 and 0. */
  decimals: number;
  /** symbol() answers a bytes32, as some early tokens declared it, instead of a string. */
  symbolAsBytes32?: boolean;
}

export interface NftTokenMeta {
  uri: string;
  name?: string;
  description?: string;
  image?: string;
  externalUrl?: string;
}

export interface World {
  seed: number;
  hostile: boolean;
  wallets: string[];
  tokens: FungibleToken[];
  collections: Collection[];
  /** Contracts that make internal calls: routers, a multisig, a proxy and its implementation, a factory. */
  routers: string[];
  proxy: string;
  implementation: string;
  factory: string;
  summary(address: string): AccountSummary;
  /** A sender or receiver: skewed so that a few wallets are very busy. */
  pickWallet(prng: Prng): string;
  revertMessage(prng: Prng): string;
  tokenMeta(collection: Collection, tokenId: string): NftTokenMeta;
}

const WALLETS = 40;
const REVERTS = [
  "execution reverted: insufficient balance",
  "execution reverted: Ownable: caller is not the owner",
  "execution reverted: ERC20: transfer amount exceeds balance",
  "execution reverted: UniswapV2Router: INSUFFICIENT_OUTPUT_AMOUNT",
  "execution reverted: deadline expired",
  "out of gas",
];

export function createWorld(seed: number, hostile: boolean): World {
  const prng = createPrng(seed, 0x3017d);
  const address = () => `0x${prng.hex(20)}`;
  const h = (i: number, normal: string) => (hostile ? (HOSTILE_STRINGS[i % HOSTILE_STRINGS.length] as string) : normal);
  const wallets = Array.from({ length: WALLETS }, address);
  const tokens: FungibleToken[] = [
    { address: address(), contractType: "KIP7", name: "Wrapped Kaia", symbol: "WKAIA", decimals: 18 },
    { address: address(), contractType: "ERC20", name: h(1, "Tether USD"), symbol: "USDT", decimals: 6 },
    { address: address(), contractType: "KIP7", name: "Bora", symbol: "BORA", decimals: 18, symbolAsBytes32: true },
    // Hostile mode: name and symbol (also what symbol() answers) are strangers' text.
    { address: address(), contractType: "ERC20", name: h(3, "Stake Token"), symbol: h(4, "STK"), decimals: 0 },
  ];
  const collections: Collection[] = [
    { contractType: "KIP17", multi: false, name: "Kaia Kitties", symbol: "KKT", verified: true, uriBase: "https://meta.kaiakitties.example/token/" },
    { contractType: "ERC721", multi: false, name: h(0, "Sea Shells"), symbol: h(4, "SHELL"), verified: false, uriBase: "ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/" },
    { contractType: "KIP37", multi: true, name: "Game Items", symbol: "ITEM", verified: true, uriBase: "https://items.example/api/" },
    { contractType: "ERC1155", multi: true, name: h(3, "Badges"), symbol: "BDG", verified: false, uriBase: "ar://badges/" },
  ].map((c, index) => ({ ...c, index, address: address() }));
  const routers = [address(), address(), address()];
  const proxy = address();
  const implementation = address();
  const factory = address();
  const firstCollection = collections[0];
  if (firstCollection) firstCollection.implementation = implementation;

  const summaries = new Map<string, AccountSummary>();
  wallets.forEach((w) => summaries.set(w, { address: w, account_type: "EOA" }));
  summaries.set(wallets[0] as string, { address: wallets[0] as string, account_type: "EOA", address_label: h(0, "Exchange Hot Wallet 1") });
  summaries.set(wallets[1] as string, { address: wallets[1] as string, account_type: "EOA", kns_domain: hostile ? "treasury\u202Etxt.kaia" : "treasury.kaia" });
  summaries.set(wallets[2] as string, { address: wallets[2] as string, account_type: "EOA", address_label: h(2, "Market Maker") });
  for (const t of tokens) summaries.set(t.address, { address: t.address, account_type: "SCA", contract_type: t.contractType, name: t.name, symbol: t.symbol, verified: true });
  for (const c of collections) summaries.set(c.address, { address: c.address, account_type: "SCA", contract_type: c.contractType, name: c.name, symbol: c.symbol, verified: c.verified });
  routers.forEach((r, i) => summaries.set(r, { address: r, account_type: "SCA", contract_type: "CUSTOM", address_label: i === 0 ? h(5, "DEX Router") : `Router ${i + 1}` }));
  summaries.set(proxy, { address: proxy, account_type: "SCA", contract_type: "CUSTOM", address_label: "Multisig Proxy" });
  summaries.set(implementation, { address: implementation, account_type: "SCA", contract_type: "CUSTOM", address_label: "Multisig Implementation" });
  summaries.set(factory, { address: factory, account_type: "SCA", contract_type: "CUSTOM", address_label: "Pair Factory" });

  let long: string | undefined;
  const longText = () => (long ??= hostileLong());

  return {
    seed,
    hostile,
    wallets,
    tokens,
    collections,
    routers,
    proxy,
    implementation,
    factory,
    summary(a) {
      const lower = a.toLowerCase();
      return summaries.get(lower) ?? { address: lower };
    },
    pickWallet(p) {
      const r = p.next();
      if (r < 0.4) return wallets[0] as string;
      if (r < 0.5) return wallets[1] as string;
      return p.pick(wallets);
    },
    revertMessage(p) {
      if (hostile) {
        if (p.chance(0.01)) return longText();
        if (p.chance(0.4)) return p.pick(HOSTILE_STRINGS);
      }
      return p.pick(REVERTS);
    },
    tokenMeta(collection, tokenId) {
      const p = createPrng(seed, 0x6e7f, collection.index, Number(BigInt(tokenId) % 2n ** 52n));
      if (p.chance(0.15)) return { uri: "" };
      const uri = `${collection.uriBase}${tokenId}${collection.uriBase.startsWith("http") ? ".json" : ""}`;
      const name = `${collection.name} #${tokenId}`;
      const meta: NftTokenMeta = { uri, name, description: `${collection.symbol} token ${tokenId}`, image: `https://img.example/${collection.symbol}/${tokenId}.png` };
      if (hostile) {
        if (collection.index === 0 && tokenId === "1") meta.description = longText();
        else if (p.chance(0.5)) meta.description = p.pick(HOSTILE_STRINGS);
        if (p.chance(0.4)) meta.name = p.pick(HOSTILE_STRINGS);
        if (p.chance(0.3)) meta.image = "javascript:alert(1)";
        if (p.chance(0.3)) meta.externalUrl = "https://evil.example/<script>alert(1)</script>";
      }
      return meta;
    },
  };
}
