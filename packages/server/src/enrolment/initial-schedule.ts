/**
 * @module enrolment/initial-schedule
 * The schedule and retention an enrolment token gives the host's first source group (its initial
 * paths), so that a new host is protected from its first night, not just listed (issue 35.2).
 *
 * The default, when the operator does not choose: daily at a time drawn between 01:00 and 04:59
 * in the agent's zone (so a fleet enrolled together does not hit its repository at one instant),
 * keeping 7 daily, 4 weekly and 6 monthly snapshots. "No schedule" is an explicit choice (null),
 * and is shown as such on the host list and dashboard.
 */
import { randomInt } from "node:crypto";
import { Type } from "typebox";
import { RequestError } from "../errors.js";
import { checkCron } from "../sources/cron.js";
import { RetentionPolicyBody } from "../sources/source-group-schema.js";

export interface InitialSchedule {
  cron: string;
  retention: Record<string, number | string>;
}

export const DEFAULT_INITIAL_RETENTION = { daily: 7, weekly: 4, monthly: 6 } as const;

/** The request field: an object, or null for "no schedule"; absent means the default. */
export const InitialScheduleBody = Type.Union([
  Type.Object(
    {
      cron: Type.String({ minLength: 1, maxLength: 200 }),
      retention: RetentionPolicyBody,
    },
    { additionalProperties: false },
  ),
  Type.Null(),
]);

export function defaultInitialSchedule(draw: (max: number) => number = randomInt): InitialSchedule {
  return { cron: `${draw(60)} ${1 + draw(4)} * * *`, retention: { ...DEFAULT_INITIAL_RETENTION } };
}

/**
 * The chosen schedule with its cron checked; undefined takes the default. A form names its own
 * cron input (`cronField`) so the refusal lands at it.
 */
export function checkInitialSchedule(
  input: InitialSchedule | null | undefined,
  cronField = "initial_schedule.cron",
): InitialSchedule | null {
  if (input === undefined) {
    return defaultInitialSchedule();
  }
  if (input === null) {
    return null;
  }
  const cron = checkCron(input.cron);
  if (!cron.ok) {
    throw new RequestError("invalid", `${cronField}: ${cron.message.replace(/^cron: /, "")}`);
  }
  return { cron: cron.cron, retention: input.retention };
}

const KEEP_FIELD = Type.Optional(Type.String({ pattern: "^[0-9]{0,7}$" }));

/** The token form's fields for it: a cron, three keep counts and the explicit "no schedule" box. */
export const InitialScheduleFormFields = {
  initial_cron: Type.Optional(Type.String({ maxLength: 200 })),
  keep_daily: KEEP_FIELD,
  keep_weekly: KEEP_FIELD,
  keep_monthly: KEEP_FIELD,
  no_schedule: Type.Optional(Type.Literal("on")),
};

export function initialScheduleOfForm(form: {
  initial_cron?: string | undefined;
  keep_daily?: string | undefined;
  keep_weekly?: string | undefined;
  keep_monthly?: string | undefined;
  no_schedule?: "on" | undefined;
}): InitialSchedule | null | undefined {
  if (form.no_schedule === "on") {
    return null;
  }
  const cron = form.initial_cron?.trim();
  if (!cron) {
    return undefined;
  }
  const retention: Record<string, number> = {};
  for (const key of ["daily", "weekly", "monthly"] as const) {
    const count = Number(form[`keep_${key}`] ?? "");
    if (Number.isInteger(count) && count > 0) {
      retention[key] = count;
    }
  }
  return { cron, retention };
}

/** The paths typed one per line; each must be absolute, else the refusal names the input. */
export function initialPathsOfForm(text: string | undefined): string[] {
  const paths = (text ?? "")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  const badPath = paths.find((path) => !path.startsWith("/"));
  if (badPath !== undefined) {
    throw new RequestError("invalid", `initial_paths: "${badPath}" is not an absolute path`);
  }
  return paths;
}
