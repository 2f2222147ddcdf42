import type { Common } from "../common/common.js";
import type { CreditMeter } from "../explorer/credit-meter.js";
import type { Replicas } from "../store/backend.js";
import { readMeta, writeMeta } from "../store/meta-slot.js";
import type { Store } from "../store/types.js";
import { creditsSlot } from "./credits-slot.js";

const CREDITS_SAVE_INTERVAL_MS = 10_000;

/** Keeps the credit meter's day in the store, so that a restart does not reset the budget. */
export interface CreditsKeeper {
  /** Takes the day's spending back from the store (at open, before anything is spent). */
  restore(): Promise<void>;
  /** Writes the meter; with replicas also reads what the others spent today. */
  save(): Promise<void>;
  /** Saves every few seconds until stop(). */
  start(): void;
  stop(): void;
}

export function createCreditsKeeper(common: Common, parts: { store: Store; meter: CreditMeter; replicas: Replicas | undefined }): CreditsKeeper {
  const { store, meter, replicas } = parts;
  // Replicas: each keeps its own day's spending (credits.<replica>), and the budget counts them all.
  const credits = creditsSlot(replicas?.selfId);
  let timer: NodeJS.Timeout | undefined;

  async function save(): Promise<void> {
    await writeMeta(store, credits, meter.snapshot());
    if (replicas !== undefined) meter.setSpentElsewhere(await spentByOthers(store, replicas, meter.snapshot().day));
  }

  return {
    async restore() {
      const saved = await readMeta(store, credits);
      if (saved) meter.restore(saved);
    },
    save,
    start() {
      timer = setInterval(() => {
        save().catch((error: unknown) => common.logger.warn({ err: String(error) }, "cannot save the credit meter"));
      }, CREDITS_SAVE_INTERVAL_MS);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
    },
  };
}

/** What the other replicas (every one that has a heartbeat row) say they spent on `day`. */
async function spentByOthers(store: Store, replicas: Replicas, day: string): Promise<number> {
  let spent = 0;
  for (const replica of await replicas.list()) {
    if (replica.id === replicas.selfId) continue;
    const state = await readMeta(store, creditsSlot(replica.id));
    if (state?.day === day) spent += state.spent;
  }
  return spent;
}
