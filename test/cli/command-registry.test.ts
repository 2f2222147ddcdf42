import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands/index.js";
import { main } from "../../src/cli/main.js";
import { memoryIO } from "../helpers/harness.js";

/**
 * Commands are listed by name and summary and loaded only when they run (start-up of
 * `kaiawatch run` does not pay for the others); each name must load the command whose help
 * names it.
 */
describe("command registry", () => {
  it("loads for every name the command whose usage it is", async () => {
    for (const entry of COMMANDS) {
      const command = await entry.load();
      expect(command.help, entry.name).toMatch(new RegExp(`^Usage:\\s+kaiawatch ${entry.name}( |\\n)`));
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
