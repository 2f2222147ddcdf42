import type { Common } from "../common/common.js";
import { createProgress, type Progress } from "../common/progress.js";
import type { CommandIO } from "./command.js";

/**
 * The progress of a command's long work (a replay, `once` catching up): a line redrawn on
 * stderr when it is a terminal, else info log lines every few seconds. Those are logged at
 * info even when the command's own level is quieter by default (replay logs warnings only),
 * unless the user chose a level with --log-level.
 */
export function commandProgress(common: Common, io: CommandIO, levelChosen: boolean): Progress {
  if ((io.stderr as { isTTY?: boolean }).isTTY === true) return createProgress({ now: common.now, logger: common.logger, terminal: io.stderr });
  const logger = levelChosen || common.logger.isLevelEnabled("info") ? common.logger : common.logger.child({}, { level: "info" });
  return createProgress({ now: common.now, logger });
}
