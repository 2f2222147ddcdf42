import nodemailer from "nodemailer";
import type { NodemailerError } from "nodemailer";
import { z } from "zod";
import type { Common } from "../../common/common.js";
import { duration, optionalSecret } from "../../common/value-schemas.js";
import type { Delivery, Sink } from "../sink.js";
import { SinkError } from "../sink.js";
import { responseExcerpt } from "../http-sender.js";
import type { SinkConfigProblem } from "../errors.js";
import type { Template } from "../template.js";
import { templateContext } from "../template.js";
import { escapeHtml, escapePlain, sanitizeHeader } from "../escape.js";
import { cleanLine } from "../../common/sanitize-text.js";
import { alertTitle, alertView, digestHeadline, digestLine, isDigest, statusPrefix } from "../alert-view.js";
import { checkTemplate, checkTimeout, throwIfProblems } from "../sink-checks.js";
import { defineSink } from "./define-sink.js";

const EMAIL_ADDRESS = /^[^\s@<>,;]+@[^\s@<>,;]+$/;
const NAMED_EMAIL_ADDRESS = /^[^\r\n<>]*<[^\s@<>,;]+@[^\s@<>,;]+>$/;
const emailAddress = z
  .string()
  .refine((value) => EMAIL_ADDRESS.test(value) || NAMED_EMAIL_ADDRESS.test(value), 'not an email address ("ops@example.com" or "Ops <ops@example.com>")');

const emailOptions = z.strictObject({
  smtp: z
    .strictObject({
      host: z.string().min(1),
      port: z.int().min(1).max(65535).optional().meta({ description: "Default: 465 when secure, else 587." }),
      secure: z.boolean().default(false).meta({ description: "Implicit TLS from the first byte (usually port 465)." }),
      starttls: z.boolean().optional().meta({ description: "Refuse to send unless the server upgrades the plain connection with STARTTLS. Default: true, unless secure." }),
      user: optionalSecret,
      pass: optionalSecret,
      /** Milliseconds for connecting, the greeting and each socket read. */
      timeout: duration.prefault("30s"),
    })
    // secure: true on its own means TLS from the first byte: STARTTLS does not apply, so it is not defaulted on.
    .transform((smtp) => ({ ...smtp, port: smtp.port ?? (smtp.secure ? 465 : 587), starttls: smtp.starttls ?? !smtp.secure })),
  from: emailAddress,
  to: z.array(emailAddress).min(1),
  cc: z.array(emailAddress).default([]),
  /** Template for the subject (one line, at most 200 characters after rendering). */
  subject: z.string().optional(),
  /** Template for the body: the HTML part renders it with HTML-escaped values, the text part with plain ones. */
  body: z.string().optional(),
});

export type EmailOptions = z.output<typeof emailOptions>;

export const EMAIL_LIMITS = { subject: 200, digestShown: 100 } as const;

export interface EmailMessage {
  subject: string;
  text: string;
  html: string;
}

function checkAddresses(problems: SinkConfigProblem[], key: string, value: unknown, required: boolean): void {
  if (value === undefined && !required) return;
  const list = typeof value === "string" ? [value] : value;
  if (!Array.isArray(list) || (required && list.length === 0)) {
    problems.push({ key, message: required ? "needs at least one address" : "must be a list of addresses" });
    return;
  }
  list.forEach((address: unknown, i) => {
    if (typeof address !== "string" || !/@/.test(address) || /[\r\n]/.test(address)) problems.push({ key: Array.isArray(value) ? `${key}[${i}]` : key, message: "is not an email address" });
  });
}

export function validateEmailOptions(options: EmailOptions): SinkConfigProblem[] {
  const problems: SinkConfigProblem[] = [];
  const smtp = options.smtp as Partial<EmailOptions["smtp"]> | undefined;
  if (smtp === undefined || typeof smtp !== "object") {
    problems.push({ key: "smtp", message: "is required (host, port, …)" });
  } else {
    if (typeof smtp.host !== "string" || smtp.host === "") problems.push({ key: "smtp.host", message: "is required" });
    if (typeof smtp.port !== "number" || !Number.isInteger(smtp.port) || smtp.port < 1 || smtp.port > 65535) problems.push({ key: "smtp.port", message: "must be a port number (465 with secure, 587 with starttls, 25)" });
    if (smtp.secure === true && smtp.starttls === true) problems.push({ key: "smtp.starttls", message: "cannot be combined with secure: true (secure is TLS from the start; starttls upgrades a plain connection)" });
    if ((smtp.user === undefined) !== (smtp.pass === undefined)) problems.push({ key: smtp.user === undefined ? "smtp.user" : "smtp.pass", message: "user and pass go together" });
    checkTimeout(problems, "smtp.timeout", smtp.timeout);
  }
  checkAddresses(problems, "from", options.from, true);
  checkAddresses(problems, "to", options.to, true);
  checkAddresses(problems, "cc", options.cc, false);
  checkTemplate(problems, "subject", options.subject);
  checkTemplate(problems, "body", options.body);
  return problems;
}

/** `<id@kaiawatch>`: the same on every retry, so a mail system (or a reader) can drop a duplicate. */
export function messageIdFor(deliveryId: string): string {
  return `<${deliveryId.replace(/[^A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]/g, "-")}@kaiawatch>`;
}

/** Subject, text and HTML of a delivery: pure, so that its escaping is testable. */
export function buildEmail(delivery: Delivery, templates: { subject?: Template; body?: Template } = {}): EmailMessage {
  const context = templateContext(delivery);
  const digest = isDigest(delivery);
  const alert = delivery.alerts[0];
  const view = !digest && alert !== undefined ? alertView(alert) : undefined;
  const shown = delivery.alerts.slice(0, EMAIL_LIMITS.digestShown);
  const headline = digestHeadline(delivery, shown.length);

  const defaultSubject = view === undefined ? `[kaiawatch] ${headline}` : `[kaiawatch] ${statusPrefix(view.status, view.repeat)}${view.rule}: ${view.summary}`;
  const renderedSubject = templates.subject?.render(context, (s) => sanitizeHeader(s, EMAIL_LIMITS.subject));
  const subject = sanitizeHeader(renderedSubject !== undefined && renderedSubject.trim() !== "" ? renderedSubject : defaultSubject, EMAIL_LIMITS.subject);

  if (templates.body !== undefined) {
    const text = templates.body.render(context, escapePlain);
    const html = `<!doctype html><html><body><div style="white-space:pre-wrap;font-family:sans-serif">${templates.body.render(context, escapeHtml)}</div></body></html>`;
    return { subject, text, html };
  }

  const text: string[] = [];
  const html: string[] = ['<!doctype html><html><body style="font-family:sans-serif">'];
  if (view !== undefined && alert !== undefined) {
    text.push(...(view.status === undefined ? [] : [`Status: ${statusPrefix(view.status, view.repeat).slice(0, -2)}`]), `Rule: ${view.rule}`, view.summary, "");
    // Red while an incident fires, green once resolved: the colour says it before the words do.
    const colour = view.status === undefined ? "" : ` style="color:${view.status === "resolved" ? "#1a7f37" : "#cf222e"}"`;
    html.push(`<h2${colour}>${escapeHtml(alertTitle(view))}</h2>`, `<p>${escapeHtml(view.summary)}</p>`, "<table>");
    for (const f of view.fields) {
      text.push(`${f.label}: ${f.value}`);
      html.push(`<tr><th align="left" style="padding-right:1em">${escapeHtml(f.label)}</th><td><code>${escapeHtml(f.value)}</code></td></tr>`);
    }
    html.push("</table>");
    if (view.links.length > 0) {
      text.push("", ...view.links.map((l) => `${l.label}: ${l.url}`));
      html.push(`<p>${view.links.map((l) => `<a href="${escapeHtml(l.url)}">${escapeHtml(l.label)}</a>`).join(" · ")}</p>`);
    }
    const origin = [alert.watch, alert.source, alert.network, view.datetime].filter((x) => x != null).map((x) => cleanLine(x, 100)).join(" · ");
    text.push("", origin);
    html.push(`<p style="color:#666">${escapeHtml(origin)}</p>`);
  } else {
    text.push(headline, "");
    html.push(`<h2>🔔 ${escapeHtml(cleanLine(delivery.rule, 100))}</h2>`, `<p><b>${escapeHtml(headline)}</b></p>`, "<ol>");
    for (const a of shown) {
      const line = digestLine(a);
      text.push(`- ${line.text}${line.url === undefined ? "" : `\n  ${line.url}`}`);
      html.push(`<li>${escapeHtml(line.text)}${line.url === undefined ? "" : ` <a href="${escapeHtml(line.url)}">tx</a>`}</li>`);
    }
    html.push("</ol>");
  }
  text.push("", `Delivery ${cleanLine(delivery.id, 100)}`);
  html.push(`<p style="color:#999;font-size:small">Delivery ${escapeHtml(cleanLine(delivery.id, 100))}</p></body></html>`);
  return { subject, text: text.join("\n"), html: html.join("\n") };
}

/**
 * SMTP 4xx replies and connection trouble may pass: retry. 5xx replies (except 503, a
 * sequence problem a fresh connection may not have), failed authentication and TLS
 * failures will not: dead letter.
 */
function toSinkError(target: string, error: unknown, secrets: string[]): SinkError {
  const e = error as Partial<NodemailerError>;
  // A server may quote what it was sent: the SMTP user and password never reach the error.
  const reply = typeof e.response === "string" ? responseExcerpt(e.response, secrets) : undefined;
  // starttls defaults to true: a relay on a trusted network (a local postfix, a mail
  // catcher) often offers no STARTTLS, and the fix is one key, so name it.
  if (e.command === "STARTTLS" || (e.code === "ETLS" && /starttls/i.test(e.message ?? ""))) {
    return new SinkError(
      "KW_NOTIFY_SMTP",
      `${target}: the SMTP server offers no STARTTLS (${reply ?? e.code ?? "refused"}); if it is a relay you trust on this network, set starttls: false on the sink (smtp.starttls)`,
      { permanent: true },
    );
  }
  if (e.code === "EAUTH" || e.code === "ENOAUTH") {
    return new SinkError("KW_NOTIFY_SMTP_AUTH", `${target}: SMTP authentication failed${e.responseCode === undefined ? "" : ` (${e.responseCode})`}`, { permanent: true });
  }
  if (typeof e.responseCode === "number" && e.responseCode >= 400) {
    const permanent = e.responseCode >= 500 && e.responseCode !== 503;
    return new SinkError("KW_NOTIFY_SMTP", `${target}: SMTP server answered ${reply ?? e.responseCode}`, { permanent });
  }
  if (e.code === "ETLS" || e.code === "EREQUIRETLS" || e.code === "ECONFIG" || e.code === "EENVELOPE" || e.code === "EMESSAGE") {
    return new SinkError("KW_NOTIFY_SMTP", `${target}: ${e.code}: ${responseExcerpt(e.message ?? "", secrets)}`, { permanent: true });
  }
  return new SinkError("KW_NOTIFY_SMTP_NETWORK", `${target}: ${e.code ?? "error"} talking to the SMTP server`, { permanent: false });
}

export function createEmailSink(common: Common, name: string, options: EmailOptions): Sink {
  throwIfProblems(name, validateEmailOptions(options));
  common.secrets.add(options.smtp.pass);
  const templates = { subject: checkTemplate([], "subject", options.subject), body: checkTemplate([], "body", options.body) };
  const timeout = options.smtp.timeout;
  const target = `sink ${name} (email)`;
  // A small pool: a daemon sends bursts, and reconnecting per message is slow and noisy.
  const transport = nodemailer.createTransport({
    pool: true,
    maxConnections: 2,
    maxMessages: 100,
    host: options.smtp.host,
    port: options.smtp.port,
    secure: options.smtp.secure,
    requireTLS: options.smtp.starttls,
    ...(options.smtp.user === undefined ? {} : { auth: { user: options.smtp.user, pass: options.smtp.pass ?? "" } }),
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
    dnsTimeout: timeout,
    logger: false,
  });
  return {
    name,
    type: "email",
    async send(delivery, signal) {
      signal.throwIfAborted();
      const message = buildEmail(delivery, templates);
      const sending = transport.sendMail({
        from: options.from,
        to: options.to,
        cc: options.cc,
        subject: message.subject,
        text: message.text,
        html: message.html,
        messageId: messageIdFor(delivery.id),
      });
      // nodemailer takes no signal: on shutdown stop waiting (the pool is closed by close()).
      let onAbort: (() => void) | undefined;
      const aborted = new Promise<never>((_, reject) => {
        onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
        signal.addEventListener("abort", onAbort, { once: true });
      });
      try {
        await Promise.race([sending, aborted]);
      } catch (error) {
        if (signal.aborted) throw error;
        throw toSinkError(target, error, [options.smtp.user ?? "", options.smtp.pass ?? ""]);
      } finally {
        if (onAbort !== undefined) signal.removeEventListener("abort", onAbort);
        sending.catch(() => undefined);
      }
    },
    async close() {
      transport.close();
    },
  };
}

export const emailSink = defineSink({
  type: "email",
  options: emailOptions,
  check: validateEmailOptions,
  create: (common, name, options) => createEmailSink(common, name, options),
  preview(delivery, options) {
    const email = buildEmail(delivery, { subject: checkTemplate([], "subject", options.subject), body: checkTemplate([], "body", options.body) });
    return `Subject: ${email.subject}\n\n${email.text}`;
  },
  secretKeys: ["smtp.user", "smtp.pass"],
});
