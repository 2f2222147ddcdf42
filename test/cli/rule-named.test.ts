import { afterAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { main } from "../../src/cli/main.js";
import { memoryIO, tempDir } from "../helpers/harness.js";

const dir = tempDir("kaiawatch-rule-named-");
afterAll(() => dir.remove());
const configPath = join(dir.path, "config.yaml");
writeFileSync(
  configPath,
  `
store: { path: "${join(dir.path, "store.json")}" }
status: { listen: false }
watches: [ { name: token, contract: "0x9a2215fbc9a36e94d3f0be0fc59343d3ef29c49c" } ]
rules:
  - { name: token-logs, watch: token, notify: [out] }
  - { name: big-transfers, watch: token, notify: [out] }
sinks: { out: { type: console } }
`,
);

describe("--rule NAME in replay, explain and silence", () => {
  const tx = `0x${"ab".repeat(32)}`;
  const commands: Record<string, (rule: string) => string[]> = {
    replay: (rule) => ["replay", "--config", configPath, "--rule", rule, "--from", "1", "--to", "2"],
    explain: (rule) => ["explain", "--config", configPath, "--rule", rule, "--tx", tx],
    silence: (rule) => ["silence", "add", "--config", configPath, "--rule", rule, "--for", "1h", "--reason", "test"],
  };
  for (const [name, args] of Object.entries(commands)) {
    it(`${name}: an unknown rule is a usage error that suggests the closest and lists them all`, async () => {
      const io = memoryIO();
      expect(await main(args("token-log"), io)).toBe(2);
      expect(io.err()).toContain(`kaiawatch ${name}: no rule named "token-log" (did you mean "token-logs"?); rules: token-logs, big-transfers`);

      const hostile = memoryIO();
      expect(await main(args("x\u001b[2J\nforged line"), hostile)).toBe(2);
      // The name is the user's own text, but it is still kept to one line without control characters.
      expect(hostile.err().split("\n")[0]).toContain("no rule named");
      expect(hostile.err()).not.toContain("\u001b");
      expect(hostile.err()).not.toMatch(/\n\s+at /);
    });
  }
});
