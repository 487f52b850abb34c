/**
 * @module labels/label-bodies
 * The request bodies of the labels API (routes/labels-api.ts), also declared in the OpenAPI
 * document. TypeBox bounds the shape; label-rules.ts says what a key and a value may be.
 */
import { Type } from "typebox";
import { LabelKeysSchema, LabelsSchema } from "./label-rules.js";
import { SELECTOR_MAX_LENGTH } from "./selector.js";

/** A bulk action names at most this many hosts by id; a selector reaches any number. */
export const BULK_HOST_IDS_MAX = 1000;

export const PutLabelsBody = Type.Object({ labels: LabelsSchema }, { additionalProperties: false });

export const PatchLabelsBody = Type.Object(
  { set: Type.Optional(LabelsSchema), remove: Type.Optional(LabelKeysSchema) },
  { additionalProperties: false },
);

export const BulkLabelsBody = Type.Object(
  {
    selector: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: SELECTOR_MAX_LENGTH,
        description: "e.g. `env=prod,role in (db,web),!staging`; give this or host_ids",
      }),
    ),
    host_ids: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: BULK_HOST_IDS_MAX }),
    ),
    set: Type.Optional(LabelsSchema),
    remove: Type.Optional(LabelKeysSchema),
  },
  { additionalProperties: false },
);

export const LabelsAnswer = Type.Object({ labels: Type.Record(Type.String(), Type.String()) });

export const BulkLabelsAnswer = Type.Object({
  matched: Type.Integer({ minimum: 0, description: "hosts the selector or the ids named" }),
  changed: Type.Integer({ minimum: 0, description: "of those, hosts whose labels changed" }),
  not_found: Type.Array(Type.String(), { description: "ids of host_ids that name no host" }),
});
