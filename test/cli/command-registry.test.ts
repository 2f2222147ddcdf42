import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands/index.js";
import { main } from "../../src/cli/main.js";
import { memoryIO } from "../helpers/harness.js";

/**
 * Commands are listed by name and summary and loaded only when they run (start-up of
 * `kaiawatch run` does not pay for the others); the listing must say what each command
 * itself says.
 */
describe("command registry", () => {
  it("lists every command with its own name and summary", async () => {
    for (const entry of COMMANDS) {
      const command = await entry.load();
      expect({ name: command.name, summary: command.summary }).toEqual({ name: entry.name, summary: entry.summary });
    }
    expect(new Set(COMMANDS.map((c) => c.name)).size).toBe(COMMANDS.length);
  });

  it("shows them all in kaiawatch --help and runs a command's own --help", async () => {
    const io = memoryIO();
    expect(await main(["--help"], io)).toBe(0);
    for (const entry of COMMANDS) expect(io.out()).toContain(`${entry.name}  `);
    const help = memoryIO();
    expect(await main(["validate", "--help"], help)).toBe(0);
    expect(help.out()).toContain("Usage: kaiawatch validate");
  });
});
