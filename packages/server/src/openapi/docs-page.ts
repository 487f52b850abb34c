/**
 * @module openapi/docs-page
 * What /api/docs shows, read from the built document itself (not from the operations), so the
 * page and openapi.json cannot say different things: operations by tag with their access,
 * parameters, body and answers, then every named schema.
 */
import type { JsonRecord, JsonValue } from "./json-schema.js";
import { type Line, schemaLines } from "./schema-text.js";

type Json = JsonRecord;

export interface DocsParameter {
  name: string;
  in: string;
  required: boolean;
  lines: Line[];
}

export interface DocsAnswer {
  status: string;
  description: string;
  contentType: string | undefined;
  lines: Line[] | undefined;
}

export interface DocsOperation {
  anchor: string;
  method: string;
  path: string;
  summary: string;
  description: string[];
  access: string;
  parameters: DocsParameter[];
  body: { required: boolean; lines: Line[] } | undefined;
  answers: DocsAnswer[];
}

export interface DocsView {
  title: string;
  version: string;
  description: string;
  server: string;
  tags: Array<{ name: string; operations: DocsOperation[] }>;
  schemas: Array<{ name: string; lines: Line[] }>;
}

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

function obj(value: JsonValue | undefined): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value : {};
}

function str(value: JsonValue | undefined): string {
  return typeof value === "string" ? value : "";
}

/** The one media type of a content map and its schema. */
function contentOf(
  content: JsonValue | undefined,
): { type: string; schema: JsonValue | undefined } | undefined {
  const [entry] = Object.entries(obj(content));
  return entry ? { type: entry[0], schema: obj(entry[1]).schema } : undefined;
}

function operationView(method: string, path: string, op: Json): DocsOperation {
  const body = obj(op.requestBody);
  const bodyContent = contentOf(body.content);
  return {
    anchor: str(op.operationId),
    method: method.toUpperCase(),
    path,
    summary: str(op.summary),
    description: str(op.description).split("\n\n").filter(Boolean),
    access: str(op["x-fleetback-access"]),
    parameters: (Array.isArray(op.parameters) ? op.parameters : []).map((raw) => {
      const parameter = obj(raw);
      const described = {
        ...obj(parameter.schema),
        ...(parameter.description ? { description: parameter.description } : {}),
      };
      return {
        name: str(parameter.name),
        in: str(parameter.in),
        required: parameter.required === true,
        lines: schemaLines(described),
      };
    }),
    body: bodyContent
      ? { required: body.required === true, lines: schemaLines(bodyContent.schema) }
      : undefined,
    answers: Object.entries(obj(op.responses)).map(([status, raw]) => {
      const answer = obj(raw);
      const content = contentOf(answer.content);
      return {
        status,
        description: str(answer.description),
        contentType: content?.type,
        lines: content ? schemaLines(content.schema) : undefined,
      };
    }),
  };
}

export function apiDocsView(document: Json): DocsView {
  const info = obj(document.info);
  const tags = new Map<string, DocsOperation[]>();
  for (const [path, rawItem] of Object.entries(obj(document.paths))) {
    const item = obj(rawItem);
    for (const method of METHODS) {
      const op = obj(item[method]);
      if (Object.keys(op).length === 0) {
        continue;
      }
      const [tag = "Other"] = Array.isArray(op.tags) ? op.tags.map(str) : [];
      tags.set(tag, [...(tags.get(tag) ?? []), operationView(method, path, op)]);
    }
  }
  const [server] = Array.isArray(document.servers) ? document.servers : [];
  return {
    title: str(info.title),
    version: str(info.version),
    description: str(info.description),
    server: str(obj(server).url),
    tags: [...tags].map(([name, operations]) => ({ name, operations })),
    schemas: Object.entries(obj(obj(document.components).schemas))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, schema]) => ({ name, lines: schemaLines(schema) })),
  };
}
