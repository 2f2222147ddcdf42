import { z } from "zod";
import type { Common } from "../../common/common.js";
import { duration } from "../../common/value-schemas.js";
import type { SinkConfigProblem } from "../errors.js";
import type { Delivery, Sink } from "../sink.js";

/**
 * The keys every sink has under `sinks.NAME`: how the dispatcher drives it (workers, rate,
 * retries), not what it sends. Only the default rate differs from one type to another.
 */
function deliveryOptions(defaultRatePerSecond: number | undefined) {
  const rate = z.number().positive();
  return {
    concurrency: z.int().min(1).default(1),
    rate_per_second: defaultRatePerSecond === undefined ? rate.optional() : rate.default(defaultRatePerSecond),
    max_attempts: z.int().min(1).default(10),
    max_age: duration.prefault("24h"),
    operational: z.boolean().default(false),
  };
}

/**
 * What a sink's factory and checks receive: the output of its options schema. zod types an
 * empty schema's output as an object with no keys at all, which a whole config entry is
 * not; such a sink takes any object.
 */
export type SinkOptionsOf<Options extends z.ZodObject> = keyof Options["shape"] extends never ? object : z.output<Options>;

/** What one sink type is, written once in its own file and listed in the registry (./index.ts). */
export interface SinkSpec<Type extends string, Options extends z.ZodObject> {
  type: Type;
  /** Its own keys under `sinks.NAME`, with their defaults and messages (not `type` nor the delivery options). */
  options: Options;
  /** `rate_per_second` when the config does not set it (a chat service's published limit); no limit when absent. */
  defaultRatePerSecond?: number;
  /**
   * Problems the schema cannot see (URL scheme, template syntax with its position, header
   * names …), keyed below `sinks.NAME`; the factory refuses options that have any.
   */
  check(options: SinkOptionsOf<Options>): SinkConfigProblem[];
  /** Throws SinkConfigError (KW_NOTIFY_CONFIG) listing every problem that `check` finds. */
  create(common: Common, name: string, options: SinkOptionsOf<Options>): Sink;
  /** The delivery as this sink would send it, as text for `kaiawatch replay` (sanitized by the caller). */
  preview(delivery: Delivery, options: SinkOptionsOf<Options>): string;
  /**
   * Its keys that hold a credential, as dotted paths below `sinks.NAME` ("smtp.pass"); a map
   * (webhook `headers`) counts with all its values. The one declaration both uses read: the
   * logger's scrubber takes the values (`secrets` below), and a config error hides whatever
   * sits under the last key of each path (src/config/document-secrets.ts), so a new sink
   * that declares its key here cannot leak it through either.
   */
  secretKeys: readonly string[];
}

export interface SinkDefinition<Type extends string, Options extends z.ZodObject> extends SinkSpec<Type, Options> {
  /** The whole entry under `sinks.NAME`: `type`, the sink's own keys, then the delivery options. */
  schema: ReturnType<typeof entrySchema<Type, Options>>;
  /** The values under `secretKeys` in these options, for the logger's scrubber. */
  secrets(options: SinkOptionsOf<Options>): string[];
}

function entrySchema<Type extends string, Options extends z.ZodObject>(type: Type, options: Options, defaultRatePerSecond: number | undefined) {
  return z.strictObject({ type: z.literal(type), ...(options.shape as Options["shape"]), ...deliveryOptions(defaultRatePerSecond) });
}

export function defineSink<const Type extends string, Options extends z.ZodObject>(spec: SinkSpec<Type, Options>): SinkDefinition<Type, Options> {
  return { ...spec, schema: entrySchema(spec.type, spec.options, spec.defaultRatePerSecond), secrets: (options) => valuesAt(options, spec.secretKeys) };
}

/** The strings at each dotted path of `options`; at a map, every string value of it. */
function valuesAt(options: object, paths: readonly string[]): string[] {
  const found: string[] = [];
  for (const path of paths) {
    let value: unknown = options;
    for (const key of path.split(".")) value = value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
    if (typeof value === "string") found.push(value);
    else if (value !== null && typeof value === "object") for (const inner of Object.values(value)) if (typeof inner === "string") found.push(inner);
  }
  return found;
}
