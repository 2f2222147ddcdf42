import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { checkWriteAccess, isLoopbackAddress } from "../../src/status/write-access.js";

const TOKEN = "write-access-token-1234";
const request = (remoteAddress: string, authorization?: string) => ({ socket: { remoteAddress }, headers: authorization === undefined ? {} : { authorization } }) as unknown as IncomingMessage;
const LOOPBACK = ["127.0.0.1", "127.8.9.1", "::1", "::ffff:127.0.0.1"];
const ELSEWHERE = ["10.0.0.5", "192.168.1.2", "::ffff:10.1.2.3", "fe80::1"];

describe("writes to a running daemon", () => {
  it("by default: the token, from anywhere, and never without it (loopback included)", () => {
    const auth = { token: TOKEN, trustLoopback: false };
    expect(checkWriteAccess(request("10.0.0.5", `Bearer ${TOKEN}`), auth)).toEqual({ ok: true, by: "token" });
    expect(checkWriteAccess(request("127.0.0.1", `Bearer ${TOKEN}`), auth)).toEqual({ ok: true, by: "token" });
    expect(checkWriteAccess(request("127.0.0.1"), auth)).toMatchObject({ ok: false, status: 401 });
    expect(checkWriteAccess(request("127.0.0.1", `Bearer ${TOKEN}x`), auth)).toMatchObject({ ok: false, status: 401 });
  });

  it("with trust_loopback and no token: only loopback peers", () => {
    const auth = { token: undefined, trustLoopback: true };
    for (const peer of LOOPBACK) expect(checkWriteAccess(request(peer), auth)).toEqual({ ok: true, by: "loopback" });
    for (const peer of ELSEWHERE) expect(checkWriteAccess(request(peer), auth)).toMatchObject({ ok: false, status: 403 });
    expect(isLoopbackAddress(undefined)).toBe(false);
  });

  it("with trust_loopback and status.token: loopback without it, others with it", () => {
    const auth = { token: TOKEN, trustLoopback: true };
    expect(checkWriteAccess(request("::1"), auth)).toEqual({ ok: true, by: "loopback" });
    expect(checkWriteAccess(request("10.0.0.5"), auth)).toMatchObject({ ok: false, status: 401 });
    expect(checkWriteAccess(request("10.0.0.5", `Bearer ${TOKEN}`), auth)).toEqual({ ok: true, by: "token" });
  });
});
