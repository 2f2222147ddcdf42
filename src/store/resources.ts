/**
 * What a lease is on: polling a source and moving its cursor (`source:<key>`), running a
 * sink's delivery worker (`sink:<name>`), or sending kaiawatch's own operational alerts
 * (`operational`). A typed union built by one function: a plain string (a source key without
 * its kind) is not a resource, which is how replicas once sent no operational alert at all.
 */
export type LeaseResource = `source:${string}` | `sink:${string}` | "operational";

export type ResourceOf = { source: string } | { sink: string } | "operational";

export function leaseResource(of: ResourceOf): LeaseResource {
  if (of === "operational") return "operational";
  return "source" in of ? `source:${of.source}` : `sink:${of.sink}`;
}

const SOURCE_PREFIX = "source:";
const SINK_PREFIX = "sink:";

/** The lease row's key: a source's is its cursor key (commits are fenced by it), any other the resource's name. */
export function leaseKeyOf(resource: LeaseResource): string {
  return resource.startsWith(SOURCE_PREFIX) ? resource.slice(SOURCE_PREFIX.length) : resource;
}

/** The resource of a lease row not in this replica's plan (another config's): a sink's by its prefix, else a source's. */
export function resourceOfLeaseKey(key: string): LeaseResource {
  return key.startsWith(SINK_PREFIX) ? (key as `sink:${string}`) : `source:${key}`;
}

/** The sources and sinks among resources, by key and name (what a heartbeat publishes). */
export function namesOf(resources: readonly LeaseResource[]): { sources: string[]; sinks: string[] } {
  return {
    sources: resources.filter((r) => r.startsWith(SOURCE_PREFIX)).map((r) => r.slice(SOURCE_PREFIX.length)),
    sinks: resources.filter((r) => r.startsWith(SINK_PREFIX)).map((r) => r.slice(SINK_PREFIX.length)),
  };
}
