import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeFileDurably } from "../../src/store/durable-file.js";

describe("writeFileDurably", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "kw-durable-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("replaces the file whole and leaves no temporary file behind", async () => {
    const path = join(dir, "state.json");
    await writeFile(path, "old\n");
    await writeFileDurably(path, "new\n");
    expect(await readFile(path, "utf8")).toBe("new\n");
    expect(await readdir(dir)).toEqual(["state.json"]);
  });

  it("concurrent writers each rename a whole file of their own", async () => {
    const path = join(dir, "state.json");
    await Promise.all(["a", "b", "c"].map((text) => writeFileDurably(path, text.repeat(10_000))));
    expect(["a", "b", "c"].map((text) => text.repeat(10_000))).toContain(await readFile(path, "utf8"));
    expect(await readdir(dir)).toEqual(["state.json"]);
  });

  it("removes its temporary file when the rename fails", async () => {
    // A directory at the path makes rename(2) fail after the temporary file is written.
    const path = join(dir, "taken");
    await writeFile(join(dir, "marker"), "");
    await mkdir(join(path, "inside"), { recursive: true });
    await expect(writeFileDurably(path, "x")).rejects.toThrow();
    expect((await readdir(dir)).sort()).toEqual(["marker", "taken"]);
  });
});
