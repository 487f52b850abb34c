/**
 * @module command-run
 * `command.run`: fields common to every job kind plus the sub-payload of its kind. Each kind is
 * its own object schema so that the payload type narrows on `kind`; sub-payloads of other kinds
 * are declared absent (never), because a backup carrying `restore` is a server bug worth refusing.
 */
import { type Static, Type } from "typebox";
import { Check, Diff, ForgetGroup, Kbps, NonEmptyString, Restore, Ulid } from "./common.js";

const Absent = Type.Optional(Type.Never());

const Common = {
  /** True for prune and unlock: the server has pushed `config.update` slot admin just before. */
  requires_admin_creds: Type.Boolean(),
  /** Per-job caps override the host-wide ones for this job only. */
  bandwidth_up_kbps: Type.Optional(Kbps),
  bandwidth_down_kbps: Type.Optional(Kbps),
  pre_hook: Type.Optional(Type.String()),
  post_hook: Type.Optional(Type.String()),
};

const NoBackup = { includes: Absent, excludes: Absent, tag: Absent };
const NoForget = { forget_groups: Absent };
const NoCheck = { check: Absent };
const NoRestore = { restore: Absent };
const NoDiff = { diff: Absent };

export const CommandRunBackup = Type.Object({
  job_id: Ulid,
  kind: Type.Literal("backup"),
  ...Common,
  includes: Type.Array(NonEmptyString, { minItems: 1 }),
  excludes: Type.Array(NonEmptyString),
  /** The source group name: snapshots are tagged with it and forget is restricted to it. */
  tag: NonEmptyString,
  ...NoForget,
  ...NoCheck,
  ...NoRestore,
  ...NoDiff,
});
export type CommandRunBackup = Static<typeof CommandRunBackup>;

export const CommandRunForget = Type.Object({
  job_id: Ulid,
  kind: Type.Literal("forget"),
  ...Common,
  forget_groups: Type.Array(ForgetGroup, { minItems: 1 }),
  ...NoBackup,
  ...NoCheck,
  ...NoRestore,
  ...NoDiff,
});
export type CommandRunForget = Static<typeof CommandRunForget>;

export const CommandRunPrune = Type.Object({
  job_id: Ulid,
  kind: Type.Literal("prune"),
  ...Common,
  ...NoBackup,
  ...NoForget,
  ...NoCheck,
  ...NoRestore,
  ...NoDiff,
});
export type CommandRunPrune = Static<typeof CommandRunPrune>;

export const CommandRunCheck = Type.Object({
  job_id: Ulid,
  kind: Type.Literal("check"),
  ...Common,
  check: Check,
  ...NoBackup,
  ...NoForget,
  ...NoRestore,
  ...NoDiff,
});
export type CommandRunCheck = Static<typeof CommandRunCheck>;

export const CommandRunUnlock = Type.Object({
  job_id: Ulid,
  kind: Type.Literal("unlock"),
  ...Common,
  ...NoBackup,
  ...NoForget,
  ...NoCheck,
  ...NoRestore,
  ...NoDiff,
});
export type CommandRunUnlock = Static<typeof CommandRunUnlock>;

export const CommandRunInit = Type.Object({
  job_id: Ulid,
  kind: Type.Literal("init"),
  ...Common,
  ...NoBackup,
  ...NoForget,
  ...NoCheck,
  ...NoRestore,
  ...NoDiff,
});
export type CommandRunInit = Static<typeof CommandRunInit>;

export const CommandRunRestore = Type.Object({
  job_id: Ulid,
  kind: Type.Literal("restore"),
  ...Common,
  restore: Restore,
  ...NoBackup,
  ...NoForget,
  ...NoCheck,
  ...NoDiff,
});
export type CommandRunRestore = Static<typeof CommandRunRestore>;

export const CommandRunDiff = Type.Object({
  job_id: Ulid,
  kind: Type.Literal("diff"),
  ...Common,
  diff: Diff,
  ...NoBackup,
  ...NoForget,
  ...NoCheck,
  ...NoRestore,
});
export type CommandRunDiff = Static<typeof CommandRunDiff>;

/** One schema per job kind, in the order of JOB_KINDS. */
export const CommandRunKinds = {
  backup: CommandRunBackup,
  forget: CommandRunForget,
  prune: CommandRunPrune,
  check: CommandRunCheck,
  unlock: CommandRunUnlock,
  init: CommandRunInit,
  restore: CommandRunRestore,
  diff: CommandRunDiff,
} as const;
export type CommandRunKinds = typeof CommandRunKinds;
export type CommandRunOf<K extends keyof CommandRunKinds> = Static<CommandRunKinds[K]>;

export const CommandRun = Type.Union([
  CommandRunBackup,
  CommandRunForget,
  CommandRunPrune,
  CommandRunCheck,
  CommandRunUnlock,
  CommandRunInit,
  CommandRunRestore,
  CommandRunDiff,
]);
export type CommandRun = Static<typeof CommandRun>;
