import type { ServerResponse } from "node:http";
import { startReceiver, type Received, type Receiver } from "./receiver.js";

/**
 * A local stand-in for a Teams Workflows webhook ("When a Teams webhook request is received")
 * that checks the message as Microsoft documents it: `{"type":"message","attachments":[…]}`
 * with Adaptive Card attachments, at most 28 KB, cards of a version Teams renders (≤ 1.5),
 * elements and actions of the Adaptive Card schema. 202 Accepted when it would post the card,
 * 400 with the reasons otherwise.
 */
const MAX_BYTES = 28_000;
const ELEMENTS = new Set(["TextBlock", "RichTextBlock", "FactSet", "Container", "ColumnSet", "Image", "ActionSet"]);
const ACTIONS = new Set(["Action.OpenUrl", "Action.ShowCard", "Action.ToggleVisibility"]);
const TEXT_RUN_KEYS = new Set(["type", "text", "color", "fontType", "highlight", "isSubtle", "italic", "selectAction", "size", "strikethrough", "underline", "weight"]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function isHttpsUrl(value: unknown): boolean {
  if (typeof value !== "string") return false;
  try {
    return new URL(value).protocol === "https:";
  } catch {
    return false;
  }
}

function checkAction(action: unknown, where: string, problems: string[]): void {
  if (!isObject(action) || typeof action.type !== "string" || !ACTIONS.has(action.type)) problems.push(`${where}: unknown action`);
  else if (action.type === "Action.OpenUrl" && !isHttpsUrl(action.url)) problems.push(`${where}: Action.OpenUrl needs an https url`);
}

function checkElement(element: unknown, where: string, problems: string[]): void {
  if (!isObject(element) || typeof element.type !== "string" || !ELEMENTS.has(element.type)) {
    problems.push(`${where}: unknown element`);
    return;
  }
  if (element.type === "TextBlock" && typeof element.text !== "string") problems.push(`${where}: TextBlock needs text`);
  if (element.type === "RichTextBlock") {
    if (!Array.isArray(element.inlines)) problems.push(`${where}: RichTextBlock needs inlines`);
    else
      (element.inlines as unknown[]).forEach((inline, i) => {
        if (typeof inline === "string") return;
        if (!isObject(inline) || inline.type !== "TextRun" || typeof inline.text !== "string") problems.push(`${where}.inlines[${i}]: not a TextRun`);
        else {
          for (const key of Object.keys(inline)) if (!TEXT_RUN_KEYS.has(key)) problems.push(`${where}.inlines[${i}]: unknown TextRun property ${key}`);
          if (inline.selectAction !== undefined) checkAction(inline.selectAction, `${where}.inlines[${i}].selectAction`, problems);
        }
      });
  }
}

/** Every documented rule the request breaks; empty when Teams would post the card. */
export function teamsProblems(req: Received): string[] {
  const problems: string[] = [];
  if (req.method !== "POST") problems.push(`method ${req.method}`);
  if (!String(req.headers["content-type"]).startsWith("application/json")) problems.push("content-type is not application/json");
  if (Buffer.byteLength(req.body) > MAX_BYTES) problems.push("The payload is too large. Please make sure the size is less than 28KB.");
  let message: unknown;
  try {
    message = JSON.parse(req.body);
  } catch {
    return [...problems, "body is not JSON"];
  }
  if (!isObject(message) || message.type !== "message") return [...problems, 'type must be "message"'];
  if (!Array.isArray(message.attachments) || message.attachments.length === 0) return [...problems, "attachments must be a non-empty array"];
  (message.attachments as unknown[]).forEach((attachment, a) => {
    if (!isObject(attachment) || attachment.contentType !== "application/vnd.microsoft.card.adaptive") {
      problems.push(`attachments[${a}]: contentType must be application/vnd.microsoft.card.adaptive`);
      return;
    }
    const card = attachment.content;
    if (!isObject(card) || card.type !== "AdaptiveCard") {
      problems.push(`attachments[${a}].content: not an AdaptiveCard`);
      return;
    }
    if (typeof card.version !== "string" || !/^1\.[0-5]$/.test(card.version)) problems.push(`attachments[${a}].content.version: Teams renders 1.0 to 1.5`);
    if (!Array.isArray(card.body)) problems.push(`attachments[${a}].content.body must be an array`);
    else (card.body as unknown[]).forEach((element, i) => checkElement(element, `body[${i}]`, problems));
    if (card.actions !== undefined) {
      if (!Array.isArray(card.actions)) problems.push("actions must be an array");
      else (card.actions as unknown[]).forEach((action, i) => checkAction(action, `actions[${i}]`, problems));
    }
  });
  return problems;
}

/** Answers as a Workflows trigger does; `override` replaces the answer (429, 500 …) for a test. */
export async function startTeamsReceiver(override?: (res: ServerResponse, req: Received) => boolean): Promise<Receiver> {
  return startReceiver((res, req) => {
    if (override?.(res, req) === true) return;
    const problems = teamsProblems(req);
    res.statusCode = problems.length === 0 ? 202 : 400;
    res.setHeader("content-type", "application/json");
    res.end(problems.length === 0 ? "" : JSON.stringify({ error: { code: "InvalidRequestContent", message: problems.join("; ") } }));
  });
}
