/**
 * @module testing/doc-check/message-sections
 * Holds each "### `type`" section of PROTOCOL.md, and the envelope's, to its schema: its field
 * tables against the schema's fields both ways, a union's shapes against the "####" subsections,
 * and each section under the heading of its direction. Only for protocol-doc.test.ts; out of the
 * build, as everything under src/testing is.
 */
import { IsLiteral, IsObject, type TSchema } from "typebox";
import * as formats from "../../formats.js";
import {
  bodyOf,
  codeSpans,
  column,
  type Doc,
  type Heading,
  introOf,
  type Row,
  tablesIn,
  tableWith,
} from "./markdown-tables.js";
import {
  type Bound,
  boundsOf,
  type FieldSpec,
  fieldsOf,
  membersOf,
  typeWords,
  valuesOf,
} from "./schema-fields.js";

function mentionsBound(row: Row, bound: Bound): boolean {
  const numbers = new Set(row.text.match(/\d+(?:\.\d+)?/g) ?? []);
  if ((bound.keyword === "minLength" || bound.keyword === "minItems") && bound.value === 1) {
    return row.text.includes("non-empty") || numbers.has("1");
  }
  return numbers.has(String(bound.value));
}

export interface FieldRow {
  path: string;
  row: Row;
  type: string;
  required: string;
}

/** Rows of every field table in `lines`; a row that does not name exactly one field is a problem. */
export function fieldRows(lines: readonly string[], where: string, problems: string[]): FieldRow[] {
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
export function compareFields(
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

export function sameSet(a: Iterable<string>, b: Iterable<string>): boolean {
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
export function formatNamesOf(doc: Doc): Map<string, string> {
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

export function checkMessages(
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
