/** A tiny HTTP helper for the simulator's tests: plain fetch, as any client would do. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

export async function get(base: string, path: string, query: Record<string, string | number | boolean | undefined> = {}, headers: Record<string, string> = {}): Promise<Answer> {
  const url = new URL(path, base);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
  const res = await fetch(url, { headers: { accept: "*/*", ...headers } });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** GET that must answer 200; returns the parsed body. */
export async function ok<T = unknown>(base: string, path: string, query: Record<string, string | number | boolean | undefined> = {}, headers: Record<string, string> = {}): Promise<T> {
  const answer = await get(base, path, query, headers);
  if (answer.status !== 200) throw new Error(`GET ${path} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
  return answer.json as T;
}

export async function rpc(url: string, body: unknown): Promise<unknown> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return res.json();
}
