import { Cron } from "croner";

/**
 * Why `pattern` is not a usable schedule, or undefined. Schedules carry a seconds field:
 * a five-field pattern is refused because "*\/10 * * * *" would silently mean every ten
 * minutes to someone who meant every ten seconds.
 */
export function scheduleProblem(pattern: string): string | undefined {
  const fields = pattern.trim().split(/\s+/).filter((f) => f !== "");
  if (!pattern.trim().startsWith("@") && fields.length === 5) {
    return `a schedule has 6 fields, seconds first (e.g. "0 ${pattern.trim()}" or "*/10 * * * * *"); this one has 5`;
  }
  // croner takes a seventh field, the year: "… 2099" would silently never fire before
  // then. The message promises six fields, so six it is.
  if (!pattern.trim().startsWith("@") && fields.length !== 6) {
    return `a schedule has 6 fields, seconds first (e.g. "*/10 * * * * *"); this one has ${fields.length}`;
  }
  let cron: Cron | undefined;
  try {
    cron = new Cron(pattern, { paused: true });
    if (cron.nextRun() === null) return "this schedule never fires";
    return undefined;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return `not a schedule: ${message.replace(/^CronPattern:\s*/, "")}`;
  } finally {
    cron?.stop();
  }
}
