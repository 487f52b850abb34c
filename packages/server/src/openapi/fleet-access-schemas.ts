/**
 * @module openapi/fleet-access-schemas
 * Answers about how hosts join and what they run: enrolment tokens (enrolment/mint-request.ts
 * mintJson), announced hosts waiting for approval, the agents' own enrol/announce/claim answers,
 * agent bundles and the release key, and an update rollout (updates/rollout.ts rolloutJson).
 */
import { UPDATE_STATES } from "@fleetback/db";
import { Type } from "typebox";
import { DateTime, Enum, Id, NullableString } from "./common-schemas.js";

export const MintedToken = Type.Object({
  token: Type.String({ description: "shown this once" }),
  expires_at: DateTime,
  generated_password: Type.Optional(
    Type.String({ description: "when the server generated the repository password" }),
  ),
  generated_login_password: Type.Optional(
    Type.String({
      description:
        "with a generated repository password and a rest: user: the user's rest-server login, apart from the repository password (the htpasswd snippets hold this one)",
    }),
  ),
  htpasswd_snippet: Type.Optional(Type.String()),
  htpasswd_new_file_snippet: Type.Optional(Type.String()),
  install_command: Type.String(),
});

export const EnrolmentTokenList = Type.Object({
  enrollment_tokens: Type.Array(
    Type.Object({
      id: Id,
      created_at: DateTime,
      expires_at: DateTime,
      initial_paths: Type.Array(Type.String()),
      labels: Type.Record(Type.String(), Type.String(), {
        description: "the labels every host enrolled with the token gets",
      }),
      initial_schedule: Type.Union(
        [
          Type.Object({
            cron: Type.String(),
            retention: Type.Record(Type.String(), Type.Union([Type.Integer(), Type.String()])),
          }),
          Type.Null(),
        ],
        {
          description:
            "the schedule and retention the initial paths' group gets on enrolment; null: no schedule (an explicit choice)",
        },
      ),
      has_repository: Type.Boolean(),
      successor_of: Type.Union([Id, Type.Null()], {
        description:
          "the host whose successor the machine enrolling with it becomes (issue 38.2); null: a new host",
      }),
      created_by: NullableString,
      created_by_username: NullableString,
    }),
  ),
});

export const SuccessorToken = Type.Object({
  token: Type.String({ description: "shown this once" }),
  expires_at: DateTime,
  host_id: Id,
  host_name: Type.String(),
  install_command: Type.String({
    description:
      "run on the new machine: its agent enrols as this host, taking over its configuration and history",
  }),
});

export const PendingHostList = Type.Object({
  pending_hosts: Type.Array(
    Type.Object({
      id: Id,
      hostname: Type.String(),
      os: Type.String(),
      arch: Type.String(),
      agent_version: Type.String(),
      tool_version: Type.String(),
      fingerprint: Type.String({ description: "SHA256: and the unpadded base64 of the key's SHA-256" }),
      source_ip: NullableString,
      labels: Type.Record(Type.String(), Type.String(), {
        description: "what the install asked for (--label); the host gets them when approved",
      }),
      source_network: Type.String(),
      created_at: DateTime,
      expires_at: DateTime,
    }),
  ),
});

export const PendingApproved = Type.Object({ host_id: Id });
export const PendingRejected = Type.Object({
  rejected: Type.Array(Id, { description: "ids of the rejected hosts" }),
});

const releaseKey = Type.String({ description: "base64 of the 32-byte Ed25519 key that signs agent updates" });

export const AgentEnrolled = Type.Object({
  host_id: Id,
  agent_token: Type.String(),
  release_public_key: releaseKey,
});
export const AgentAnnounced = Type.Object({
  pending_id: Id,
  fingerprint: Type.String(),
  hostname_collision: Type.Boolean(),
});
export const ClaimPending = Type.Object({ status: Type.Literal("pending") });
export const AgentReleaseKey = Type.Object({ release_public_key: releaseKey });

export const ReleaseKey = Type.Object({ public_key: releaseKey, fingerprint: Type.String() });

export const AgentVersionList = Type.Array(
  Type.Object({
    version: Type.String(),
    sha256: Type.String(),
    size: Type.Integer({ minimum: 0 }),
    created_at: DateTime,
    sea: Type.Array(
      Type.Object({
        os: Type.String(),
        arch: Type.String(),
        sha256: Type.String(),
        size: Type.Integer({ minimum: 0 }),
      }),
      { description: "single-executable builds of this version, per platform" },
    ),
  }),
);

export const Rollout = Type.Object({
  version: Type.String(),
  targets: Type.Array(
    Type.Object({
      host_id: Id,
      hostname: Type.String(),
      state: Enum(UPDATE_STATES),
      error: Type.Optional(Type.String()),
    }),
  ),
  skipped: Type.Array(Type.Object({ host_id: Id, hostname: Type.String(), reason: Type.String() })),
});
