/**
 * @module sources/cron
 * Schedule cron expressions: five fields, or six with seconds first, as cron-parser reads them
 * (the agent's scheduler uses the same grammar). Macros and seven fields are refused.
 */
import { CronExpressionParser } from "cron-parser";

export type CronCheck = { ok: true; cron: string } | { ok: false; message: string };

export function checkCron(input: string): CronCheck {
  const cron = input.trim().replace(/\s+/g, " ");
  const fields = cron === "" ? 0 : cron.split(" ").length;
  if (fields !== 5 && fields !== 6) {
    return { ok: false, message: `cron: needs 5 fields (or 6 with seconds first), got ${fields}` };
  }
  try {
    CronExpressionParser.parse(cron);
  } catch (err) {
    const reason = err instanceof Error ? err.message : "unreadable";
    return { ok: false, message: `cron: ${reason}` };
  }
  return { ok: true, cron };
}
