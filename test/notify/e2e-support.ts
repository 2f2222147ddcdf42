import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { simpleParser, type ParsedMail } from "mailparser";
import { SMTPServer } from "smtp-server";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { simulatorHead } from "../helpers/simulator-config.js";

/** A reply the SMTP server gives to a message instead of 250: e.g. 451 (try later) or 550 (refused). */
export interface SmtpRejection {
  code: number;
  message: string;
}

/** A real SMTP server on 127.0.0.1; every message is parsed with mailparser. */
export interface Smtp {
  port: number;
  /** Messages accepted with 250. */
  mails: ParsedMail[];
  /** The envelope recipients (RCPT TO) of each accepted message. */
  recipients: string[][];
  /** Every DATA received, accepted or not. */
  attempts: number;
  close(): Promise<void>;
}

/** `reject(n)` decides the answer to the n-th message (0-based): a rejection, or undefined for 250. */
export async function startSmtp(reject: (attempt: number) => SmtpRejection | undefined = () => undefined): Promise<Smtp> {
  const smtp: Smtp = { port: 0, mails: [], recipients: [], attempts: 0, close: async () => undefined };
  const server = new SMTPServer({
    disabledCommands: ["STARTTLS", "AUTH"],
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      const attempt = smtp.attempts++;
      simpleParser(stream)
        .then((mail) => {
          const rejection = reject(attempt);
          if (rejection !== undefined) {
            callback(Object.assign(new Error(rejection.message), { responseCode: rejection.code }));
            return;
          }
          smtp.mails.push(mail);
          smtp.recipients.push(session.envelope.rcptTo.map((r) => r.address));
          callback();
        })
        .catch(callback);
    },
  });
  // A daemon stopped mid-conversation resets its connection; unheard, that error would end the test run.
  server.on("error", () => undefined);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  smtp.port = (server.server.address() as AddressInfo).port;
  smtp.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return smtp;
}

/** A Standard Webhooks secret for tests (whsec_ + base64 of 32 bytes). */
export const WEBHOOK_SECRET = `whsec_${Buffer.from("kaiawatch-e2e-secret-0123456789ab").toString("base64")}`;

/** Appends a block of `count` NFT transfers of the simulator's first collection; returns its number. */
export function addNftTransfers(sim: Simulator, count: number): number {
  const [from, to] = sim.addresses.wallets;
  return sim.addBlock({ nftTransfers: Array.from({ length: count }, () => ({ from, to })) });
}

/**
 * The chain side of a notify end-to-end test: the simulator head (a store in `dir`), a watch
 * `kitties` on the first collection from `start` (see addNftTransfers) and a rule `transfers`
 * sending each transfer to `notify`. The test adds its `sinks:`.
 */
export function nftTransfersTo(sim: Simulator, options: { dir: string; start: number; notify: string[] }): string {
  return `${simulatorHead(sim, { storePath: join(options.dir, "store.json"), requestsPerSecond: 500 })}
defaults: { start: ${options.start}, jitter: 0s }
watches:
  - { name: kitties, collection: "${sim.addresses.nftCollections[0]}" }
rules:
  - { name: transfers, watch: kitties, notify: [${options.notify.join(", ")}] }`;
}

/** Appends a block of failed calls by the busy wallet, one per revert message; returns its number. */
export function addFailedCalls(sim: Simulator, messages: string[]): number {
  return sim.addBlock({
    internalTransactions: messages.map((message) => ({
      from: sim.addresses.busyWallet,
      to: sim.addresses.contracts[0],
      amount: "0",
      error: "execution reverted",
      transaction_status: { status: "Fail" as const, fail_message: message },
    })),
  });
}

/** A simulator with no generated records: a test adds exactly the blocks it needs. */
export function emptyChain(seed: number): Promise<Simulator> {
  return createSimulator({ seed, initialBlocks: 3, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
}
