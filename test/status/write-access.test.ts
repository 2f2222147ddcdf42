import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { checkWriteAccess, isLoopbackAddress } from "../../src/status/write-access.js";

const TOKEN = "write-access-token-1234";
const request = (remoteAddress: string, authorization?: string) => ({ socket: { remoteAddress }, headers: authorization === undefined ? {} : { authorization } }) as unknown as IncomingMessage;

describe("writes to a running daemon", () => {
  it("without status.token: only loopback peers", () => {
    for (const peer of ["127.0.0.1", "127.8.9.1", "::1", "::ffff:127.0.0.1"]) expect(checkWriteAccess(request(peer), undefined)).toEqual({ ok: true, by: "loopback" });
    for (const peer of ["10.0.0.5", "192.168.1.2", "::ffff:10.1.2.3", "fe80::1"]) expect(checkWriteAccess(request(peer), undefined)).toMatchObject({ ok: false, status: 403 });
    expect(isLoopbackAddress(undefined)).toBe(false);
  });

  it("with status.token: the token, from anywhere, and never without it (loopback included)", () => {
    expect(checkWriteAccess(request("10.0.0.5", `Bearer ${TOKEN}`), TOKEN)).toEqual({ ok: true, by: "token" });
    expect(checkWriteAccess(request("127.0.0.1"), TOKEN)).toMatchObject({ ok: false, status: 401 });
    expect(checkWriteAccess(request("127.0.0.1", `Bearer ${TOKEN}x`), TOKEN)).toMatchObject({ ok: false, status: 401 });
  });
});
