import { sanitizeText } from "../common/sanitize-text.js";
import type { Delivery } from "./sink.js";
import { sinkDefinitionOf, type SinkOptions } from "./sinks/index.js";

/**
 * A delivery as its sink would send it, for a terminal (`kaiawatch replay`): built by the
 * sink's own payload builder with the sink's templates, then shown readably. The result is
 * sanitized once more because it goes to a terminal: on-chain text must not move the cursor,
 * recolour the screen or reorder what follows.
 */
export function previewDelivery(sink: SinkOptions, delivery: Delivery): string {
  const definition = sinkDefinitionOf(sink.type);
  // A loaded config names known types only.
  if (definition === undefined) throw new Error(`no preview for sink type '${sink.type}'`);
  return sanitizeText(definition.preview(delivery, sink)).replace(/\n+$/, "");
}
