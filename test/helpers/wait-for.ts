/**
 * The one place a test may wait on the machine's clock (test/architecture/wall-clock-waits.test.ts
 * refuses such waits anywhere else).
 *
 * In-process code signals what it did: await that (an event, a promise the code resolves, an
 * injected clock stepped by the test). Only what runs outside this process — a child process,
 * a server, PostgreSQL, a browser — cannot tell the test directly, so a test polls it here,
 * with a deadline, and the failure names what it waited for.
 */

/** How often a condition outside this process is asked again. */
const POLL_MS = 25;

/**
 * Resolves once `condition` holds; fails after `deadlineMs` with `timed out after … waiting for WHAT`.
 * For a child process, a server or a database only: the deadline is a generous bound on
 * something certain to come, never the outcome under test.
 */
export async function waitFor(condition: () => boolean | Promise<boolean>, deadlineMs: number, what: string): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * Lets `ms` of real time pass before the test injects a fault into a child process or a
 * server (a SIGKILL, an outage) or ends one: for tests whose outcome must hold whatever
 * moment the fault lands, so the moment is chosen, not awaited. Never a wait for an outcome.
 */
export async function faultMoment(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Stands for work that takes real time inside a fake part (a receiver answering, a tick
 * running), so that the calls beside it overlap as they would in production. What the test
 * then checks must hold however long the work took. Never a wait for an outcome.
 */
export async function workFor(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Lets `ms` of real time pass in parts the test does not step (a child process, a server, a
 * daemon on its own timers), to check afterwards that something did NOT happen in that time,
 * or to let pass a duration the outcome needs. A busier machine can only let less happen in
 * it, so the check may pass where it should not, never fail where it should pass; a check
 * that something DID happen is a waitFor().
 */
export async function observeFor(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}
