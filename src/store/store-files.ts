import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { endianness } from "node:os";

/**
 * The store's files as found on disk, read byte by byte without SQLite: SQLite opening a
 * store may replay, checkpoint or ignore its write-ahead log, and a damaged or foreign log
 * must be seen before any of that happens. Formats: https://sqlite.org/fileformat2.html
 * (the database header, b-tree pages, the freelist) and https://sqlite.org/walformat.html.
 *
 * What it finds wrong is returned as a sentence (`problem`); the caller refuses the store.
 */

const WAL_HEADER = 32;
const FRAME_HEADER = 24;
const WAL_VERSION = 3007000;
/** The tail of the database whose pages are checked for plausibility at every open (bytes). */
export const TAIL_CHECK_BYTES = 2 * 1024 * 1024;
/** The database offset of the identity kaiawatch keeps in SQLite's `application_id` (see storeIdentity). */
const APPLICATION_ID_OFFSET = 68;

export interface StoreFiles {
  /** What is wrong with the files, or undefined: then SQLite may open them. */
  problem?: string;
  /** The store's identity in the database file (0: none recorded). */
  identity: number;
}

interface Wal {
  /** Page number → the newest committed frame's page data. */
  pages: Map<number, Buffer>;
  /** The database's size in pages after the last commit, or undefined without one. */
  pages_after_commit?: number;
  commits: number;
}

/** Reads `path` (an SQLite database, by its magic bytes) and `path-wal`; see StoreFiles. */
export function inspectStoreFiles(path: string): StoreFiles {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    const header = read(fd, 0, 100);
    if (header.length < 100) return { identity: 0, problem: `the file is ${size} bytes, shorter than SQLite's 100-byte header` };
    const rawPageSize = header.readUInt16BE(16);
    const pageSize = rawPageSize === 1 ? 65536 : rawPageSize;
    if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return { identity: 0, problem: `its header names a page size of ${rawPageSize}, which SQLite never writes` };
    const identity = header.readUInt32BE(APPLICATION_ID_OFFSET);
    if (size % pageSize !== 0) return { identity, problem: `its size (${size} bytes) is not a whole number of ${pageSize}-byte pages: cut short or extended by something other than SQLite` };
    const filePages = size / pageSize;
    // Valid only when the change counter equals version-valid-for (always, for SQLite since 3.7.0).
    const headerPages = header.readUInt32BE(24) === header.readUInt32BE(92) ? header.readUInt32BE(28) : 0;

    const walFound = readWal(`${path}-wal`, pageSize);
    if (typeof walFound === "string") return { identity, problem: walFound };
    const wal = walFound;

    if (wal !== undefined && wal.commits > 0) {
      // Every commit of kaiawatch's writes page 1 (see storeIdentity): a log that holds commits
      // without it, or with another identity in it, was written for another database.
      const page1 = wal.pages.get(1);
      if (page1 === undefined) return { identity, problem: `its write-ahead log ${path}-wal holds ${wal.commits} commits that never wrote the database's first page: it was not written for this database (a log left beside a database it does not belong to)` };
      const logIdentity = page1.readUInt32BE(APPLICATION_ID_OFFSET);
      if (identity !== 0 && logIdentity !== identity) {
        return { identity, problem: `its write-ahead log ${path}-wal belongs to another store (identity ${hex(logIdentity)} in the log, ${hex(identity)} in the database): replayed, it would write that store's pages into this one` };
      }
    }

    // The database as SQLite will see it: its pages are in the log (the newest) or in the file.
    const pages = wal?.pages_after_commit ?? headerPages;
    if (pages > filePages) {
      // Counted over the log's pages, not the range: a damaged header may claim 4 billion pages.
      let inWal = 0;
      for (const page of wal?.pages.keys() ?? []) if (page > filePages && page <= pages) inWal++;
      const missing = pages - filePages - inWal;
      let first = filePages + 1;
      while (wal?.pages.has(first) === true) first++;
      if (missing > 0) return { identity, problem: `it is cut short: the store has ${pages} pages of ${pageSize} bytes, the file holds ${filePages}, and ${missing} of the others (from page ${first}) are not in its write-ahead log either` };
    }

    const checked = Math.min(pages || filePages, filePages);
    // The tail in one read (the pages checked); other pages (freelist trunks) one by one.
    const tailFirst = Math.max(1, checked - Math.floor(TAIL_CHECK_BYTES / pageSize) + 1);
    const tail = read(fd, (tailFirst - 1) * pageSize, (checked - tailFirst + 1) * pageSize);
    const readPage = (page: number): Buffer =>
      wal?.pages.get(page) ?? (page >= tailFirst && page <= checked ? tail.subarray((page - tailFirst) * pageSize, (page - tailFirst + 1) * pageSize) : read(fd, (page - 1) * pageSize, pageSize));
    // The freelist and the page numbers in b-tree pages are checked against the database as
    // SQLite sees it (the log's last commit may have grown it past the file), the tail over the file.
    const damaged = checkTail(readPage, { pages: Math.max(pages, filePages), last: checked }, pageSize, wal);
    if (damaged !== undefined) return { identity, problem: damaged };
    return { identity };
  } finally {
    closeSync(fd);
  }
}

/**
 * The log as SQLite will replay it: the frames whose salts match the header and whose
 * checksums chain from it, up to the last one that ends a commit. A log SQLite would ignore
 * or cut short while it holds commits is damage, not a torn tail: its commits were
 * acknowledged, and a silent replay without them would lose them.
 */
function readWal(path: string, pageSize: number): Wal | string | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    const size = fstatSync(fd).size;
    // Empty, or cut while its header was first written: it never held a commit.
    if (size < WAL_HEADER) return undefined;
    const header = read(fd, 0, WAL_HEADER);
    const magic = header.readUInt32BE(0);
    const damaged = (what: string) =>
      `its write-ahead log ${path} has a damaged header (${what}): SQLite would ignore the log, and the commits in its ${Math.floor((size - WAL_HEADER) / (FRAME_HEADER + pageSize))} frames with it. If the machine stopped while the log was being started over, it holds nothing the database lacks: move it away`;
    if (magic !== 0x377f0682 && magic !== 0x377f0683) return damaged(`magic number ${hex(magic)}`);
    if (header.readUInt32BE(4) !== WAL_VERSION) return damaged(`format version ${header.readUInt32BE(4)}`);
    const walPageSize = header.readUInt32BE(8);
    if (walPageSize !== pageSize) return damaged(`page size ${walPageSize}, the database's is ${pageSize}`);
    const bigEndian = magic === 0x377f0683;
    const [h0, h1] = checksum(header.subarray(0, 24), 0, 0, bigEndian);
    if (h0 !== header.readUInt32BE(24) || h1 !== header.readUInt32BE(28)) return damaged("its checksum does not match");
    const salt1 = header.readUInt32BE(16);
    const salt2 = header.readUInt32BE(20);

    const frameSize = FRAME_HEADER + pageSize;
    const frames = Math.floor((size - WAL_HEADER) / frameSize);
    const wal: Wal = { pages: new Map(), commits: 0 };
    let pending = new Map<number, Buffer>();
    let s0 = h0;
    let s1 = h1;
    let valid = true;
    /** Commits of this log after the point where SQLite's replay stops. */
    let lost = 0;
    const chunkFrames = Math.max(1, Math.floor((4 * 1024 * 1024) / frameSize));
    for (let start = 0; start < frames; start += chunkFrames) {
      const count = Math.min(chunkFrames, frames - start);
      const chunk = read(fd, WAL_HEADER + start * frameSize, count * frameSize);
      for (let i = 0; i < count; i++) {
        const frame = chunk.subarray(i * frameSize, (i + 1) * frameSize);
        const page = frame.readUInt32BE(0);
        const commit = frame.readUInt32BE(4);
        const ours = frame.readUInt32BE(8) === salt1 && frame.readUInt32BE(12) === salt2;
        if (valid) {
          let c = ours && page > 0 ? checksum(frame.subarray(0, 8), s0, s1, bigEndian) : undefined;
          if (c !== undefined) c = checksum(frame.subarray(FRAME_HEADER), c[0], c[1], bigEndian);
          if (c !== undefined && c[0] === frame.readUInt32BE(16) && c[1] === frame.readUInt32BE(20)) {
            [s0, s1] = c;
            pending.set(page, frame.subarray(FRAME_HEADER));
            if (commit !== 0) {
              for (const [p, data] of pending) wal.pages.set(p, Buffer.from(data));
              pending = new Map();
              wal.pages_after_commit = commit;
              wal.commits++;
            }
            continue;
          }
          valid = false;
        }
        // Frames of this log (its salts) past the break: a commit among them was written after
        // the ones SQLite will replay. One may be the torn last commit of a power cut (written
        // out of order, never acknowledged); two cannot.
        if (ours && commit !== 0) lost++;
      }
    }
    if (lost >= 2) {
      return `its write-ahead log ${path} is damaged after its first ${wal.commits} commits: SQLite would stop there and drop the ${lost} commits written after the damage`;
    }
    return wal;
  } finally {
    closeSync(fd);
  }
}

/**
 * Checks the last pages of the database (up to TAIL_CHECK_BYTES): each must read as a b-tree
 * page, a page of the freelist, or an overflow page pointing within the database. Random
 * bytes or zeros pass none of them. (The whole file is SQLite's `quick_check`, which costs
 * seconds per gigabyte: see open-store.ts.)
 */
function checkTail(readPage: (page: number) => Buffer, extent: { pages: number; last: number }, pageSize: number, wal: Wal | undefined): string | undefined {
  const { pages, last } = extent;
  if (last <= 1) return undefined;
  const page1 = readPage(1);
  const free = freelist(readPage, page1, pages, pageSize);
  if (typeof free === "string") return free;
  // SQLite never uses the page holding the lock bytes at 1 GiB.
  const lockPage = Math.floor(0x40000000 / pageSize) + 1;
  const first = Math.max(2, last - Math.floor(TAIL_CHECK_BYTES / pageSize) + 1);
  for (let page = first; page <= last; page++) {
    if (page === lockPage || free.has(page) || wal?.pages.has(page) === true) continue;
    const data = readPage(page);
    if (isBtreePage(data, 0, pageSize, pages)) continue;
    const next = data.readUInt32BE(0);
    // An overflow page: the next one's number (0 on the last), then the rest of a value.
    if (next <= pages && next !== 1 && data.subarray(4).some((byte) => byte !== 0)) continue;
    return `its page ${page} of ${pages} is neither a b-tree page, nor free, nor an overflow page: the end of the file holds garbage`;
  }
  return undefined;
}

function freelist(readPage: (page: number) => Buffer, page1: Buffer, pages: number, pageSize: number): Set<number> | string {
  const free = new Set<number>();
  let trunk = page1.readUInt32BE(32);
  const total = page1.readUInt32BE(36);
  while (trunk !== 0) {
    if (trunk > pages || free.has(trunk)) return `its freelist is damaged (trunk page ${trunk} of ${pages})`;
    free.add(trunk);
    const data = readPage(trunk);
    const leaves = data.readUInt32BE(4);
    if (leaves > pageSize / 4 - 2) return `its freelist is damaged (trunk page ${trunk} lists ${leaves} pages)`;
    for (let i = 0; i < leaves; i++) free.add(data.readUInt32BE(8 + 4 * i));
    if (free.size > total) return `its freelist is damaged (more than the ${total} pages its header counts)`;
    trunk = data.readUInt32BE(0);
  }
  return free;
}

/** The header and cell pointers of a b-tree page are consistent (fileformat2 §1.6). */
function isBtreePage(data: Buffer, offset: number, pageSize: number, pages: number): boolean {
  const type = data[offset];
  const interior = type === 2 || type === 5;
  if (!interior && type !== 10 && type !== 13) return false;
  const headerSize = interior ? 12 : 8;
  const freeblock = data.readUInt16BE(offset + 1);
  const cells = data.readUInt16BE(offset + 3);
  const content = data.readUInt16BE(offset + 5) || 65536;
  const fragmented = data[offset + 7]!;
  const pointersEnd = offset + headerSize + 2 * cells;
  if (pointersEnd > pageSize || content > pageSize || content < pointersEnd || fragmented > 60) return false;
  if (freeblock !== 0 && (freeblock < content || freeblock >= pageSize)) return false;
  if (interior) {
    const right = data.readUInt32BE(offset + 8);
    if (right < 2 || right > pages) return false;
  }
  for (let i = 0; i < cells; i++) {
    const cell = data.readUInt16BE(offset + headerSize + 2 * i);
    if (cell < content || cell >= pageSize) return false;
  }
  return true;
}

/** SQLite's WAL checksum over `data` (a multiple of 8 bytes), continuing from (s0, s1). */
function checksum(data: Buffer, s0: number, s1: number, bigEndian: boolean): [number, number] {
  let a = s0;
  let b = s1;
  if (bigEndian === NATIVE_BIG_ENDIAN && data.byteOffset % 4 === 0) {
    // The words in the machine's order: read as a typed array, 20 times faster than readUInt32.
    const words = new Uint32Array(data.buffer, data.byteOffset, data.length / 4);
    for (let i = 0; i < words.length; i += 2) {
      a = (a + words[i]! + b) >>> 0;
      b = (b + words[i + 1]! + a) >>> 0;
    }
    return [a, b];
  }
  for (let i = 0; i < data.length; i += 8) {
    const x0 = bigEndian ? data.readUInt32BE(i) : data.readUInt32LE(i);
    const x1 = bigEndian ? data.readUInt32BE(i + 4) : data.readUInt32LE(i + 4);
    a = (a + x0 + b) >>> 0;
    b = (b + x1 + a) >>> 0;
  }
  return [a, b];
}

function read(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buffer, done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done === length ? buffer : buffer.subarray(0, done);
}

const NATIVE_BIG_ENDIAN = endianness() === "BE";
const hex = (n: number) => `0x${n.toString(16).padStart(8, "0")}`;
