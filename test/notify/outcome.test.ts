import { describe, expect, it } from "vitest";
import { decideOutcome, type OutcomePolicy } from "../../src/notify/outcome.js";
import type { OutboxEntry } from "../../src/model/outbox-entry.js";
import { entry } from "./dispatcher-fixtures.js";

const NOW = Date.parse("2026-01-01T12:00:00.000Z");
const AT = new Date(NOW).toISOString();
const policy: OutcomePolicy = { maxAttempts: 5, maxAgeMs: 3600_000, backoff: { baseMs: 1000, maxMs: 60_000 }, random: () => 0.5 };
const entries = (createdMs = NOW - 1000): OutboxEntry[] => ["a1", "a2"].map((id) => entry(id, "out", "r", { createdAt: new Date(createdMs).toISOString() }));

describe("delivery outcome", () => {
  it("an accepted send marks every entry delivered", () => {
    expect(decideOutcome({ entries: entries(), attempt: 1, failure: undefined, now: NOW }, policy)).toEqual({
      kind: "delivered",
      changes: [
        { id: "a1:out", kind: "delivered", at: AT },
        { id: "a2:out", kind: "delivered", at: AT },
      ],
    });
  });

  it("a retryable failure is retried after the jittered backoff", () => {
    const outcome = decideOutcome({ entries: entries(), attempt: 3, failure: { message: "503", permanent: false }, now: NOW }, policy);
    // Full jitter with random 0.5 over min(60 s, 1 s * 2^2).
    const next = new Date(NOW + 2000).toISOString();
    expect(outcome).toEqual({
      kind: "retry",
      delayMs: 2000,
      pauseSinkMs: undefined,
      changes: [
        { id: "a1:out", kind: "failed", at: AT, error: "503", next_attempt_at: next },
        { id: "a2:out", kind: "failed", at: AT, error: "503", next_attempt_at: next },
      ],
    });
  });

  it("a Retry-After is a floor for the entries and pauses the whole sink", () => {
    const outcome = decideOutcome({ entries: entries(), attempt: 1, failure: { message: "429", permanent: false, retryAfterMs: 30_000 }, now: NOW }, policy);
    expect(outcome.kind).toBe("retry");
    if (outcome.kind !== "retry") return;
    expect(outcome.delayMs).toBe(30_000);
    expect(outcome.pauseSinkMs).toBe(30_000);
  });

  it("a permanent error is a dead letter at once", () => {
    const outcome = decideOutcome({ entries: entries(), attempt: 1, failure: { message: "400 bad", permanent: true }, now: NOW }, policy);
    expect(outcome).toMatchObject({ kind: "dead", reason: "permanent error: 400 bad" });
    expect(outcome.changes).toEqual([
      { id: "a1:out", kind: "dead", at: AT, reason: "permanent error: 400 bad" },
      { id: "a2:out", kind: "dead", at: AT, reason: "permanent error: 400 bad" },
    ]);
  });

  it("the last allowed attempt failing is a dead letter", () => {
    expect(decideOutcome({ entries: entries(), attempt: 4, failure: { message: "503", permanent: false }, now: NOW }, policy).kind).toBe("retry");
    expect(decideOutcome({ entries: entries(), attempt: 5, failure: { message: "503", permanent: false }, now: NOW }, policy)).toMatchObject({
      kind: "dead",
      reason: "gave up after 5 attempts: 503",
    });
  });

  it("an entry past its max age is a dead letter, measured from the oldest entry", () => {
    const old = [...entries(NOW - 1000), ...entries(NOW - 2 * 3600_000).map((e) => ({ ...e, id: `${e.id}-old` }))];
    expect(decideOutcome({ entries: old, attempt: 2, failure: { message: "503", permanent: false }, now: NOW }, policy)).toMatchObject({
      kind: "dead",
      reason: "gave up after 2 attempts over 2 h (max age 1 h): 503",
    });
  });
});
