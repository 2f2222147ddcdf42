import type { Common } from "../../src/common/common.js";
import { createDaemon, type Daemon, type DaemonOptions } from "../../src/daemon/create-daemon.js";
import { quietCommon } from "./harness.js";

/**
 * A daemon in this process for the length of `use` (which drives it by hand: `runOnce`, reads
 * of its store), stopped after it even when `use` throws, so that a failed assertion leaves
 * no store open and no timer running. Returns what `use` returns.
 */
export async function withDaemon<T>(options: DaemonOptions & { common?: Common }, use: (daemon: Daemon) => Promise<T>): Promise<T> {
  const { common = quietCommon(), ...daemonOptions } = options;
  const daemon = await createDaemon(common, daemonOptions);
  try {
    return await use(daemon);
  } finally {
    await daemon.stop();
  }
}
