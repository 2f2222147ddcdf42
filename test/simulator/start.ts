import { afterEach } from "vitest";
import { createSimulator, type Simulator, type SimulatorOptions } from "../../src/simulator/index.js";

const opened: Simulator[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

/** A simulator that is closed after the test that started it. */
export async function startSimulator(options: SimulatorOptions): Promise<Simulator> {
  const s = await createSimulator(options);
  opened.push(s);
  return s;
}
