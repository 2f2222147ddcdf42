import type { Common } from "../../common/common.js";
import type { SinkConfigProblem } from "../errors.js";
import { createHttpSender, type HttpSender } from "../http-sender.js";
import { throwIfProblems } from "../sink-checks.js";
import type { Delivery, Sink } from "../sink.js";

/** Chat and incident services answer within seconds or not at all; the dispatcher retries. */
const TIMEOUT_MS = 10_000;

/**
 * What differs between the sinks that POST JSON built from the delivery to one URL (Slack,
 * Discord, Telegram, Teams, PagerDuty): everything else (checking the options, keeping the
 * credential out of every log and error, the request, the answer) is the same and lives here.
 */
export interface JsonPostSinkSpec {
  name: string;
  type: string;
  /** The problems its own checks find in the options; any of them refuses the sink (KW_NOTIFY_CONFIG). */
  problems: SinkConfigProblem[];
  url: string;
  /** The credential: the URL itself for Slack, Discord and Teams, a token or key for the others. */
  secret: string;
  /**
   * The JSON documents one delivery is sent as, posted one after another in this order. A
   * retry sends them all again, which each service named above takes without a duplicate.
   */
  documents(delivery: Delivery): readonly unknown[];
}

export function createJsonPostSink(common: Common, spec: JsonPostSinkSpec, sender: HttpSender = createHttpSender(common)): Sink {
  throwIfProblems(spec.name, spec.problems);
  common.secrets.add(spec.secret);
  const target = `sink ${spec.name} (${spec.type})`;
  return {
    name: spec.name,
    type: spec.type,
    async send(delivery, signal) {
      let status: number | undefined;
      for (const document of spec.documents(delivery)) {
        const post = { url: spec.url, body: JSON.stringify(document), timeoutMs: TIMEOUT_MS, target, secrets: [spec.secret] };
        status = (await sender.postJson(post, signal)).status;
      }
      // The last answer: every one before it was a success too (a failure throws).
      return status === undefined ? undefined : { status };
    },
  };
}
