/**
 * @module scheduler/cron
 * Cron expressions of `schedule.set`: five fields, or six with seconds first. cron-parser alone
 * would also accept four fields or `@daily`; the contract's form is checked here first, so the
 * agent and the server agree on what is valid. Evaluation is in the host's local time zone unless
 * a zone is given: a schedule means "03:00 on this machine" (the server's FLEETBACK_TZ concerns
 * repository maintenance only).
 */
import { type CronExpression, CronExpressionParser } from "cron-parser";
import { Settings } from "luxon";

/**
 * cron-parser computes with luxon, which asks Intl for the system locale on its first date unless
 * one is set, loading ICU's locale data: ~8 MiB of the agent's resident memory for good (issue
 * 19, B8). No locale enters a cron computation (weeks are cron's own, not a locale's), so a fixed
 * one changes no result. This is the luxon cron-parser loads: the bundle and package.json keep
 * them one copy, and cron.test.ts checks it.
 */
Settings.defaultLocale = "en-US";

export type ParsedCron =
  | { ok: true; next: (after: Date) => Date | undefined }
  | { ok: false; reason: string };

export function parseCron(text: string, timeZone?: string): ParsedCron {
  const fields = text.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) {
    return { ok: false, reason: `expected 5 fields (or 6 with seconds), got ${fields.length}` };
  }
  const options = timeZone === undefined ? {} : { tz: timeZone };
  try {
    CronExpressionParser.parse(fields.join(" "), options);
  } catch (cause) {
    return { ok: false, reason: cause instanceof Error ? cause.message : String(cause) };
  }
  return {
    ok: true,
    next(after) {
      let expression: CronExpression;
      try {
        expression = CronExpressionParser.parse(fields.join(" "), { ...options, currentDate: after });
        // Strictly after `after`; an expression that never matches (31 February) throws here.
        return expression.next().toDate();
      } catch {
        return undefined;
      }
    },
  };
}
