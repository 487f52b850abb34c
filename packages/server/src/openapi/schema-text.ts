/**
 * @module openapi/schema-text
 * A JSON schema of the document written the way a reader scans a shape: TypeScript-like, one
 * field a line, its constraints and description as a trailing comment. Named schemas stay names
 * (the page links them to their definition). The output is segments, never markup, so the page's
 * autoescaping stays the only thing that writes HTML.
 */
import { COMPONENT_PREFIX, type JsonValue } from "./json-schema.js";

/** `note` marks a field's trailing comment (constraints, description), which the page sets apart. */
export type Segment =
  | { text: string; ref?: undefined; note?: true }
  | { ref: string; text?: undefined; note?: undefined };
export type Line = Segment[];

type Schema = { [key: string]: JsonValue };

const CONSTRAINTS = [
  "format",
  "minLength",
  "maxLength",
  "pattern",
  "minimum",
  "maximum",
  "minItems",
  "maxItems",
] as const;

function isSchema(value: JsonValue | undefined): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What a schema says beyond its type, for the trailing comment. */
function noteOf(schema: Schema): string {
  const parts: string[] = [];
  if (typeof schema.description === "string") {
    parts.push(schema.description);
  }
  for (const key of CONSTRAINTS) {
    const value = schema[key];
    if (value !== undefined) {
      parts.push(`${key} ${typeof value === "string" ? value : JSON.stringify(value)}`);
    }
  }
  if (schema.deprecated === true) {
    parts.push("deprecated");
  }
  return parts.join("; ");
}

/** Notes of the members of a union or the items of an array: they describe the one field. */
function nestedNotes(schema: Schema): string[] {
  const members = [schema.anyOf, schema.oneOf].find(Array.isArray) ?? [];
  const inner = [...members, ...(isSchema(schema.items) ? [schema.items] : [])];
  return inner
    .filter(isSchema)
    .filter((member) => member.$ref === undefined && member.type !== "object")
    .map(noteOf);
}

interface Writer {
  lines: Line[];
  current: Line;
}

function text(writer: Writer, value: string): void {
  writer.current.push({ text: value });
}

function comment(writer: Writer, value: string): void {
  writer.current.push({ text: `  // ${value}`, note: true });
}

function newline(writer: Writer): void {
  writer.lines.push(writer.current);
  writer.current = [];
}

function isInline(schema: Schema): boolean {
  return !(
    schema.type === "object" &&
    isSchema(schema.properties) &&
    Object.keys(schema.properties).length > 0
  );
}

function writeType(writer: Writer, schema: JsonValue | undefined, indent: string): void {
  if (!isSchema(schema)) {
    text(writer, schema === false ? "never" : "any");
    return;
  }
  if (typeof schema.$ref === "string") {
    writer.current.push({ ref: schema.$ref.slice(COMPONENT_PREFIX.length) });
    return;
  }
  const members = [schema.anyOf, schema.oneOf].find(Array.isArray);
  if (members) {
    members.forEach((member, index) => {
      if (index > 0) {
        text(writer, " | ");
      }
      writeType(writer, member, indent);
    });
    return;
  }
  if (schema.const !== undefined) {
    text(writer, JSON.stringify(schema.const));
    return;
  }
  if (Array.isArray(schema.enum)) {
    text(writer, schema.enum.map((value) => JSON.stringify(value)).join(" | "));
    return;
  }
  if (schema.type === "array") {
    const items = schema.items;
    const wrap = isSchema(items) && (Array.isArray(items.anyOf) || Array.isArray(items.enum));
    text(writer, wrap ? "(" : "");
    writeType(writer, items, indent);
    text(writer, wrap ? ")[]" : "[]");
    return;
  }
  if (schema.type === "object") {
    writeObject(writer, schema, indent);
    return;
  }
  text(writer, typeof schema.type === "string" ? schema.type : "any");
}

function writeObject(writer: Writer, schema: Schema, indent: string): void {
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const names = Object.keys(properties);
  const values = [
    schema.additionalProperties,
    ...Object.values(isSchema(schema.patternProperties) ? schema.patternProperties : {}),
  ];
  const open = values.find((value) => isSchema(value));
  if (names.length === 0) {
    text(writer, "{ [key: string]: ");
    writeType(writer, open ?? {}, indent);
    text(writer, " }");
    return;
  }
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  text(writer, "{");
  newline(writer);
  for (const name of names) {
    const property = properties[name];
    text(writer, `${indent}  ${name}${required.has(name) ? "" : "?"}: `);
    writeType(writer, property, `${indent}  `);
    const notes =
      isSchema(property) && isInline(property) ? [noteOf(property), ...nestedNotes(property)] : [];
    const note = notes.filter(Boolean).join("; ");
    if (note) {
      comment(writer, note);
    }
    newline(writer);
  }
  text(writer, `${indent}}`);
}

/** The schema as lines of segments; a top-level note (a parameter's constraints) comes last. */
export function schemaLines(schema: JsonValue | undefined): Line[] {
  const writer: Writer = { lines: [], current: [] };
  writeType(writer, schema, "");
  const note =
    isSchema(schema) && isInline(schema)
      ? [noteOf(schema), ...nestedNotes(schema)].filter(Boolean).join("; ")
      : "";
  if (note) {
    comment(writer, note);
  }
  newline(writer);
  return writer.lines;
}
