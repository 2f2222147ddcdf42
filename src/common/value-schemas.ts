import { z } from "zod";
import { DURATION_PATTERN, parseDuration } from "./duration.js";

/*
 * zod schemas of the values several parts of config.yaml share: durations, URLs and
 * secrets. They live below both the config and the sinks, because each sink declares its
 * own keys (src/notify/sinks) and the config schema puts them together.
 */

/** A schema-level message that leaves "required" (input undefined) to the shared error map. */
export const unlessMissing = (message: string) => (issue: { input?: unknown }) => (issue.input === undefined ? undefined : message);

export const httpUrl = z.url({ protocol: /^https?$/, error: unlessMissing("not an http(s) URL") });

/** Trailing slashes are dropped so that joining "/api/v1/…" never gives "//". */
export const baseUrl = httpUrl.transform((url) => url.replace(/\/+$/, ""));

/** Milliseconds, written with a unit. */
export const duration = z
  .string({ error: (issue) => (typeof issue.input === "number" ? `a duration needs a unit, e.g. "${String(issue.input)}ms" or "${String(issue.input)}s"` : undefined) })
  .regex(DURATION_PATTERN, 'not a duration: use ms, s, m, h or d, e.g. "500ms", "30s", "5m", "1h30m"')
  .meta({ description: 'A duration: "500ms", "30s", "5m", "2h", "1d" or a sum such as "1h30m".' })
  .transform((text) => parseDuration(text));

/** An empty value (e.g. `${VAR:-}`) means "not set", so optional secrets can come from an optional variable. */
export const optionalSecret = z
  .string()
  .transform((text) => (text === "" ? undefined : text))
  .optional();
