import type { SinkConfigProblem } from "./errors.js";
import { SinkConfigError, TemplateError } from "./errors.js";
import { compileTemplate, type Template } from "./template.js";
import { privateNetworkReason } from "./private-network.js";

/**
 * Config-time checks shared by the sink factories. Each returns problems instead of
 * throwing, so that the config loader can report every mistake at once.
 */

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

export interface UrlRule {
  /** Plain http is accepted (the webhook sink's `allow_http`). */
  allowHttp?: boolean;
  /** Plain http is accepted to this machine only (a local relay; tests). */
  allowLoopbackHttp?: boolean;
  /** Link-local and cloud metadata hosts are accepted (the sink's `allow_private_network`). */
  allowPrivateNetwork?: boolean;
}

export function checkUrl(problems: SinkConfigProblem[], key: string, value: unknown, rule: UrlRule = {}): void {
  if (typeof value !== "string" || value === "") {
    problems.push({ key, message: "a URL is required" });
    return;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // Never echo the value: for chat sinks the URL is the secret.
    problems.push({ key, message: "is not a valid URL" });
    return;
  }
  const refused = rule.allowPrivateNetwork === true ? undefined : privateNetworkReason(url.hostname);
  if (refused !== undefined) {
    // The host is named (it is no secret); the path and query, which may be, are not.
    problems.push({ key, message: `points at ${refused} (${url.hostname}); set allow_private_network: true if this sink is meant to reach it` });
    return;
  }
  if (url.protocol === "https:") return;
  if (url.protocol === "http:") {
    if (rule.allowHttp) return;
    if (rule.allowLoopbackHttp && LOOPBACK.has(url.hostname)) return;
    problems.push({ key, message: rule.allowLoopbackHttp === undefined ? "must use https (set allow_http: true to permit plain http)" : "must use https" });
    return;
  }
  problems.push({ key, message: `must be an https URL, not ${url.protocol.replace(/:$/, "")}` });
}

export function checkTimeout(problems: SinkConfigProblem[], key: string, value: unknown): void {
  if (value === undefined) return;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > 600_000) {
    problems.push({ key, message: "must be a whole number of milliseconds between 1 and 600000" });
  }
}

/** Compile an optional template; a syntax error becomes a problem with its position. */
export function checkTemplate(problems: SinkConfigProblem[], key: string, value: unknown): Template | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string") {
    problems.push({ key, message: "must be a template string" });
    return undefined;
  }
  try {
    return compileTemplate(value);
  } catch (error) {
    if (error instanceof TemplateError) {
      problems.push({ key, message: error.message });
      return undefined;
    }
    throw error;
  }
}

export function throwIfProblems(name: string, problems: SinkConfigProblem[]): void {
  if (problems.length > 0) throw new SinkConfigError(name, problems);
}
