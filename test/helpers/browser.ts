import { chromium, type BrowserContext, type BrowserContextOptions } from "playwright-core";
import { inject } from "vitest";
import { CHROMIUM } from "./chromium.js";

export { CHROMIUM, HAS_CHROMIUM } from "./chromium.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The shared browser's address (test/global-setup.ts); "" where there is no chromium. */
    chromiumEndpoint: string;
  }
}

/** A context of the shared browser, and how to close it with this file's connection to the browser. */
export interface SharedContext {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/**
 * A fresh context (its own cookies, storage and viewport) in the one Chromium of the run,
 * started by test/global-setup.ts (each browser test file launched its own before). close()
 * ends the context and this file's connection; the browser stays for the other files.
 */
export async function browserContext(options: BrowserContextOptions = {}): Promise<SharedContext> {
  const endpoint = inject("chromiumEndpoint");
  if (endpoint === "") throw new Error(`no shared browser: ${CHROMIUM} is missing`);
  const browser = await chromium.connect(endpoint);
  const context = await browser.newContext(options);
  return {
    context,
    async close() {
      await context.close();
      await browser.close();
    },
  };
}
