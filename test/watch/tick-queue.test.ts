import { describe, expect, it } from "vitest";
import { createTickQueue } from "../../src/watch/tick-queue.js";

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe("tick queue", () => {
  it("runs at most `size` entries at once, in the order they were queued, and every one of them", async () => {
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const queue = createTickQueue<number>(3, async (n) => {
      started.push(n);
      running++;
      most = Math.max(most, running);
      await tick();
      running--;
      if (n % 5 === 0) throw new Error(`entry ${n} fails`);
    });
    for (let n = 0; n < 2_500; n++) queue.push(n);
    await queue.whenIdle();
    expect(most).toBe(3);
    expect(running).toBe(0);
    expect(started).toEqual(Array.from({ length: 2_500 }, (_, n) => n));
  });

  it("is idle at once when empty, and again after entries pushed later have run", async () => {
    const ran: string[] = [];
    const queue = createTickQueue<string>(2, async (s) => {
      await tick();
      ran.push(s);
    });
    await queue.whenIdle();
    queue.push("a");
    const idle = queue.whenIdle();
    queue.push("b");
    queue.push("c");
    await idle;
    expect(ran.sort()).toEqual(["a", "b", "c"]);
  });

  it("refuses a size that is not a positive integer", () => {
    expect(() => createTickQueue(0, async () => {})).toThrow(RangeError);
  });
});
