import type { FiringSource } from "../notify/inhibit.js";
import { labelsOfAlert } from "../notify/labels.js";
import { readMeta } from "../store/meta-slot.js";
import type { Store } from "../store/types.js";
import { OPERATIONAL_EPISODES, operationalLabels } from "./operational-monitor.js";

/**
 * The alerts firing now that an inhibit rule may take as its source, read from the store:
 * every open balance episode and open absence (its firing alert's labels) and every kaiawatch
 * condition not yet cleared (a failing source, the explorer behind …, with its labels). The store, not
 * this process's memory: with replicas, the episodes another replica holds count too, and
 * after a restart the sources are there before the first check.
 */
export async function readFiringSources(store: Pick<Store, "listBalanceEpisodes" | "listAbsences" | "getMeta">): Promise<FiringSource[]> {
  const out: FiringSource[] = [];
  for (const episode of await store.listBalanceEpisodes()) {
    out.push({ id: episode.alert.id, labels: labelsOfAlert(episode.alert), summary: episode.alert.summary });
  }
  for (const absence of await store.listAbsences()) {
    if (absence.episode !== null) out.push({ id: absence.episode.id, labels: labelsOfAlert(absence.episode), summary: absence.episode.summary });
  }
  const operational = (await readMeta(store, OPERATIONAL_EPISODES)) ?? {};
  for (const episode of Object.values(operational)) {
    // A cleared condition is kept until its resolve is queued: it no longer inhibits.
    if (episode.resolved_at !== undefined) continue;
    out.push({ id: episode.id, labels: operationalLabels(episode), summary: episode.summary });
  }
  return out;
}
