/**
 * A small seeded pseudo-random generator (sfc32, seeded through splitmix32). The simulator
 * never calls Math.random: the same seed must give the same chain and the same faults.
 */
export interface Prng {
  /** A float in [0, 1). */
  next(): number;
  /** An unsigned 32-bit integer. */
  u32(): number;
  /** An integer in [0, n). */
  int(n: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** `bytes` random bytes as lowercase hex, without 0x. */
  hex(bytes: number): string;
  /** A random bigint below 2^bits. */
  bigBits(bits: number): bigint;
}

/** Every 16-bit value as 4 hex digits: hashes and addresses are built from these without per-byte formatting. */
const HEX4: string[] = Array.from({ length: 65536 }, (_, i) => i.toString(16).padStart(4, "0"));

function splitmix32(state: number): () => number {
  let s = state >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/** A generator whose stream depends on every part of `seeds` (e.g. seed and block number). */
export function createPrng(...seeds: number[]): Prng {
  let h = 0x811c9dc5;
  for (const seed of seeds) {
    // Fold the full double (block numbers exceed 2^32 in principle) into the hash.
    h = splitmix32(h ^ (seed >>> 0))();
    h = splitmix32(h ^ Math.floor(seed / 2 ** 32))();
  }
  const init = splitmix32(h);
  let a = init(), b = init(), c = init(), d = init();
  const u32 = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t;
  };
  for (let i = 0; i < 12; i++) u32();
  const next = () => u32() / 2 ** 32;
  return {
    next,
    u32,
    int: (n) => Math.floor(next() * n),
    chance: (p) => next() < p,
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new Error("pick from an empty list");
      return items[Math.floor(next() * items.length)] as T;
    },
    hex(bytes) {
      let out = "";
      for (let i = 0; i < bytes; i += 4) {
        const t = u32();
        out += (HEX4[t >>> 16] as string) + (HEX4[t & 0xffff] as string);
      }
      return out.slice(0, bytes * 2);
    },
    bigBits(bits) {
      let v = 0n;
      for (let i = 0; i < bits; i += 32) v = (v << 32n) | BigInt(u32());
      return v & ((1n << BigInt(bits)) - 1n);
    },
  };
}
