/**
 * @module openapi/policy-schemas
 * What the policies API answers, as the OpenAPI document gives it (routes/policies-api.ts).
 */
import { Type } from "typebox";
import { PolicyGroup, PolicySpec } from "../policies/policy-spec.js";
import { DateTime, Id } from "./common-schemas.js";

const { pre_hook: _pre, post_hook: _post, ...shownGroupFields } = PolicyGroup.properties;

/** A spec as answered: each group's hooks said as set or not, never their text. */
const ShownSpec = Type.Object(
  {
    ...PolicySpec.properties,
    groups: Type.Array(
      Type.Object(
        {
          ...shownGroupFields,
          has_pre_hook: Type.Boolean({ description: "the group has a pre-backup hook (write-only)" }),
          has_post_hook: Type.Boolean({ description: "the group has a post-backup hook (write-only)" }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const Ref = Type.Object({ id: Type.String(), name: Type.String(), version: Type.Integer() });

export const PolicyJson = Type.Object(
  {
    id: Id,
    name: Type.String(),
    version: Type.Integer({ minimum: 1 }),
    selector: Type.String({ description: "canonical text; empty: every host" }),
    priority: Type.Integer(),
    spec: ShownSpec,
    created_at: DateTime,
    updated_at: DateTime,
  },
  { $id: "Policy" },
);

const Names = Type.Array(Type.String());
const Conflict = Type.Object({ subject: Type.String(), policies: Type.Array(Ref), message: Type.String() });
const KeptApart = Type.Object({ group: Type.String(), from: Ref, message: Type.String() });

export const PlanJson = Type.Object(
  {
    hosts_covered: Type.Integer({ description: "hosts the policy's selector matches" }),
    hosts_changed: Type.Integer({ description: "hosts whose groups or schedules change" }),
    hosts: Type.Array(
      Type.Object({
        host_id: Id,
        host_name: Type.String(),
        groups: Type.Object({
          added: Names,
          changed: Type.Array(Type.Object({ name: Type.String(), fields: Names })),
          removed: Names,
          detached: Type.Array(Type.String(), {
            description:
              "groups no policy gives any more that a host's own schedule fires: kept, now the host's own",
          }),
        }),
        schedules: Type.Object({ added: Names, changed: Names, removed: Names }),
        maintenance: Type.Array(Type.String(), { description: "maintenance fields whose value changes" }),
        kept_apart: Type.Array(KeptApart),
        conflicts: Type.Array(Conflict),
      }),
      {
        description:
          "the hosts that change, or whose configuration keeps a policy group apart or in conflict",
      },
    ),
  },
  { $id: "PolicyPlan" },
);

export const PolicyApplied = Type.Object({ policy: PolicyJson, plan: PlanJson });
export const PolicyList = Type.Object({ policies: Type.Array(PolicyJson) });

export const VersionJson = Type.Object({
  version: Type.Integer(),
  name: Type.String(),
  selector: Type.String(),
  priority: Type.Integer(),
  spec: ShownSpec,
  actor_user_id: Type.Union([Type.String(), Type.Null()]),
  note: Type.Union([Type.String(), Type.Null()]),
  created_at: DateTime,
});
export const VersionList = Type.Object({ versions: Type.Array(VersionJson) });
export const VersionAnswer = Type.Object({
  version: VersionJson,
  changes: Type.Array(Type.Object({ path: Type.String(), before: Type.Unknown(), after: Type.Unknown() }), {
    description: "what this version changed from the one before it (empty for the first)",
  }),
});

const Setting = Type.Object({
  name: Type.String(),
  from: Type.Union([Ref, Type.Null()], {
    description: "the policy and version it comes from; null: the host's own group",
  }),
  overridden: Type.Array(Type.String(), { description: "settings the host set itself over the policy's" }),
  settings: Type.Record(Type.String(), Type.Unknown()),
});

export const HostPoliciesAnswer = Type.Object({
  matched: Type.Array(Ref),
  groups: Type.Array(Setting),
  schedules: Type.Array(
    Type.Object({
      name: Type.String(),
      cron: Type.String(),
      enabled: Type.Boolean(),
      groups: Names,
      from: Ref,
    }),
  ),
  conflicts: Type.Array(Conflict),
  kept_apart: Type.Array(KeptApart),
  maintenance: Type.Object({
    values: Type.Record(Type.String(), Type.Unknown(), {
      description: "maintenance fields the policies set",
    }),
    from: Type.Record(Type.String(), Ref),
    overridden: Type.Array(Type.String(), { description: "fields the host set itself over its policies'" }),
  }),
});

export const FleetApplyBody = Type.Object(
  {
    document: Type.Unknown({
      description: "the fleet document (version 1), as GET /api/fleet-config answers it",
    }),
    dry_run: Type.Optional(Type.Boolean({ description: "say what would change, change nothing" })),
  },
  { additionalProperties: false },
);

export const FleetApplyAnswer = Type.Object({
  dry_run: Type.Boolean(),
  changes: Type.Array(
    Type.Object({
      subject: Type.String(),
      path: Type.String(),
      before: Type.Unknown(),
      after: Type.Unknown(),
    }),
    { description: "every difference between the document and the fleet; empty: nothing to do" },
  ),
  plan: PlanJson,
});
