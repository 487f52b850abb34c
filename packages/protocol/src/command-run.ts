/**
 * @module command-run
 * `command.run`: fields common to every job kind plus the sub-payload of its kind. Each kind is
 * its own object schema so that the payload type narrows on `kind`; sub-payloads of other kinds
 * are declared absent (never), because a backup carrying `restore` is a server bug worth refusing.
 * The per-kind schemas are generated from one table, so a new kind's fields are absent from every
 * other kind without being listed there by hand.
 */
import {
  type Static,
  type TLiteral,
  type TNever,
  type TObject,
  type TOptional,
  type TSchema,
  Type,
} from "typebox";
import { Check, Copy, Diff, Drill, ForgetGroup, Kbps, NonEmptyString, Restore, Ulid } from "./common.js";
import { FORGET_HOSTS_MAX, FORGET_SNAPSHOTS_MAX, HOSTNAME_MAX_LENGTH } from "./constants.js";
import { SHA256_HEX_PATTERN } from "./formats.js";

const Absent = Type.Optional(Type.Never());

/** A restic `--host` value: the agent passes it as `--host=<value>`, so any text but an empty one. */
const ResticHost = Type.String({ minLength: 1, maxLength: HOSTNAME_MAX_LENGTH, description: "hostname" });

const Common = {
  job_id: Ulid,
  /** True for prune and unlock: the server has pushed `config.update` slot admin just before. */
  requires_admin_creds: Type.Boolean(),
  /** Per-job caps override the host-wide ones for this job only. */
  bandwidth_up_kbps: Type.Optional(Kbps),
  bandwidth_down_kbps: Type.Optional(Kbps),
  pre_hook: Type.Optional(Type.String()),
  post_hook: Type.Optional(Type.String()),
  /**
   * Protocol 8, true: run this `forget`, `prune` or `check` on the `mirror` slot's repository instead,
   * and report nothing about it as the host's repository (no `snapshots.report`, no `repo.stats`).
   */
  on_mirror: Type.Optional(Type.Boolean()),
  /**
   * Protocol 12, true: a keeper runs this job on another host's repository with the credentials
   * pushed for this job id (`config.update.job_id`), never its own, and reports nothing about it as
   * its own repository (no `snapshots.report`, no `repo.stats`).
   */
  kept: Type.Optional(Type.Boolean()),
};

/** Each kind's own sub-payload, in the order of JOB_KINDS. */
const KIND_FIELDS = {
  backup: {
    includes: Type.Array(NonEmptyString, { minItems: 1 }),
    excludes: Type.Array(NonEmptyString),
    /** The source group name: snapshots are tagged with it and forget is restricted to it. */
    tag: NonEmptyString,
    /**
     * Protocol 11: the hostname the snapshot is made under (restic `--host`), the host's stable
     * name in the fleet, so that renaming the machine does not start a second history.
     */
    host: Type.Optional(ResticHost),
  },
  forget: {
    /**
     * One policy per group; empty exactly when `snapshot_ids` is present (protocol 7), so that an
     * older agent, which requires at least one group, refuses the frame instead of running a policy.
     */
    forget_groups: Type.Array(ForgetGroup),
    /**
     * Protocol 11: a policy forget considers only snapshots made under these hostnames (restic
     * `--host`, once each), so a repository shared with other machines keeps theirs.
     */
    hosts: Type.Optional(Type.Array(ResticHost, { minItems: 1, maxItems: FORGET_HOSTS_MAX })),
    /** Protocol 7: forget exactly these snapshots (full 64-digit ids), no policy. */
    snapshot_ids: Type.Optional(
      Type.Array(Type.String({ pattern: SHA256_HEX_PATTERN, description: "full snapshot id" }), {
        minItems: 1,
        maxItems: FORGET_SNAPSHOTS_MAX,
      }),
    ),
  },
  prune: {},
  check: { check: Check },
  unlock: {},
  init: {},
  restore: { restore: Restore },
  diff: { diff: Diff },
  drill: { drill: Drill },
  copy: { copy: Copy },
};
type KindFields = typeof KIND_FIELDS;
type Kind = keyof KindFields;
type KindField = { [K in Kind]: keyof KindFields[K] }[Kind];

/** The properties of one kind's schema: job_id, kind, the common fields, its own, the others' absent. */
type KindProperties<K extends Kind> = {
  [P in "job_id" | "kind" | keyof typeof Common | KindField]: P extends "kind"
    ? TLiteral<K>
    : P extends keyof typeof Common
      ? (typeof Common)[P]
      : P extends keyof KindFields[K]
        ? KindFields[K][P] extends infer Own extends TSchema
          ? Own
          : never
        : TOptional<TNever>;
};

function commandRunOf<K extends Kind>(kind: K): TObject<KindProperties<K>> {
  const { job_id, ...common } = Common;
  const others = Object.entries(KIND_FIELDS).flatMap(([other, fields]) =>
    other === kind ? [] : Object.keys(fields).map((field) => [field, Absent] as const),
  );
  // The key order (own fields, then the others' in table order) is that of the schemas written
  // out by hand before, so a validation error names the same field first.
  const properties = {
    job_id,
    kind: Type.Literal(kind),
    ...common,
    ...KIND_FIELDS[kind],
    ...Object.fromEntries(others),
  };
  // Object.entries loses the per-key types that KindProperties spells out.
  return Type.Object(properties) as unknown as TObject<KindProperties<K>>;
}

export const CommandRunBackup = commandRunOf("backup");
export type CommandRunBackup = Static<typeof CommandRunBackup>;
export const CommandRunForget = commandRunOf("forget");
export type CommandRunForget = Static<typeof CommandRunForget>;
export const CommandRunPrune = commandRunOf("prune");
export type CommandRunPrune = Static<typeof CommandRunPrune>;
export const CommandRunCheck = commandRunOf("check");
export type CommandRunCheck = Static<typeof CommandRunCheck>;
export const CommandRunUnlock = commandRunOf("unlock");
export type CommandRunUnlock = Static<typeof CommandRunUnlock>;
export const CommandRunInit = commandRunOf("init");
export type CommandRunInit = Static<typeof CommandRunInit>;
export const CommandRunRestore = commandRunOf("restore");
export type CommandRunRestore = Static<typeof CommandRunRestore>;
export const CommandRunDiff = commandRunOf("diff");
export type CommandRunDiff = Static<typeof CommandRunDiff>;
export const CommandRunDrill = commandRunOf("drill");
export type CommandRunDrill = Static<typeof CommandRunDrill>;
export const CommandRunCopy = commandRunOf("copy");
export type CommandRunCopy = Static<typeof CommandRunCopy>;

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
  drill: CommandRunDrill,
  copy: CommandRunCopy,
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
  CommandRunDrill,
  CommandRunCopy,
]);
export type CommandRun = Static<typeof CommandRun>;
