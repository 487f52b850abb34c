/**
 * @module policies/policy-spec
 * What a fleet policy holds (issue 37.2): source groups with the fields a host's own group has,
 * hooks included (sealed when stored and never shown or exported: policy-hooks.ts), schedules
 * firing those groups by name, a label selector and a priority. Checked whole before anything is stored: every error names its path in the document
 * (`spec.groups.1.includes.0`), and nothing is written when one is wrong.
 */
import { type Static, Type } from "typebox";
import { invalid, isRequestError } from "../errors.js";
import { agentDirPathProblem, PACKAGED_AGENT_DIRS } from "../hosts/agent-dirs.js";
import { formatSelector, parseSelector, selectorFromRequest } from "../labels/selector.js";
import { MaintenanceBody, maintenancePatch } from "../maintenance/maintenance-record.js";
import { checkCron } from "../sources/cron.js";
import { CreateGroupBody, GroupName, MAX_HOOK_LENGTH } from "../sources/source-group-schema.js";

export const MAX_POLICY_GROUPS = 50;
export const MAX_POLICY_SCHEDULES = 50;
export const POLICY_NAME_PATTERN = "^[a-z0-9]([a-z0-9._-]{0,62}[a-z0-9])?$";

const { name: _name, pre_hook: _pre, post_hook: _post, ...groupFields } = CreateGroupBody.properties;

const hook = (when: string) =>
  Type.Optional(
    Type.Union([Type.String({ maxLength: MAX_HOOK_LENGTH }), Type.Null()], {
      description: `shell run as root ${when} the backup; write-only: left out keeps the current version's, null or "" removes it`,
    }),
  );

/**
 * A hook left out keeps the one the policy's current version has for the group of that name
 * (write-only, as a channel's secrets are); null or "" removes it.
 */
export const PolicyGroup = Type.Object(
  {
    name: GroupName,
    ...groupFields,
    pre_hook: hook("before"),
    post_hook: hook("after"),
  },
  { additionalProperties: false },
);
export type PolicyGroup = Static<typeof PolicyGroup>;

export const PolicySchedule = Type.Object(
  {
    name: Type.String({
      pattern: "^[A-Za-z0-9._-]{1,64}$",
      description: "the schedule's name within the policy: how its next version finds it on each host",
    }),
    cron: Type.String({ minLength: 1, maxLength: 256 }),
    groups: Type.Array(GroupName, {
      minItems: 1,
      maxItems: MAX_POLICY_GROUPS,
      description: "names of the policy's groups",
    }),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type PolicySchedule = Static<typeof PolicySchedule>;

export const PolicySpec = Type.Object(
  {
    groups: Type.Array(PolicyGroup, { maxItems: MAX_POLICY_GROUPS }),
    schedules: Type.Optional(Type.Array(PolicySchedule, { maxItems: MAX_POLICY_SCHEDULES })),
    maintenance: Type.Optional(MaintenanceBody),
  },
  { additionalProperties: false },
);
export type PolicySpec = Static<typeof PolicySpec>;

export const PolicyBody = Type.Object(
  {
    name: Type.String({
      pattern: POLICY_NAME_PATTERN,
      description:
        "1 to 64 lower-case letters, digits, '.', '_' or '-', starting and ending with a letter or digit",
    }),
    selector: Type.String({
      maxLength: 4096,
      description:
        "the label selector of the hosts it covers (`env=prod,role in (db,web)`, `!staging`); empty: every host",
    }),
    priority: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 1000,
        description:
          "where two policies give a host the same group, the higher priority's applies (default 100); equal ones that differ are a conflict",
      }),
    ),
    spec: PolicySpec,
    note: Type.Optional(Type.String({ maxLength: 1000, description: "why this version, kept with it" })),
  },
  { additionalProperties: false },
);
export type PolicyBody = Static<typeof PolicyBody>;

export const DEFAULT_POLICY_PRIORITY = 100;

function refuse(field: string, message: string): never {
  throw invalid(`${field}: ${message}`, [{ field, message }]);
}

/**
 * What the schema cannot say: a valid selector and crons, unique group and schedule names, a
 * schedule firing only the policy's own groups, no path in the agent's own directories.
 * Returns the body as stored: the selector and crons in their canonical text, the default priority.
 */
export function checkPolicyBody(body: PolicyBody, prefix = ""): PolicyBody & { priority: number } {
  selectorFromRequest(body.selector, `${prefix}selector`);
  const names = new Set<string>();
  body.spec.groups.forEach((group, i) => {
    const at = `${prefix}spec.groups.${i}`;
    if (names.has(group.name)) {
      refuse(`${at}.name`, `a second group named ${group.name}`);
    }
    names.add(group.name);
    group.includes.forEach((path, j) => {
      const problem = agentDirPathProblem(path, PACKAGED_AGENT_DIRS);
      if (problem !== undefined) {
        refuse(`${at}.includes.${j}`, problem);
      }
    });
  });
  const scheduleNames = new Set<string>();
  const schedules = (body.spec.schedules ?? []).map((schedule, i) => {
    const at = `${prefix}spec.schedules.${i}`;
    if (scheduleNames.has(schedule.name)) {
      refuse(`${at}.name`, `a second schedule named ${schedule.name}`);
    }
    scheduleNames.add(schedule.name);
    const cron = checkCron(schedule.cron);
    if (!cron.ok) {
      return refuse(`${at}.cron`, cron.message.replace(/^cron: /, ""));
    }
    schedule.groups.forEach((group, j) => {
      if (!names.has(group)) {
        refuse(`${at}.groups.${j}`, `${group} is not a group of this policy`);
      }
    });
    return { ...schedule, cron: cron.cron, groups: [...new Set(schedule.groups)] };
  });
  const maintenance = body.spec.maintenance;
  if (maintenance !== undefined) {
    atPath(`${prefix}spec.maintenance.`, () => maintenanceCrons(maintenance));
  }
  return {
    ...body,
    selector: formatSelector(parseSelector(body.selector)),
    priority: body.priority ?? DEFAULT_POLICY_PRIORITY,
    spec: { groups: body.spec.groups, schedules, ...(maintenance === undefined ? {} : { maintenance }) },
  };
}

/** The maintenance crons checked as a host's would be (their errors name the field). */
function maintenanceCrons(maintenance: MaintenanceBody): void {
  const none = { forgetCron: "", pruneCron: "", checkCron: "", drillCron: "", drillEnabled: false };
  maintenancePatch(none as Parameters<typeof maintenancePatch>[0], maintenance, new Date(0));
}

/** Runs `check`; a field error it throws is said at `prefix` + its field. */
function atPath(prefix: string, check: () => void): void {
  try {
    check();
  } catch (err) {
    const field = isRequestError(err) ? /^([a-z_]+): (.*)$/s.exec(err.message) : null;
    if (!field?.[1]) {
      throw err;
    }
    refuse(`${prefix}${field[1]}`, field[2] ?? "");
  }
}
