/**
 * @module openapi/recovery-kit-schemas
 * The recovery kit's answer (recovery/recovery-kit.ts RecoveryKit, recovery/kit-text.ts).
 */
import { Type } from "typebox";
import { DateTime, Enum, Id, NullableString } from "./common-schemas.js";

const Slot = Enum(["repo", "admin", "mirror"] as const);

const BoundSlot = Type.Object({
  slot: Slot,
  label: Type.String(),
  state: Type.Literal("bound"),
  url: Type.String({ description: "as stored, without the login" }),
  restic_repository: Type.String({
    description: "RESTIC_REPOSITORY: the URL with the server login merged in as the agent does it",
  }),
  password: Type.String({ description: "RESTIC_PASSWORD, which opens the repository" }),
  username: NullableString,
  login_password: Type.Union([Type.String(), Type.Null()], {
    description: "the repository server login of `username` when it is not the repository password",
  }),
  script: Type.String({ description: "a POSIX sh script that runs restic on this repository" }),
});

const UnreadableSlot = Type.Object({
  slot: Slot,
  label: Type.String(),
  state: Type.Literal("unreadable"),
  reason: Type.String({ description: "why this server's key cannot open the stored slot" }),
});

const KitHost = Type.Object({
  id: Id,
  name: Type.String(),
  restic_host: Type.String({ description: "the restic `--host` of its backups" }),
  snapshot_hostnames: Type.Array(Type.String()),
  restic_version: NullableString,
  repositories: Type.Array(Type.Union([BoundSlot, UnreadableSlot])),
});

export const RecoveryKitAnswer = Type.Object({
  kit: Type.Object({
    scope: Enum(["host", "fleet"] as const),
    generated_at: DateTime,
    server_url: Type.String(),
    hosts: Type.Array(KitHost),
  }),
  text: Type.String({ description: "the same kit as the Markdown file the pages download" }),
});
