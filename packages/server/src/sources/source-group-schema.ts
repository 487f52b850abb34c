/**
 * @module sources/source-group-schema
 * What an operator may send for a source group. The name doubles as the restic tag, so it keeps
 * to characters a tag can hold; retention keys are those of the wire's `keep` (KEEP_KEYS) and
 * nothing else, so an
 * unknown key is named instead of silently ignored.
 */
import { KEEP_COUNT_KEYS, KEEP_WITHIN_KEYS, ResticDuration } from "@fleetback/protocol";
import { type Static, type TSchema, Type } from "typebox";

export const GROUP_NAME_PATTERN = "^[A-Za-z0-9._-]{1,64}$";
/** POSIX absolute, or a Windows drive path (the agent also runs on Windows). */
export const ABSOLUTE_PATH_PATTERN = "^(/|[A-Za-z]:[\\\\/])";
export const MAX_PATTERNS = 1000;
export const MAX_HOOK_LENGTH = 16_384;

const retentionProperties: Record<string, TSchema> = Object.fromEntries([
  ...KEEP_COUNT_KEYS.map((key) => [key, Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 }))]),
  ...KEEP_WITHIN_KEYS.map((key) => [key, Type.Optional(ResticDuration)]),
]);

export const RetentionPolicyBody = Type.Object(retentionProperties, { additionalProperties: false });

export const GroupName = Type.String({
  pattern: GROUP_NAME_PATTERN,
  description: "1 to 64 letters, digits, '.', '_' or '-' (it is the snapshot tag)",
});
const Includes = Type.Array(
  Type.String({ pattern: ABSOLUTE_PATH_PATTERN, maxLength: 4096, description: "absolute path" }),
  { minItems: 1, maxItems: MAX_PATTERNS },
);
const Excludes = Type.Array(Type.String({ minLength: 1, maxLength: 4096 }), { maxItems: MAX_PATTERNS });
const Hook = Type.Union([Type.String({ maxLength: MAX_HOOK_LENGTH }), Type.Null()]);
const GroupCap = Type.Union([Type.Integer({ minimum: 1, maximum: 10_000_000 }), Type.Null()], {
  description: "KiB/s, at least 1, or null for no cap of the group's own",
});

const groupFields = {
  name: GroupName,
  includes: Includes,
  excludes: Type.Optional(Excludes),
  retention_policy: Type.Optional(RetentionPolicyBody),
  retry_max: Type.Optional(Type.Integer({ minimum: 0, maximum: 20 })),
  retry_backoff_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400 })),
  /**
   * How long after a run was due (the schedule's first fire after the last snapshot) the group may
   * go without a new snapshot before it is overdue; null: an hour. Counted from the due time, a
   * grace shorter than the schedule's interval is meaningful, so it is allowed; schedules fire
   * down to the second, so a grace may be seconds too.
   */
  grace_seconds: Type.Optional(
    Type.Union([Type.Integer({ minimum: 10, maximum: 31_536_000 }), Type.Null()], {
      description:
        "10 to 31536000 seconds after a run was due (the schedule's first fire after the last snapshot), or null for the default (an hour)",
    }),
  ),
  /** KiB/s for this group's backups; the stricter of this and the host's cap applies. */
  bandwidth_up_kbps: Type.Optional(GroupCap),
  bandwidth_down_kbps: Type.Optional(GroupCap),
  pre_hook: Type.Optional(Hook),
  post_hook: Type.Optional(Hook),
};

export const CreateGroupBody = Type.Object(groupFields, { additionalProperties: false });
export type CreateGroupBody = Static<typeof CreateGroupBody>;

/** An edit: absent fields keep their stored value; a hook set to null or "" is removed. */
export const UpdateGroupBody = Type.Object(
  { ...groupFields, name: Type.Optional(GroupName), includes: Type.Optional(Includes) },
  { additionalProperties: false },
);
export type UpdateGroupBody = Static<typeof UpdateGroupBody>;

/**
 * Caps for one run-now (and the retries of that run): each replaces the group's own cap for this
 * run, still never above the host's. Absent or null: the group's cap.
 */
export const RunNowBody = Type.Object(
  {
    bandwidth_up_kbps: Type.Optional(GroupCap),
    bandwidth_down_kbps: Type.Optional(GroupCap),
  },
  { additionalProperties: false },
);
export type RunNowBody = Static<typeof RunNowBody>;

export const HostHooksBody = Type.Object(
  { pre_hook_default: Type.Optional(Hook), post_hook_default: Type.Optional(Hook) },
  { additionalProperties: false },
);
export type HostHooksBody = Static<typeof HostHooksBody>;

export const HOOK_FIELDS = ["pre_hook", "post_hook"] as const;

/**
 * A group's settings: what a fleet policy gives a group (policies/), and what a host's own edit
 * of a policy group keeps as its override. Not the name (the policy's) nor the hooks (the host's).
 */
export const GROUP_SETTING_KEYS = [
  "includes",
  "excludes",
  "retention_policy",
  "retry_max",
  "retry_backoff_seconds",
  "grace_seconds",
  "bandwidth_up_kbps",
  "bandwidth_down_kbps",
] as const;
