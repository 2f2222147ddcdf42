import { APP_CSS } from "./app-css.js";
import { APP_JS } from "./app-js.js";
import { INDEX_HTML } from "./index-html.js";

/**
 * Script, style and data only from this server, nothing inline, no frames, no forms sent
 * anywhere: if on-chain text ever reached the page as markup, the browser would still refuse
 * to run it. Sent with every answer of the status server (its JSON too).
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

/**
 * The status page, served by the status server itself: compiled into dist/ as string
 * modules, so there is no build step, no file to copy and nothing fetched from elsewhere.
 */
export const PAGE_FILES: Readonly<Record<string, { contentType: string; body: string }>> = {
  "/": { contentType: "text/html; charset=utf-8", body: INDEX_HTML },
  "/assets/app.js": { contentType: "text/javascript; charset=utf-8", body: APP_JS },
  "/assets/app.css": { contentType: "text/css; charset=utf-8", body: APP_CSS },
};
