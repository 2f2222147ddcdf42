import type { IncomingMessage } from "node:http";
import type { Route } from "./api.js";

/** The header a kaiawatch replica names itself with on every explorer request. */
export const REPLICA_HEADER = "x-kaiawatch-replica";

/**
 * One explorer API request as the simulator saw it: who asked (the replica header), for what
 * (operation, the address or contract in the path plus the filters of the query) and which
 * block range. Replica tests count from these whether two replicas fetched the same window.
 */
export interface Poll {
  /** The `x-kaiawatch-replica` header; undefined for a client that sends none. */
  replica: string | undefined;
  op: string;
  /** The path's parameters and the query's filters (contractAddress, signature, tokenId), as one text. */
  subject: string;
  /** blockNumberStart / blockNumberEnd as asked (undefined when left out). */
  from: number | undefined;
  to: number | undefined;
  page: number;
  /** The HTTP status answered, "dropped" for a connection closed without an answer. */
  status: string;
  /**
   * The fault the simulator put into its answer (as in `stats().faults`: serverError,
   * malformed, truncate, reset, rateLimit…), if any: such a poll gave its client no window.
   */
  fault?: string;
  /** Order of arrival, from 0. */
  seq: number;
}

const FILTERS = ["contractAddress", "signature", "tokenId"] as const;

const numberOf = (text: string | null): number | undefined => (text === null || !/^[0-9]{1,18}$/.test(text) ? undefined : Number(text));

/** The log behind `truth.polls()`: kept in memory for the simulator's life (tests, benches). */
export function createPollLog() {
  let polls: Poll[] = [];
  let seq = 0;
  return {
    /** Notes a request as it arrives; its status is filled in when its answer is finished, its fault by the caller. */
    note(req: IncomingMessage, route: Route | undefined, url: URL, op: string, onAnswered: (done: (status: string) => void) => void): Poll {
      const header = req.headers[REPLICA_HEADER];
      const filters = FILTERS.map((name) => [name, url.searchParams.get(name)] as const).filter(([, value]) => value !== null && value !== "");
      const subject = [...Object.values(route?.params ?? {}), ...filters.map(([name, value]) => `${name}=${value}`)].join(" ").toLowerCase();
      const poll: Poll = {
        replica: Array.isArray(header) ? header[0] : header,
        op,
        subject,
        from: numberOf(url.searchParams.get("blockNumberStart")),
        to: numberOf(url.searchParams.get("blockNumberEnd")),
        page: numberOf(url.searchParams.get("page")) ?? 1,
        status: "dropped",
        seq: seq++,
      };
      polls.push(poll);
      onAnswered((status) => (poll.status = status));
      return poll;
    },
    list(): Poll[] {
      return polls.map((poll) => ({ ...poll }));
    },
    reset(): void {
      polls = [];
    },
  };
}
