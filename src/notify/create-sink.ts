import type { Common } from "../common/common.js";
import type { Sink } from "./sink.js";
import type { SinkConfigProblem } from "./errors.js";
import { throwIfProblems } from "./sink-checks.js";
import { SINK_TYPES, sinkDefinitionOf, type SinkOptions } from "./sinks/index.js";

function unknownType(options: SinkOptions): SinkConfigProblem[] {
  return [{ key: "type", message: `unknown sink type '${String((options as { type?: unknown }).type)}' (one of ${SINK_TYPES.join(", ")})` }];
}

/**
 * Every problem with a sink's options (URL scheme, template syntax with position, header
 * names, addresses …), keyed below `sinks.NAME`, for the config loader to report at once.
 */
export function validateSinkConfig(options: SinkOptions): SinkConfigProblem[] {
  return sinkDefinitionOf(options.type)?.check(options) ?? unknownType(options);
}

/** Build a sink; throws SinkConfigError (code KW_NOTIFY_CONFIG) listing every problem. */
export function createSink(common: Common, name: string, options: SinkOptions): Sink {
  const definition = sinkDefinitionOf(options.type);
  if (definition === undefined) {
    throwIfProblems(name, unknownType(options));
    throw new Error("unreachable");
  }
  return definition.create(common, name, options);
}
