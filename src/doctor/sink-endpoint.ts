import type { SinkConfig } from "../notify/sinks/index.js";

/** Where a sink delivers: a host to resolve, a file to append to, or this process's output. */
export type SinkEndpoint = { kind: "host"; host: string; key: string } | { kind: "file"; path: string } | { kind: "stdout" };

/**
 * The endpoint of each sink type, written out per type so that a new type does not compile
 * until it says where it delivers. Never the URL itself: for chat sinks the URL is the secret.
 */
export function sinkEndpoint(sink: SinkConfig): SinkEndpoint {
  switch (sink.type) {
    case "slack":
    case "discord":
    case "webhook":
    case "pagerduty":
    case "teams":
    case "heartbeat":
      return { kind: "host", host: new URL(sink.url).hostname, key: "url" };
    case "telegram":
      return { kind: "host", host: new URL(sink.api_url).hostname, key: "api_url" };
    case "email":
      return { kind: "host", host: sink.smtp.host, key: "smtp.host" };
    case "file":
      return { kind: "file", path: sink.path };
    case "console":
      return { kind: "stdout" };
    default: {
      const unknown: never = sink;
      throw new Error(`no endpoint for sink type ${(unknown as { type: string }).type}`);
    }
  }
}
