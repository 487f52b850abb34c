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
import { type TSchema, Type } from "typebox";
import { describe, expect, it } from "vitest";
import { AgentMessages, Hello } from "./agent-messages.js";
import { CommandRunBackup, CommandRunKinds } from "./command-run.js";
import * as constants from "./constants.js";
import { Envelope } from "./envelope.js";
import { ServerMessages } from "./server-messages.js";
import { introOf, parseDoc } from "./testing/doc-check/markdown-tables.js";
import {
  checkMessages,
  compareFields,
  fieldRows,
  formatNamesOf,
} from "./testing/doc-check/message-sections.js";
import {
  checkCodeTables,
  checkConstants,
  checkFormats,
  checkNamesInProse,
} from "./testing/doc-check/page-checks.js";
import { fieldsOf } from "./testing/doc-check/schema-fields.js";

const DOC = readFileSync(new URL("../PROTOCOL.md", import.meta.url), "utf8");

const DIRECTIONS = [
  { heading: "Messages: agent to server", catalog: AgentMessages as Readonly<Record<string, TSchema>> },
  { heading: "Messages: server to agent", catalog: ServerMessages as Readonly<Record<string, TSchema>> },
] as const;

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
