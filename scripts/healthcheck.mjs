/* global fetch */
// The Docker HEALTHCHECK: exit 0 when kaiawatch's status server answers /healthz with 2xx.
// Plain node (slim images have no curl); the URL comes from KAIAWATCH_HEALTHCHECK_URL.
const url = process.env.KAIAWATCH_HEALTHCHECK_URL || "http://127.0.0.1:9464/healthz";
try {
  const response = await fetch(url, { signal: AbortSignal.timeout(4000) });
  if (!response.ok) {
    process.stderr.write(`healthcheck: ${url} answered ${response.status}\n`);
    process.exit(1);
  }
  process.exit(0);
} catch (error) {
  process.stderr.write(`healthcheck: ${url}: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
