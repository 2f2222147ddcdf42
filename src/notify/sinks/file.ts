import { open } from "node:fs/promises";
import { z } from "zod";
import type { Common } from "../../common/common.js";
import type { Sink } from "../sink.js";
import { SinkError } from "../sink.js";
import type { SinkConfigProblem } from "../errors.js";
import { throwIfProblems } from "../sink-checks.js";
import { defineSink } from "./define-sink.js";

const fileOptions = z.strictObject({
  /** A JSON Lines file, appended to (created when missing). */
  path: z.string().min(1).meta({ description: "JSON Lines file, one alert per line." }),
});

export type FileOptions = z.output<typeof fileOptions>;

export function validateFileOptions(options: FileOptions): SinkConfigProblem[] {
  return typeof options.path === "string" && options.path !== "" ? [] : [{ key: "path", message: "a file path is required" }];
}

/**
 * One JSON line per alert document, appended and fsynced before the delivery counts as
 * accepted. The file is opened per delivery, so log rotation (rename + new file) just works.
 */
export function createFileSink(_common: Common, name: string, options: FileOptions): Sink {
  throwIfProblems(name, validateFileOptions(options));
  return {
    name,
    type: "file",
    async send(delivery, signal) {
      signal.throwIfAborted();
      const data = delivery.alerts.map((alert) => `${JSON.stringify(alert)}\n`).join("");
      let handle;
      try {
        handle = await open(options.path, "a");
        await handle.writeFile(data, "utf8");
        await handle.sync();
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        // A missing directory, a permission or a full disk can be fixed while retries wait; a directory in place of the file is a config mistake.
        const permanent = code === "EISDIR";
        throw new SinkError("KW_NOTIFY_FILE", `sink ${name} (file): cannot append to ${options.path} (${typeof code === "string" ? code : "error"})`, { permanent, cause: error });
      } finally {
        await handle?.close();
      }
    },
  };
}

export const fileSink = defineSink({
  type: "file",
  options: fileOptions,
  check: validateFileOptions,
  create: (common, name, options) => createFileSink(common, name, options),
  preview: (delivery) => delivery.alerts.map((alert) => JSON.stringify(alert)).join("\n"),
  secretKeys: [],
});
