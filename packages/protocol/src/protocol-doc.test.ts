/**
 * @module protocol-doc.test
 * Keeps PROTOCOL.md true to the schemas. The page is written to be read by people and by this
 * test: one "### `type`" section per message (with one "####" subsection per shape of a union)
 * holding a field table (`field | type | required | meaning`, nested fields as `a.b` and `a[].b`),
 * a Formats table naming each pattern constant, and a Constants table with each value as JSON.
 * The test walks the TypeBox schemas and fails on any field, shape, message type, format or
 * constant missing from the page, on a wrong required flag, type, bound or enumerated value, and
 * on a message type or field the page names that the schemas lack.
 */
import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
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
  Type,
} from "typebox";
import { describe, expect, it } from "vitest";
import { AgentMessages, Hello } from "./agent-messages.js";
import { CommandRunBackup, CommandRunKinds } from "./command-run.js";
import * as constants from "./constants.js";
import { CopySummary } from "./copy-summary.js";
import { DrillMismatch, DrillSummary } from "./drill-summary.js";
import { Envelope } from "./envelope.js";
import * as formats from "./formats.js";
import { ServerMessages } from "./server-messages.js";

const DOC = readFileSync(new URL("../PROTOCOL.md", import.meta.url), "utf8");

const DIRECTIONS = [
  { heading: "Messages: agent to server", catalog: AgentMessages as Readonly<Record<string, TSchema>> },
  { heading: "Messages: server to agent", catalog: ServerMessages as Readonly<Record<string, TSchema>> },
] as const;

/**
 * snake_case names the page may use that are not on the wire: agent configuration keys, and the
 * keys of a drill's and a copy's free-form `job.finished.summary` (DrillSummary, CopySummary,
 * documented beside it).
 */
const NAMES_OFF_THE_WIRE = new Set([
  "tls_pin_sha256",
  ...Object.keys(DrillSummary.properties),
  ...Object.keys(DrillMismatch.properties),
  ...Object.keys(CopySummary.properties),
]);

// ---------------------------------------------------------------------------------------------
// Markdown

interface Heading {
  level: number;
  text: string;
  index: number;
}

interface Row {
  cells: string[];
  /** The whole row, for values and bounds that may sit in any cell. */
  text: string;
}

interface Table {
  header: string[];
  rows: Row[];
}

interface Doc {
  lines: string[];
  headings: Heading[];
}

function parseDoc(text: string): Doc {
  const lines = text.split("\n");
  const headings: Heading[] = [];
  let fenced = false;
  lines.forEach((line, index) => {
    if (line.startsWith("```")) {
      fenced = !fenced;
    }
    const match = fenced ? null : /^(#{1,6}) (.*)$/.exec(line);
    if (match?.[1] !== undefined && match[2] !== undefined) {
      headings.push({ level: match[1].length, text: match[2].trim(), index });
    }
  });
  return { lines, headings };
}

/** The lines under `heading` up to the next heading of the same or a higher level. */
function bodyOf(doc: Doc, heading: Heading): string[] {
  const next = doc.headings.find((h) => h.index > heading.index && h.level <= heading.level);
  return doc.lines.slice(heading.index + 1, next?.index ?? doc.lines.length);
}

/** The lines under `heading` up to its first subheading. */
function introOf(doc: Doc, heading: Heading): string[] {
  const next = doc.headings.find((h) => h.index > heading.index);
  return doc.lines.slice(heading.index + 1, next?.index ?? doc.lines.length);
}

function splitCells(line: string): string[] {
  const cells = line
    .trim()
    .replace(/^\|/, "")
    .replace(/\|$/, "")
    .split(/(?<!\\)\|/);
  return cells.map((cell) => cell.trim().replaceAll("\\|", "|"));
}

function tablesIn(lines: readonly string[]): Table[] {
  const tables: Table[] = [];
  let block: string[] = [];
  const flush = () => {
    const [head, separator, ...rest] = block;
    if (head !== undefined && separator !== undefined && /^\|[\s:|-]+\|$/.test(separator.trim())) {
      tables.push({
        header: splitCells(head).map((cell) => cell.toLowerCase()),
        rows: rest.map((line) => ({ cells: splitCells(line), text: line })),
      });
    }
    block = [];
  };
  for (const line of lines) {
    if (line.trim().startsWith("|")) {
      block.push(line);
    } else {
      flush();
    }
  }
  flush();
  return tables;
}

function codeSpans(text: string): string[] {
  return [...text.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? "");
}

function column(table: Table, name: string): number {
  return table.header.indexOf(name);
}

function tableWith(doc: Doc, firstColumn: string, otherColumn: string): Table | undefined {
  return tablesIn(doc.lines).find(
    (table) => table.header[0] === firstColumn && table.header.includes(otherColumn),
  );
}

// ---------------------------------------------------------------------------------------------
// Schemas

interface FieldSpec {
  path: string;
  schema: TSchema;
  required: boolean;
}

function membersOf(schema: TSchema): readonly TSchema[] {
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
function fieldsOf(schema: TSchema, prefix = ""): FieldSpec[] {
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
function typeWords(schema: TSchema, formatNames: ReadonlyMap<string, string>): string[] {
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
function valuesOf(schema: TSchema): string[] {
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

interface Bound {
  keyword: (typeof BOUND_KEYWORDS)[number];
  value: number;
}

function boundsOf(schema: TSchema): Bound[] {
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

function mentionsBound(row: Row, bound: Bound): boolean {
  const numbers = new Set(row.text.match(/\d+(?:\.\d+)?/g) ?? []);
  if ((bound.keyword === "minLength" || bound.keyword === "minItems") && bound.value === 1) {
    return row.text.includes("non-empty") || numbers.has("1");
  }
  return numbers.has(String(bound.value));
}

// ---------------------------------------------------------------------------------------------
// Checks

interface FieldRow {
  path: string;
  row: Row;
  type: string;
  required: string;
}

/** Rows of every field table in `lines`; a row that does not name exactly one field is a problem. */
function fieldRows(lines: readonly string[], where: string, problems: string[]): FieldRow[] {
  return tablesIn(lines)
    .filter((table) => table.header[0] === "field")
    .flatMap((table) => {
      const typeAt = column(table, "type");
      const requiredAt = column(table, "required");
      if (typeAt === -1 || requiredAt === -1) {
        problems.push(`${where}: a field table needs the columns type and required`);
        return [];
      }
      return table.rows.flatMap((row) => {
        const spans = codeSpans(row.cells[0] ?? "");
        if (spans.length !== 1 || spans[0] === undefined) {
          problems.push(`${where}: the row "${row.text.trim()}" must name one field as \`path\``);
          return [];
        }
        return [
          { path: spans[0], row, type: row.cells[typeAt] ?? "", required: row.cells[requiredAt] ?? "" },
        ];
      });
    });
}

/** The rows of one shape against the fields of its schema, both ways. */
function compareFields(
  where: string,
  expected: readonly FieldSpec[],
  rows: readonly FieldRow[],
  formatNames: ReadonlyMap<string, string>,
): string[] {
  const problems: string[] = [];
  const at = where === "" ? "" : `${where}: `;
  const byPath = new Map<string, FieldRow>();
  for (const row of rows) {
    if (byPath.has(row.path)) {
      problems.push(`${at}\`${row.path}\` is listed twice`);
    }
    byPath.set(row.path, row);
  }
  const known = new Set(expected.map((field) => field.path));
  for (const row of rows) {
    if (!known.has(row.path)) {
      problems.push(`${at}\`${row.path}\` is not a field of the schema`);
    }
  }
  for (const field of expected) {
    const row = byPath.get(field.path);
    if (row === undefined) {
      problems.push(`${at}field \`${field.path}\` is missing`);
      continue;
    }
    const required = field.required ? "yes" : "no";
    if (row.required !== required) {
      problems.push(`${at}\`${field.path}\` required should be "${required}", is "${row.required}"`);
    }
    for (const word of typeWords(field.schema, formatNames)) {
      if (!row.type.includes(word)) {
        problems.push(`${at}the type of \`${field.path}\` should say "${word}", says "${row.type}"`);
      }
    }
    for (const value of valuesOf(field.schema)) {
      if (!codeSpans(row.row.text).includes(value)) {
        problems.push(`${at}\`${field.path}\` should name the value \`${value}\``);
      }
    }
    for (const bound of boundsOf(field.schema)) {
      if (!mentionsBound(row.row, bound)) {
        problems.push(`${at}\`${field.path}\` should state its ${bound.keyword} ${bound.value}`);
      }
    }
  }
  return problems;
}

function literalsOf(schema: TSchema): string[] {
  return IsObject(schema)
    ? Object.values(schema.properties).flatMap((child) => (IsLiteral(child) ? [String(child.const)] : []))
    : [];
}

function sameSet(a: Iterable<string>, b: Iterable<string>): boolean {
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...left].every((item) => right.has(item));
}

/**
 * One message section against its payload schema. A union's shapes are the "####" subsections:
 * each shape must be described by the section's shared table plus exactly one subsection that
 * lists its fields (and names its literal, such as the `kind` of a command.run, in the heading).
 */
function checkMessageSection(
  doc: Doc,
  heading: Heading,
  schema: TSchema,
  formatNames: ReadonlyMap<string, string>,
): string[] {
  const name = codeSpans(heading.text)[0] ?? heading.text;
  const problems: string[] = [];
  const shared = fieldRows(introOf(doc, heading), name, problems);
  const variants = doc.headings
    .filter((h) => h.level === 4 && h.index > heading.index)
    .filter((h) => !doc.headings.some((x) => x.level <= 3 && x.index > heading.index && x.index < h.index))
    .map((h) => ({ heading: h, rows: fieldRows(bodyOf(doc, h), `${name} / ${h.text}`, problems) }));
  const members = membersOf(schema);
  if (members.length === 1) {
    const rows = [...shared, ...variants.flatMap((variant) => variant.rows)];
    return [...problems, ...compareFields(name, fieldsOf(schema), rows, formatNames)];
  }
  const used = new Set<Heading>();
  for (const member of members) {
    const expected = fieldsOf(member);
    const literals = literalsOf(member);
    const candidates = variants.filter((variant) =>
      literals.every((literal) => codeSpans(variant.heading.text).includes(literal)),
    );
    const shape = literals.length > 0 ? literals.map((l) => `\`${l}\``).join(", ") : "one shape";
    const matching = candidates.filter((variant) =>
      sameSet(
        expected.map((field) => field.path),
        [...shared, ...variant.rows].map((row) => row.path),
      ),
    );
    if (matching.length === 0) {
      const closest = candidates
        .map((variant) => ({
          variant,
          rows: [...shared, ...variant.rows],
        }))
        .sort(
          (a, b) =>
            compareFields("", expected, a.rows, formatNames).length -
            compareFields("", expected, b.rows, formatNames).length,
        )[0];
      problems.push(
        closest === undefined
          ? `${name}: no #### subsection describes ${shape} (fields ${expected.map((f) => f.path).join(", ")})`
          : `${name}: no #### subsection lists exactly the fields of ${shape}; closest is "${closest.variant.heading.text}": ${compareFields("", expected, closest.rows, formatNames).join("; ")}`,
      );
      continue;
    }
    for (const variant of matching) {
      used.add(variant.heading);
      problems.push(
        ...compareFields(
          `${name} / ${variant.heading.text}`,
          expected,
          [...shared, ...variant.rows],
          formatNames,
        ),
      );
    }
  }
  for (const variant of variants) {
    if (!used.has(variant.heading)) {
      problems.push(`${name}: "#### ${variant.heading.text}" describes no shape of the schema`);
    }
  }
  return problems;
}

function messageHeadings(doc: Doc): Array<{ heading: Heading; name: string; direction: string | undefined }> {
  return doc.headings
    .filter((h) => h.level === 3 && /^`[^`]+`$/.test(h.text))
    .map((heading) => {
      const parent = [...doc.headings].reverse().find((h) => h.level === 2 && h.index < heading.index);
      return { heading, name: heading.text.slice(1, -1), direction: parent?.text };
    });
}

/** Maps each pattern's source to its format name, from the Formats table. */
function formatNamesOf(doc: Doc): Map<string, string> {
  const table = tableWith(doc, "format", "constant");
  const names = new Map<string, string>();
  if (table === undefined) {
    return names;
  }
  const constantAt = column(table, "constant");
  const exported = formats as unknown as Record<string, unknown>;
  for (const row of table.rows) {
    const constant = codeSpans(row.cells[constantAt] ?? "")[0];
    const pattern = constant === undefined ? undefined : exported[constant];
    if (typeof pattern === "string") {
      names.set(pattern, row.cells[0] ?? "");
    }
  }
  return names;
}

function checkMessages(
  doc: Doc,
  directions: ReadonlyArray<{ heading: string; catalog: Readonly<Record<string, TSchema>> }>,
): string[] {
  const formatNames = formatNamesOf(doc);
  const problems: string[] = [];
  const sections = messageHeadings(doc);
  const all = new Map(directions.flatMap((d) => Object.keys(d.catalog).map((type) => [type, d.heading])));
  for (const section of sections) {
    if (!all.has(section.name)) {
      problems.push(`### \`${section.name}\` is no message type of either catalog`);
    }
  }
  for (const direction of directions) {
    for (const [type, schema] of Object.entries(direction.catalog)) {
      const found = sections.filter((section) => section.name === type);
      if (found.length !== 1 || found[0] === undefined) {
        problems.push(`\`${type}\` needs exactly one "### \`${type}\`" section, has ${found.length}`);
        continue;
      }
      if (found[0].direction !== direction.heading) {
        problems.push(
          `### \`${type}\` belongs under "## ${direction.heading}", is under "${found[0].direction}"`,
        );
      }
      problems.push(...checkMessageSection(doc, found[0].heading, schema, formatNames));
    }
  }
  return problems;
}

/** Every field path of every shape of a message. */
function pathsOf(schema: TSchema): Set<string> {
  return new Set(membersOf(schema).flatMap((member) => fieldsOf(member).map((field) => field.path)));
}

function stringsIn(value: unknown): string[] {
  if (typeof value === "string") {
    return [value];
  }
  if (Array.isArray(value)) {
    return value.flatMap(stringsIn);
  }
  if (typeof value === "object" && value !== null) {
    return Object.values(value).flatMap(stringsIn);
  }
  return [];
}

/**
 * Names written as code in the prose: `type.field` must be a message and one of its fields,
 * `a.b` or `a[].b` a field of some message, and a snake_case word a field, a value of the
 * contract, or a name known to be off the wire.
 */
function checkNamesInProse(doc: Doc, catalogs: ReadonlyArray<Readonly<Record<string, TSchema>>>): string[] {
  const messages = new Map(catalogs.flatMap((catalog) => Object.entries(catalog)));
  const prefixes = new Set([...messages.keys()].map((type) => type.split(".")[0]));
  const allPaths = new Set([...messages.values(), Envelope].flatMap((schema) => [...pathsOf(schema)]));
  const allSchemas = [...messages.values()].flatMap(membersOf).flatMap((member) => fieldsOf(member));
  const known = new Set([
    ...[...allPaths].map((path) => path.split(".").at(-1)?.replace("[]", "") ?? ""),
    ...allSchemas.flatMap((field) => valuesOf(field.schema)),
    ...stringsIn(Object.values(constants).filter((value) => typeof value !== "function")),
    ...NAMES_OFF_THE_WIRE,
  ]);
  const problems: string[] = [];
  for (const span of new Set(codeSpans(doc.lines.join("\n")))) {
    if (/^[a-z][a-z_]*(?:\[\])?(?:\.[a-z_]+(?:\[\])?)+$/.test(span) || /^[a-z_]+\[\]/.test(span)) {
      // `snapshots.report` is a message, `snapshots[].id` a field path.
      if (prefixes.has(span.split(".")[0])) {
        const resolves = [...messages.entries()].some(
          ([type, schema]) =>
            span === type ||
            (span.startsWith(`${type}.`) && pathsOf(schema).has(span.slice(type.length + 1))),
        );
        if (!resolves) {
          problems.push(`\`${span}\` names no message type, or no field of one`);
        }
      } else if (!allPaths.has(span)) {
        problems.push(`\`${span}\` is no field path of any message`);
      }
    } else if (/^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/.test(span) && !known.has(span)) {
      problems.push(`\`${span}\` is no field name or value of the contract`);
    }
  }
  return problems;
}

/**
 * The Constants section: a table (`constant | value | meaning`) for short values and a list
 * ("- `NAME` = `json`: meaning") for long ones; either way the value is JSON.
 */
function checkConstants(doc: Doc, exported: Readonly<Record<string, unknown>>): string[] {
  const section = doc.headings.find((h) => h.level === 2 && h.text === "Constants");
  if (section === undefined) {
    return ["no ## Constants section"];
  }
  const body = bodyOf(doc, section);
  const listed = new Map<string, string | undefined>();
  const problems: string[] = [];
  const add = (name: string, value: string | undefined) => {
    if (listed.has(name)) {
      problems.push(`constant \`${name}\` is listed twice`);
    }
    listed.set(name, value);
  };
  for (const table of tablesIn(body).filter((t) => t.header[0] === "constant")) {
    const valueAt = column(table, "value");
    for (const row of table.rows) {
      add(codeSpans(row.cells[0] ?? "")[0] ?? row.cells[0] ?? "", codeSpans(row.cells[valueAt] ?? "")[0]);
    }
  }
  for (const line of body) {
    const item = /^- `([A-Z0-9_]+)` = `([^`]+)`/.exec(line);
    if (item?.[1] !== undefined) {
      add(item[1], item[2]);
    }
  }
  const values = Object.entries(exported).filter(([, value]) => typeof value !== "function");
  for (const [name, value] of values) {
    if (!listed.has(name)) {
      problems.push(`constant \`${name}\` is missing`);
      continue;
    }
    const text = listed.get(name);
    let written: unknown;
    try {
      written = text === undefined ? undefined : JSON.parse(text);
    } catch {
      problems.push(`constant \`${name}\`: the value \`${text}\` is not JSON`);
      continue;
    }
    if (!isDeepStrictEqual(written, JSON.parse(JSON.stringify(value)))) {
      problems.push(`constant \`${name}\` is ${JSON.stringify(value)}, the page says ${text}`);
    }
  }
  const names = new Set(values.map(([name]) => name));
  for (const name of listed.keys()) {
    if (!names.has(name)) {
      problems.push(`constant \`${name}\` is not exported by constants.ts`);
    }
  }
  return problems;
}

function checkFormats(doc: Doc): string[] {
  const table = tableWith(doc, "format", "constant");
  if (table === undefined) {
    return ["no Formats table (`format | constant | rule`)"];
  }
  const constantAt = column(table, "constant");
  const listed = table.rows.map((row) => codeSpans(row.cells[constantAt] ?? "")[0] ?? "");
  const exported = Object.keys(formats).filter((name) => name.endsWith("_PATTERN"));
  const problems = [
    ...exported.filter((name) => !listed.includes(name)).map((name) => `format \`${name}\` is missing`),
    ...listed
      .filter((name) => !exported.includes(name))
      .map((name) => `\`${name}\` is no pattern of formats.ts`),
  ];
  const names = table.rows.map((row) => row.cells[0] ?? "");
  for (const name of names) {
    if (names.some((other) => other !== name && other.includes(name))) {
      problems.push(
        `format name "${name}" is part of another one; the type column could not tell them apart`,
      );
    }
  }
  return problems;
}

function checkCodeTables(doc: Doc): string[] {
  const problems: string[] = [];
  const close = tableWith(doc, "code", "agent reaction");
  const closeRows = new Map(
    (close?.rows ?? []).map((row) => [codeSpans(row.cells[0] ?? "")[0], codeSpans(row.cells[1] ?? "")[0]]),
  );
  for (const [name, code] of Object.entries(constants.CLOSE_CODES)) {
    if (closeRows.get(String(code)) !== name) {
      problems.push(`close code ${code} needs a row naming \`${name}\` in the Close codes table`);
    }
  }
  const errors = tableWith(doc, "code", "where");
  const errorRows = (errors?.rows ?? []).map((row) => codeSpans(row.cells[0] ?? "")[0] ?? "");
  if (!sameSet(errorRows, Object.values(constants.ERROR_CODES))) {
    problems.push(
      `the Error codes table lists ${errorRows.join(", ")}; ERROR_CODES has ${Object.values(constants.ERROR_CODES).join(", ")}`,
    );
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------

const doc = parseDoc(DOC);

describe("PROTOCOL.md", () => {
  it("documents every message type, in its direction, with every field of every shape", () => {
    expect(checkMessages(doc, DIRECTIONS)).toEqual([]);
  });

  it("documents the envelope", () => {
    const heading = doc.headings.find((h) => h.level === 2 && h.text === "Frames and the envelope");
    expect(heading).toBeDefined();
    if (heading !== undefined) {
      const problems: string[] = [];
      const rows = fieldRows(introOf(doc, heading), "envelope", problems);
      problems.push(...compareFields("envelope", fieldsOf(Envelope), rows, formatNamesOf(doc)));
      expect(problems).toEqual([]);
    }
  });

  it("names every format pattern, and no other", () => {
    expect(checkFormats(doc)).toEqual([]);
  });

  it("states every constant with its value, and no other", () => {
    expect(checkConstants(doc, constants)).toEqual([]);
  });

  it("has a row for every close code and every error code", () => {
    expect(checkCodeTables(doc)).toEqual([]);
  });

  it("names no message type or field in its prose that the schemas lack", () => {
    expect(checkNamesInProse(doc, [AgentMessages, ServerMessages])).toEqual([]);
  });

  it("states the current protocol version in its introduction", () => {
    expect(DOC).toContain(`**protocol version ${constants.PROTOCOL_VERSION}**`);
  });
});

describe("the PROTOCOL.md check can fail", () => {
  it("when a schema gains a field", () => {
    const grown = {
      ...AgentMessages,
      hello: Type.Object({ ...Hello.properties, uptime_seconds: Type.Integer() }),
    };
    expect(checkMessages(doc, [{ heading: "Messages: agent to server", catalog: grown }])).toContain(
      "hello: field `uptime_seconds` is missing",
    );
  });

  it("when a command.run kind gains a nested field", () => {
    const backup = Type.Object({
      ...CommandRunBackup.properties,
      tag: Type.Object({ name: Type.String() }),
    });
    const grown = {
      ...ServerMessages,
      "command.run": Type.Union([backup, ...Object.values(CommandRunKinds).slice(1)]),
    };
    const problems = checkMessages(doc, [{ heading: "Messages: server to agent", catalog: grown }]);
    expect(problems.join("\n")).toContain("tag.name");
  });

  it("when a message type is added or a field turns optional", () => {
    const grown = {
      ...AgentMessages,
      "host.facts": Type.Object({ uptime_seconds: Type.Integer() }),
      heartbeat: Type.Object({ running_job_ids: Type.Optional(Type.Array(Type.String())) }),
    };
    const problems = checkMessages(doc, [{ heading: "Messages: agent to server", catalog: grown }]);
    expect(problems).toContain('`host.facts` needs exactly one "### `host.facts`" section, has 0');
    expect(problems.join("\n")).toContain('`running_job_ids` required should be "no"');
  });

  it("when the page names a field or constant that does not exist", () => {
    const stale = parseDoc(`${DOC}\nSee \`tree.list.cursor\` and \`job_owner\`.\n`);
    expect(checkNamesInProse(stale, [AgentMessages, ServerMessages])).toEqual([
      "`tree.list.cursor` names no message type, or no field of one",
      "`job_owner` is no field name or value of the contract",
    ]);
    expect(
      checkConstants(parseDoc(DOC.replace(/(\| `MAX_JSON_DEPTH` +\| `)32`/, "$131`")), constants),
    ).toEqual(["constant `MAX_JSON_DEPTH` is 32, the page says 31"]);
    const edited = DOC.replace('`AGENT_KINDS` = `["bundle", "sea"]`', '`AGENT_KINDS` = `["bundle"]`').replace(
      /^- `FATAL_CLOSE_CODES`.*$/m,
      "",
    );
    expect(checkConstants(parseDoc(edited), constants)).toEqual([
      "constant `FATAL_CLOSE_CODES` is missing",
      'constant `AGENT_KINDS` is ["bundle","sea"], the page says ["bundle"]',
    ]);
  });
});
