/**
 * What a lease is on: polling a source and moving its cursor (`source:<key>`), running a
 * sink's delivery worker (`sink:<name>`), reading a balance watch and keeping its rules'
 * episodes (`balance:<watch>`), or sending kaiawatch's own operational alerts
 * (`operational`). A typed union built by one function: a plain string (a source key without
 * its kind) is not a resource, which is how replicas once sent no operational alert at all.
 */
export type LeaseResource = `source:${string}` | `sink:${string}` | `balance:${string}` | "operational";

export type ResourceOf = { source: string } | { sink: string } | { balance: string } | "operational";

export function leaseResource(of: ResourceOf): LeaseResource {
  if (of === "operational") return "operational";
  if ("source" in of) return `source:${of.source}`;
  return "sink" in of ? `sink:${of.sink}` : `balance:${of.balance}`;
}

const SOURCE_PREFIX = "source:";
const SINK_PREFIX = "sink:";
const BALANCE_PREFIX = "balance:";

/** The lease row's key: a source's is its cursor key (commits are fenced by it), any other the resource's name. */
export function leaseKeyOf(resource: LeaseResource): string {
  return resource.startsWith(SOURCE_PREFIX) ? resource.slice(SOURCE_PREFIX.length) : resource;
}

/** The resource of a lease row not in this replica's plan (another config's): a sink's or a balance watch's by its prefix, else a source's. */
export function resourceOfLeaseKey(key: string): LeaseResource {
  if (key.startsWith(SINK_PREFIX)) return key as `sink:${string}`;
  if (key.startsWith(BALANCE_PREFIX)) return key as `balance:${string}`;
  return key === "operational" ? "operational" : `source:${key}`;
}

/** The sources, sinks and balance watches among resources, by key and name (what a heartbeat publishes). */
export function namesOf(resources: readonly LeaseResource[]): { sources: string[]; sinks: string[]; balances: string[] } {
  const named = (prefix: string) => resources.filter((r) => r.startsWith(prefix)).map((r) => r.slice(prefix.length));
  return { sources: named(SOURCE_PREFIX), sinks: named(SINK_PREFIX), balances: named(BALANCE_PREFIX) };
}
