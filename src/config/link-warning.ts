import { NETWORK_DEFAULTS } from "./resolve-config.js";
import type { Config } from "./types.js";

function hostOf(url: string): string {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return url.toLowerCase();
  }
}

/**
 * A config that reads another explorer (the simulator, a proxy, a self-hosted finder-api) but
 * keeps the network's KaiaScan site for links: alerts then link to kaiascan.io pages of
 * transactions it may not have (synthetic ones). Worth a warning, not an error: a proxy in
 * front of the real KaiaScan API serves real transactions. Undefined when nothing is off.
 */
export function explorerLinkWarning(config: Config): string | undefined {
  const known = NETWORK_DEFAULTS[config.chain.network];
  if (known === undefined) return undefined;
  if (hostOf(config.explorer.base_url) === hostOf(known.base_url)) return undefined;
  if (hostOf(config.chain.explorer_url) !== hostOf(known.explorer_url)) return undefined;
  return `explorer.base_url (${hostOf(config.explorer.base_url)}) is not KaiaScan's API for network ${config.chain.network}, but alert links go to ${known.explorer_url} (chain.explorer_url, the ${config.chain.network} default): transactions that explorer serves may not be there. Set chain.explorer_url to its site (the simulator's own URL serves /tx/… and /block/… pages)`;
}
