import type { ServerResponse } from "node:http";
import { startReceiver, type Received, type Receiver } from "./receiver.js";

/**
 * A local stand-in for PagerDuty's Events API v2 (`POST /v2/enqueue`) that checks each event
 * as PagerDuty documents it ("Send an Alert Event", "Events API v2 Overview"): 202 with a
 * success body for a valid event, 400 "invalid event" with the reasons otherwise.
 */
const ACTIONS = new Set(["trigger", "acknowledge", "resolve"]);
const SEVERITIES = new Set(["critical", "error", "warning", "info"]);
const TOP_LEVEL = new Set(["routing_key", "event_action", "dedup_key", "payload", "images", "links", "client", "client_url"]);
const PAYLOAD = new Set(["summary", "source", "severity", "timestamp", "component", "group", "class", "custom_details"]);
const MAX_BYTES = 512 * 1024;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const optionalString = (v: unknown) => v === undefined || typeof v === "string";

function isHttpUrl(value: unknown): boolean {
  if (typeof value !== "string") return false;
  try {
    return ["http:", "https:"].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

/** Every documented rule an event breaks; empty when PagerDuty would accept it. */
export function pagerDutyProblems(req: Received): string[] {
  const problems: string[] = [];
  if (req.method !== "POST") problems.push(`method ${req.method}`);
  if (!String(req.headers["content-type"]).startsWith("application/json")) problems.push("content-type is not application/json");
  if (Buffer.byteLength(req.body) > MAX_BYTES) problems.push("payload larger than 512 KB");
  let event: unknown;
  try {
    event = JSON.parse(req.body);
  } catch {
    return [...problems, "body is not JSON"];
  }
  if (!isObject(event)) return [...problems, "event is not an object"];
  for (const key of Object.keys(event)) if (!TOP_LEVEL.has(key)) problems.push(`unknown field ${key}`);
  if (typeof event.routing_key !== "string" || event.routing_key.length !== 32) problems.push("Length of 'routing_key' is incorrect (should be 32 characters)");
  if (typeof event.event_action !== "string" || !ACTIONS.has(event.event_action)) problems.push("'event_action' is invalid");
  if (event.dedup_key !== undefined && (typeof event.dedup_key !== "string" || event.dedup_key.length === 0 || event.dedup_key.length > 255)) problems.push("'dedup_key' must be a string of 1 to 255 characters");
  if (event.event_action !== "trigger") {
    if (event.dedup_key === undefined) problems.push("'dedup_key' is required for acknowledge and resolve");
    return problems;
  }
  const payload = event.payload;
  if (!isObject(payload)) return [...problems, "'payload' is missing or not an object"];
  for (const key of Object.keys(payload)) if (!PAYLOAD.has(key)) problems.push(`unknown payload field ${key}`);
  if (typeof payload.summary !== "string" || payload.summary.length === 0 || payload.summary.length > 1024) problems.push("'payload.summary' must be 1 to 1024 characters");
  if (typeof payload.source !== "string" || payload.source.length === 0) problems.push("'payload.source' is required");
  if (typeof payload.severity !== "string" || !SEVERITIES.has(payload.severity)) problems.push("'payload.severity' is invalid");
  if (payload.timestamp !== undefined && (typeof payload.timestamp !== "string" || Number.isNaN(Date.parse(payload.timestamp)))) problems.push("'payload.timestamp' is not ISO 8601");
  for (const key of ["component", "group", "class"]) if (!optionalString(payload[key])) problems.push(`'payload.${key}' must be a string`);
  if (payload.custom_details !== undefined && !isObject(payload.custom_details)) problems.push("'payload.custom_details' must be an object");
  if (event.links !== undefined) {
    if (!Array.isArray(event.links)) problems.push("'links' must be an array");
    else for (const link of event.links as unknown[]) if (!isObject(link) || !isHttpUrl(link.href) || !optionalString(link.text)) problems.push("a link needs an href URL and an optional text");
  }
  if (!optionalString(event.client) || (event.client_url !== undefined && !isHttpUrl(event.client_url))) problems.push("'client' / 'client_url' invalid");
  return problems;
}

/** Answers as PagerDuty does; `override` replaces the answer (429, 500 …) for a test. */
export async function startPagerDutyReceiver(override?: (res: ServerResponse, req: Received) => boolean): Promise<Receiver & { events: () => Record<string, unknown>[] }> {
  const receiver = await startReceiver((res, req) => {
    if (override?.(res, req) === true) return;
    const problems = pagerDutyProblems(req);
    res.setHeader("content-type", "application/json");
    if (problems.length > 0) {
      res.statusCode = 400;
      res.end(JSON.stringify({ status: "invalid event", message: "Event object is invalid", errors: problems }));
      return;
    }
    const event = JSON.parse(req.body) as { dedup_key?: string };
    res.statusCode = 202;
    res.end(JSON.stringify({ status: "success", message: "Event processed", dedup_key: event.dedup_key ?? "generated" }));
  });
  return Object.assign(receiver, { events: () => receiver.requests.map((r) => JSON.parse(r.body) as Record<string, unknown>) });
}
