/**
 * @module testing/doc-check/schema-fields
 * What PROTOCOL.md must say of each TypeBox schema: its fields as dotted paths (`a.b`, `a[].b`,
 * through objects, arrays and unions) with their required flags, the words of their type cells,
 * their enumerated values and their bounds. Only for protocol-doc.test.ts; out of the build, as
 * everything under src/testing is.
 */
import {
  IsArray,
  IsBoolean,
  IsEnum,
  IsInteger,
  IsLiteral,
  IsNever,
  IsNull,
  IsNumber,
  IsObject,
  IsRecord,
  IsString,
  IsUnion,
  type TSchema,
} from "typebox";

export interface FieldSpec {
  path: string;
  schema: TSchema;
  required: boolean;
}

export function membersOf(schema: TSchema): readonly TSchema[] {
  return IsUnion(schema) ? schema.anyOf : [schema];
}

/** Fields nested inside the value at `path`: through objects, array items and unions. */
function nestedFields(schema: TSchema, path: string): FieldSpec[] {
  if (IsRecord(schema)) {
    // Free-form (the tool's summary, the envelope's payload): nothing inside is contract.
    return [];
  }
  if (IsObject(schema)) {
    return fieldsOf(schema, path);
  }
  if (IsArray(schema)) {
    return nestedFields(schema.items, `${path}[]`);
  }
  if (IsUnion(schema)) {
    const seen = new Map<string, FieldSpec>();
    for (const field of schema.anyOf.flatMap((member) => nestedFields(member, path))) {
      seen.set(field.path, seen.get(field.path) ?? field);
    }
    return [...seen.values()];
  }
  return [];
}

/** Every field of an object schema, depth first; fields declared absent (never) are left out. */
export function fieldsOf(schema: TSchema, prefix = ""): FieldSpec[] {
  if (!IsObject(schema)) {
    return [];
  }
  const required: readonly string[] = schema.required ?? [];
  return Object.entries(schema.properties).flatMap(([key, child]) => {
    if (IsNever(child)) {
      return [];
    }
    const path = prefix === "" ? key : `${prefix}.${key}`;
    return [{ path, schema: child, required: required.includes(key) }, ...nestedFields(child, path)];
  });
}

/** Words the type cell must contain. */
export function typeWords(schema: TSchema, formatNames: ReadonlyMap<string, string>): string[] {
  if (IsUnion(schema)) {
    return schema.anyOf.flatMap((member) => typeWords(member, formatNames));
  }
  if (IsEnum(schema) || IsLiteral(schema)) {
    return [];
  }
  if (IsNull(schema)) {
    return ["null"];
  }
  if (IsString(schema)) {
    const { pattern } = schema as { pattern?: unknown };
    if (typeof pattern !== "string") {
      return ["string"];
    }
    return [formatNames.get(pattern) ?? `(a format for /${pattern}/ in the Formats table)`];
  }
  if (IsInteger(schema)) {
    return ["integer"];
  }
  if (IsNumber(schema)) {
    return ["number"];
  }
  if (IsBoolean(schema)) {
    return ["boolean"];
  }
  if (IsRecord(schema) || IsObject(schema)) {
    return ["object"];
  }
  if (IsArray(schema)) {
    return ["array", ...typeWords(schema.items, formatNames)];
  }
  return [];
}

/** Enumerated and literal values, each to be named in the row as `value`. */
export function valuesOf(schema: TSchema): string[] {
  if (IsUnion(schema)) {
    return schema.anyOf.flatMap(valuesOf);
  }
  if (IsArray(schema)) {
    return valuesOf(schema.items);
  }
  if (IsEnum(schema)) {
    return schema.enum.map(String);
  }
  if (IsLiteral(schema)) {
    return [String(schema.const)];
  }
  return [];
}

const BOUND_KEYWORDS = [
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
] as const;

export interface Bound {
  keyword: (typeof BOUND_KEYWORDS)[number];
  value: number;
}

export function boundsOf(schema: TSchema): Bound[] {
  if (IsUnion(schema)) {
    return schema.anyOf.flatMap(boundsOf);
  }
  const record = schema as Record<string, unknown>;
  const own = BOUND_KEYWORDS.flatMap((keyword) => {
    const value = record[keyword];
    return typeof value === "number" ? [{ keyword, value }] : [];
  });
  if (IsArray(schema) && !IsObject(schema.items)) {
    return [...own, ...boundsOf(schema.items)];
  }
  return own;
}
