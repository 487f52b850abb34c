/**
 * @module strip
 * The tolerant reader: removes properties a schema does not declare, in place, from a value that
 * has already passed validation against that schema. TypeBox's generic `Clean` does the same but
 * re-checks every union member dynamically, which made it twenty times slower than validation on
 * the hot path (a `log.stream` per output line); this walks a plan built once per schema.
 */
import { IsArray, IsObject, IsRecord, IsUnion, type TSchema } from "typebox";
import { Clean } from "typebox/value";

/** Mutates and returns its argument. */
export type Stripper = (value: unknown) => unknown;

function isRecordValue(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function objectStripper(properties: Readonly<Record<string, TSchema>>): Stripper {
  const known = new Set(Object.keys(properties));
  const nested: Array<[string, Stripper]> = [];
  for (const [key, schema] of Object.entries(properties)) {
    const strip = createStripper(schema);
    if (strip !== undefined) {
      nested.push([key, strip]);
    }
  }
  return (value) => {
    if (!isRecordValue(value)) {
      return value;
    }
    for (const key of Object.keys(value)) {
      if (!known.has(key)) {
        delete value[key];
      }
    }
    for (const [key, strip] of nested) {
      if (value[key] !== undefined) {
        strip(value[key]);
      }
    }
    return value;
  };
}

/** undefined when values of `schema` can never carry an undeclared property. */
export function createStripper(schema: TSchema): Stripper | undefined {
  if (IsRecord(schema)) {
    // Records (the tool's summary) are kept verbatim by design.
    return undefined;
  }
  if (IsObject(schema)) {
    return objectStripper(schema.properties);
  }
  if (IsArray(schema)) {
    const strip = createStripper(schema.items);
    return strip === undefined
      ? undefined
      : (value) => {
          if (Array.isArray(value)) {
            for (const item of value) {
              strip(item);
            }
          }
          return value;
        };
  }
  if (IsUnion(schema) && schema.anyOf.some((member) => createStripper(member) !== undefined)) {
    // No nested union of objects exists in the contract today; stay correct if one appears.
    return (value) => Clean(schema, value);
  }
  return undefined;
}
