import { KaiawatchError } from "../common/errors.js";

/** A template in the config does not parse; `line` and `column` are 1-based within the template. */
export class TemplateError extends KaiawatchError {
  override name = "TemplateError";
  readonly line: number;
  readonly column: number;

  constructor(message: string, position: { line: number; column: number }) {
    super("KW_NOTIFY_TEMPLATE", `${message} at line ${position.line}, column ${position.column}`);
    this.line = position.line;
    this.column = position.column;
  }
}

/** One mistake in a sink's options; `key` is the path below `sinks.NAME` (e.g. "smtp.port"). */
export interface SinkConfigProblem {
  key: string;
  message: string;
}

/** A sink's options are unusable; every problem is listed at once. */
export class SinkConfigError extends KaiawatchError {
  override name = "SinkConfigError";
  readonly sink: string;
  readonly problems: SinkConfigProblem[];

  constructor(sink: string, problems: SinkConfigProblem[]) {
    super("KW_NOTIFY_CONFIG", `sink ${sink}: ${problems.map((p) => `${p.key}: ${p.message}`).join("; ")}`);
    this.sink = sink;
    this.problems = problems;
  }
}
