import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

/** One message the catcher accepted. */
export interface MailReceipt {
  messageId: string;
  subject: string;
  /** Envelope recipients. */
  to: string[];
}

export interface SmtpCatcher {
  host: string;
  port: number;
  close(): Promise<void>;
}

const MAX_MESSAGE = 10 << 20;

/**
 * Decodes RFC 2047 encoded words (=?UTF-8?Q?…?= and =?UTF-8?B?…?=), which mail clients use
 * for non-ASCII subjects. Adjacent words are joined before decoding: an encoder may split
 * one character's bytes across two of them.
 */
export function decodeMimeWords(value: string): string {
  const WORD = /=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g;
  // Whitespace between two encoded words is folding, not content.
  const joined = value.replace(/(\?=)\s+(?==\?)/g, "$1");
  const out: string[] = [];
  let last = 0;
  let run: { charset: string; bytes: Buffer[] } | undefined;
  const flush = () => {
    if (run === undefined) return;
    let text: string;
    try {
      text = new TextDecoder(run.charset).decode(Buffer.concat(run.bytes));
    } catch {
      text = Buffer.concat(run.bytes).toString("latin1");
    }
    out.push(text);
    run = undefined;
  };
  for (const m of joined.matchAll(WORD)) {
    const [word, charset = "utf-8", encoding = "Q", payload = ""] = m;
    if (m.index > last) {
      flush();
      out.push(joined.slice(last, m.index));
    }
    const bytes =
      encoding.toUpperCase() === "B"
        ? Buffer.from(payload, "base64")
        : Buffer.from(payload.replace(/_/g, " ").replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), "latin1");
    if (run !== undefined && run.charset.toLowerCase() !== charset.toLowerCase()) flush();
    run ??= { charset, bytes: [] };
    run.bytes.push(bytes);
    last = m.index + word.length;
  }
  flush();
  out.push(joined.slice(last));
  return out.join("");
}

/** The header section of a raw message, unfolded, as lowercase name → first value. */
export function parseHeaders(raw: string): Map<string, string> {
  const end = raw.search(/\r?\n\r?\n/);
  const section = (end === -1 ? raw : raw.slice(0, end)).replace(/\r?\n[ \t]+/g, " ");
  const headers = new Map<string, string>();
  for (const line of section.split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  return headers;
}

/**
 * A local SMTP server for the demo that accepts every message (no TLS, no auth: it listens
 * on 127.0.0.1 only) and reports its Message-ID and subject. It reads headers only: the
 * body is what the email sink's own tests check.
 */
export async function startSmtpCatcher(options: { onMail: (receipt: MailReceipt) => void }): Promise<SmtpCatcher> {
  const server = new SMTPServer({
    disabledCommands: ["STARTTLS", "AUTH"],
    authOptional: true,
    logger: false,
    banner: "kaiawatch demo mail catcher",
    size: MAX_MESSAGE,
    // A sink still connected at shutdown must not hold the demo open for the default 30 s.
    closeTimeout: 1000,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("error", callback);
      stream.on("end", () => {
        const headers = parseHeaders(Buffer.concat(chunks).toString("utf8"));
        options.onMail({
          messageId: headers.get("message-id") ?? "(no Message-ID)",
          subject: decodeMimeWords(headers.get("subject") ?? ""),
          to: session.envelope.rcptTo.map((r) => r.address),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  // A client dropping its connection is the client's problem, not a crash of the demo.
  server.on("error", () => undefined);
  const { port } = server.server.address() as AddressInfo;
  return { host: "127.0.0.1", port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
