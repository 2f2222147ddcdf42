import type { Command } from "../command.js";

/** A subcommand as `kaiawatch --help` lists it; its module is loaded only when it runs. */
export interface CommandEntry {
  name: string;
  summary: string;
  load(): Promise<Command>;
}

// Lazy: `kaiawatch run` should not load the simulator, the demo's SMTP server or the other
// commands' modules before its first request (~60 ms of start-up). So the names and summaries
// are written here only, and each command's help names it (a test checks that).
/** Every subcommand, in the order `kaiawatch --help` lists them. */
export const COMMANDS: CommandEntry[] = [
  { name: "run", summary: "run the daemon: poll every source on its schedule and deliver alerts", load: async () => (await import("./run.js")).runCommand },
  { name: "once", summary: "one pass over every source up to the head, deliver, then exit (for cron jobs)", load: async () => (await import("./once.js")).onceCommand },
  { name: "doctor", summary: "check a config against the real services: explorer, key and plan, answer shapes, node, sinks", load: async () => (await import("./doctor.js")).doctorCommand },
  { name: "validate", summary: "check a config file and show what would run", load: async () => (await import("./validate.js")).validateCommand },
  { name: "plan", summary: "requests and credits per day of a config, against the daily budget", load: async () => (await import("./plan.js")).planCommand },
  { name: "status", summary: "ask running daemons (or every replica) how they are: sources, sinks, conditions, credits", load: async () => (await import("./status.js")).statusCommand },
  { name: "cursors", summary: "list the sources' cursors; --set NAME=BLOCK to rewind or skip", load: async () => (await import("./cursors.js")).cursorsCommand },
  { name: "outbox", summary: "list pending and dead alerts; `outbox retry` sends dead letters again", load: async () => (await import("./outbox.js")).outboxCommand },
  { name: "history", summary: "every delivery attempt: time, sink, alert, outcome, status code, latency, error", load: async () => (await import("./history.js")).historyCommand },
  { name: "test-sink", summary: "send a test alert through one sink and report what happened", load: async () => (await import("./test-sink.js")).testSinkCommand },
  { name: "replay", summary: "run one rule over past blocks and show what it would send (--send to send it)", load: async () => (await import("./replay.js")).replayCommand },
  { name: "explain", summary: "show, condition by condition, why a transaction's records match a rule or not", load: async () => (await import("./explain.js")).explainCommand },
  { name: "store", summary: "store migrate: copy a file store into PostgreSQL for replicas", load: async () => (await import("./store.js")).storeCommand },
  { name: "routes", summary: "show the routes: tree and where an alert with given labels would go (--test)", load: async () => (await import("./routes.js")).routesCommand },
  { name: "silence", summary: "hold back a rule's alerts for a while: silence add, list, remove", load: async () => (await import("./silence.js")).silenceCommand },
  { name: "simulate", summary: "serve the explorer API and JSON-RPC over a synthetic, deterministic chain", load: async () => (await import("./simulate.js")).simulateCommand },
  { name: "demo", summary: "see it work: a simulated chain, the daemon, and local webhook and mail receivers", load: async () => (await import("./demo.js")).demoCommand },
];
