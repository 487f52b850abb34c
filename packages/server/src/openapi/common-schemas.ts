/**
 * @module openapi/common-schemas
 * Building blocks of the answer schemas. They describe JSON as it leaves c.json: a Date is an
 * ISO 8601 string by then, and a key whose value was undefined is absent. A schema given a `$id`
 * becomes a named component of the document (openapi/json-schema.ts); TypeBox validates it the
 * same either way.
 */
import { type TSchema, Type } from "typebox";

export const DateTime = Type.String({ format: "date-time" });

export function Nullable<S extends TSchema>(schema: S) {
  return Type.Union([schema, Type.Null()]);
}

/** Ids are ULIDs; the answer schema does not promise their format, only that they are strings. */
export const Id = Type.String({ minLength: 1 });

export const NullableDateTime = Nullable(DateTime);
export const NullableString = Nullable(Type.String());
export const NullableInteger = Nullable(Type.Integer());
export const NullableNumber = Nullable(Type.Number());

/** A free-form JSON object (job params, progress and summaries, audit details). */
export const JsonObject = Type.Record(Type.String(), Type.Unknown());

/** `{enum: [...]}` whose static type is the union of `values`, so view-types.ts can check it. */
export function Enum<const T extends readonly string[]>(values: T, description?: string) {
  return Type.Enum<[...T]>(values, description === undefined ? {} : { description });
}
