import ts from "typescript";

/** One place in a test file that waits on the machine's clock for an outcome. */
export interface WallClockWait {
  readonly line: number;
  readonly text: string;
  readonly why: string;
}

/**
 * Functions that, called by name and awaited, sleep for a fixed time: ours, and
 * node:timers/promises' setTimeout under its usual names. A method of that name (`clock.sleep`)
 * is left alone: it is how a test steps an injected clock.
 */
const SLEEP_NAMES = new Set(["sleep", "delay", "setTimeout", "setTimeoutPromise", "wait"]);
const POLLER_NAMES = new Set(["waitFor", "waitUntil"]);

function calleeName(call: ts.CallExpression): string | undefined {
  const callee = call.expression;
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  return undefined;
}

function receiverName(call: ts.CallExpression): string | undefined {
  const callee = call.expression;
  return ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) ? callee.expression.text : undefined;
}

/** Whether a timer is armed anywhere inside `node` (`setTimeout(…)`, `setInterval(…)`). */
function armsTimer(node: ts.Node): boolean {
  let found = false;
  const visit = (child: ts.Node): void => {
    if (found) return;
    if (ts.isCallExpression(child) && ["setTimeout", "setInterval"].includes(calleeName(child) ?? "")) found = true;
    else ts.forEachChild(child, visit);
  };
  visit(node);
  return found;
}

/** Whether `node` is a call chain that starts with vitest's `expect.poll(…)` (`expect.poll(f).toBe(3)`). */
function isExpectPoll(node: ts.Expression): boolean {
  let inner: ts.Expression = node;
  for (;;) {
    if (ts.isCallExpression(inner)) {
      const callee = inner.expression;
      if (ts.isPropertyAccessExpression(callee) && callee.name.text === "poll" && ts.isIdentifier(callee.expression) && callee.expression.text === "expect") return true;
      inner = callee;
    } else if (ts.isPropertyAccessExpression(inner)) inner = inner.expression;
    else return false;
  }
}

/** Why awaiting `expression` is a wait on the clock, or undefined when it is not one. */
function wallClockReason(expression: ts.Expression): string | undefined {
  let inner = expression;
  while (ts.isParenthesizedExpression(inner) || ts.isAsExpression(inner)) inner = inner.expression;
  if (isExpectPoll(inner)) return "polls with expect.poll";
  if (ts.isNewExpression(inner) && ts.isIdentifier(inner.expression) && inner.expression.text === "Promise" && inner.arguments?.some(armsTimer)) {
    return "awaits a promise that a timer resolves";
  }
  if (!ts.isCallExpression(inner)) return undefined;
  const name = calleeName(inner);
  if (name === undefined) return undefined;
  // vitest's own pollers: vi.waitFor / vi.waitUntil (and expect.poll above) retry on the clock until a deadline.
  if (receiverName(inner) === "vi" && POLLER_NAMES.has(name)) return `polls with vi.${name}`;
  const byName = ts.isIdentifier(inner.expression) || receiverName(inner) === "timers";
  if (byName && SLEEP_NAMES.has(name) && inner.arguments.length >= 1 && !ts.isFunctionLike(inner.arguments[0]!)) {
    return `sleeps with ${name}()`;
  }
  if ((name === "race" || name === "any") && receiverName(inner) === "Promise" && inner.arguments.some(armsTimer)) {
    return "races the outcome against a timer";
  }
  return undefined;
}

/**
 * The places in a test file's text that wait on the clock for an outcome: a fixed sleep, a
 * promise a timer resolves, vitest's pollers (vi.waitFor, vi.waitUntil, expect.poll), a race
 * against a timer. Such a test passes or
 * fails by which of two timers fires first, and a busy machine decides that. Read with the
 * TypeScript parser, so that strings and comments that look like waits are ignored.
 */
export function findWallClockWaits(fileName: string, text: string): WallClockWait[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: WallClockWait[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isAwaitExpression(node)) {
      const why = wallClockReason(node.expression);
      if (why !== undefined) {
        const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
        found.push({ line: line + 1, text: node.getText(source).split("\n")[0]!.slice(0, 120), why });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
