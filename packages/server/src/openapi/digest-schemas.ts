/**
 * @module openapi/digest-schemas
 * The fleet digest's answer (digest/digest-content.ts Digest, digest/digest-text.ts).
 */
import { Type } from "typebox";

const Ids = Type.Array(Type.String());
const NamedList = Type.Object({
  count: Type.Integer({ minimum: 0 }),
  names: Type.Array(Type.String(), { description: "the first few, by name" }),
});
const Growth = Type.Array(Type.Object({ name: Type.String(), bytes: Type.Number() }));
const Count = Type.Integer({ minimum: 0 });

export const DigestJson = Type.Object(
  {
    digest: Type.Object({
      generated_at: Type.String(),
      since: Type.Union([Type.String(), Type.Null()]),
      hosts: Type.Object({
        total: Count,
        online: Count,
        offline: Count,
        overdue: Count,
        failing: Count,
        unprotected: Count,
      }),
      deletion: Type.Object({ hosts: Count, protected: Count, unprotected: Count, held: Count }),
      overdue: NamedList,
      offline: NamedList,
      failing: NamedList,
      unprotected: NamedList,
      changes: Type.Object({
        new_failures: NamedList,
        resolved: NamedList,
        newly_overdue: NamedList,
        new_hosts: NamedList,
        newly_held: NamedList,
      }),
      drills: Type.Object({ passed: Count, failed: NamedList }),
      growth: Type.Object({ fastest: Growth, slowest: Growth }),
      all_well: Type.Boolean(),
      state: Type.Object({
        at: Type.String(),
        hosts: Ids,
        failing: Ids,
        overdue: Ids,
        offline: Ids,
        held: Ids,
        attention: Ids,
      }),
    }),
    title: Type.String({ description: "one line with the verdict" }),
    text: Type.String({ description: "the digest as plain text" }),
  },
  { $id: "Digest" },
);
