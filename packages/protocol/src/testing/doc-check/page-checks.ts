/**
 * @module testing/doc-check/page-checks
 * The checks of PROTOCOL.md outside the message sections: the names its prose writes as code,
 * the Constants section, the Formats table and the close and error code tables, each against
 * what the package exports. Only for protocol-doc.test.ts; out of the build, as everything under
 * src/testing is.
 */
import { isDeepStrictEqual } from "node:util";
import type { TSchema } from "typebox";
import * as constants from "../../constants.js";
import { CopySummary } from "../../copy-summary.js";
import { DrillMismatch, DrillSummary } from "../../drill-summary.js";
import { Envelope } from "../../envelope.js";
import * as formats from "../../formats.js";
import { bodyOf, codeSpans, column, type Doc, tablesIn, tableWith } from "./markdown-tables.js";
import { sameSet } from "./message-sections.js";
import { fieldsOf, membersOf, valuesOf } from "./schema-fields.js";

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
export function checkNamesInProse(
  doc: Doc,
  catalogs: ReadonlyArray<Readonly<Record<string, TSchema>>>,
): string[] {
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
export function checkConstants(doc: Doc, exported: Readonly<Record<string, unknown>>): string[] {
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

export function checkFormats(doc: Doc): string[] {
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

export function checkCodeTables(doc: Doc): string[] {
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
