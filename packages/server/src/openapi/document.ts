/**
 * @module openapi/document
 * Builds the OpenAPI 3.1 document of /api from the operations the routes declare. Nothing here
 * describes a route by hand: parameters, bodies and answers are the operations' TypeBox schemas
 * turned into JSON, and the error answers follow from what each operation takes (a body or query
 * can be invalid, a role can be missing, an id can name nothing).
 */
import { type TSchema, Type } from "typebox";
import { ErrorBody } from "../errors.js";
import { createSchemaCollector, type JsonRecord, type JsonValue } from "./json-schema.js";
import type { ApiAccess, ApiOperation, ErrorStatus } from "./operation.js";

export interface DocumentOptions {
  /** FLEETBACK_BASE_URL: the one server this document describes. */
  baseUrl: string;
  version: string;
}

type Json = JsonRecord;

/** ErrorBody of errors.ts, the one shape of every JSON error, as a named component. */
const NamedErrorBody = Type.Object(ErrorBody.properties, { $id: "ErrorBody" });

const DEFAULT_ERRORS: Record<ErrorStatus, string> = {
  400: "The input is invalid: `message` names the first field, `details` lists every problem.",
  401: "No session and no API token (or an agent route without a valid agent token).",
  403: "The caller's role is not enough, or a session call came without our Origin.",
  404: "Nothing has the id in the path.",
  409: "Conflict with the current state.",
  410: "Gone.",
  429: "Too many attempts; `Retry-After` says when to try again.",
  502: "The agent answered with an error.",
  503: "The host is offline; nothing was sent.",
  504: "The agent did not answer in time.",
};

const ROLE_TEXT: Record<ApiAccess, string> = {
  public: "No credentials.",
  agent: "An agent's bearer token (from enrolment), not a user's.",
  viewer: "Any signed-in user (viewer, operator or admin).",
  operator: "An operator or admin.",
  admin: "An admin.",
};

/** `/api/hosts/:id` → `/api/hosts/{id}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}");
}

export function pathParameters(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((match) => match[1] ?? "");
}

function securityOf(access: ApiAccess): Json[] {
  if (access === "public") {
    return [];
  }
  if (access === "agent") {
    return [{ agentToken: [] }];
  }
  return [{ session: [] }, { apiToken: [] }];
}

function errorStatuses(op: ApiOperation): Map<ErrorStatus, string> {
  const statuses = new Map<ErrorStatus, string>();
  if (op.body !== undefined || op.query !== undefined) {
    statuses.set(400, DEFAULT_ERRORS[400]);
  }
  if (op.access !== "public") {
    statuses.set(401, DEFAULT_ERRORS[401]);
  }
  if (op.access !== "public" && op.access !== "agent") {
    statuses.set(403, DEFAULT_ERRORS[403]);
  }
  if (pathParameters(op.path).length > 0) {
    statuses.set(404, DEFAULT_ERRORS[404]);
  }
  for (const [status, text] of Object.entries(op.errors ?? {})) {
    statuses.set(Number(status) as ErrorStatus, text);
  }
  return statuses;
}

function operationJson(op: ApiOperation, toJson: (schema: TSchema) => JsonValue): Json {
  const parameters: Json[] = pathParameters(op.path).map((name) => ({
    name,
    in: "path",
    required: true,
    ...(op.params?.[name] === undefined ? {} : { description: op.params[name] }),
    schema: { type: "string" },
  }));
  const required = new Set(op.query?.required ?? []);
  for (const [name, schema] of Object.entries(op.query?.properties ?? {})) {
    const description = (schema as { description?: unknown }).description;
    parameters.push({
      name,
      in: "query",
      required: required.has(name),
      ...(typeof description === "string" ? { description } : {}),
      schema: toJson(schema),
    });
  }
  const responses: Json = {};
  for (const [status, answer] of Object.entries(op.responses)) {
    responses[status] =
      answer.schema === undefined
        ? { description: answer.description }
        : {
            description: answer.description,
            content: { [answer.contentType ?? "application/json"]: { schema: toJson(answer.schema) } },
          };
  }
  const errorSchema = toJson(NamedErrorBody);
  for (const [status, description] of errorStatuses(op)) {
    responses[String(status)] = { description, content: { "application/json": { schema: errorSchema } } };
  }
  const description = [op.description, `Access: ${ROLE_TEXT[op.access]}`].filter(Boolean).join("\n\n");
  return {
    operationId: op.id,
    tags: [op.tag],
    summary: op.summary,
    description,
    "x-fleetback-access": op.access,
    security: securityOf(op.access),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(op.body === undefined
      ? {}
      : {
          requestBody: {
            required: op.bodyOptional !== true,
            content: { "application/json": { schema: toJson(op.body) } },
          },
        }),
    responses,
  };
}

export function buildOpenApiDocument(operations: readonly ApiOperation[], options: DocumentOptions): Json {
  const collector = createSchemaCollector();
  const paths: Record<string, Json> = {};
  for (const op of operations) {
    const path = openApiPath(op.path);
    const item = paths[path] ?? {};
    if (item[op.method] !== undefined) {
      throw new Error(`${op.method.toUpperCase()} ${op.path} is declared twice`);
    }
    item[op.method] = operationJson(op, collector.toJson);
    paths[path] = item;
  }
  const tags = [...new Set(operations.map((op) => op.tag))].map((name) => ({ name }));
  return {
    openapi: "3.1.0",
    jsonSchemaDialect: "https://spec.openapis.org/oas/3.1/dialect/base",
    info: {
      title: "Fleetback API",
      version: options.version,
      description: [
        "The JSON API of this Fleetback server. Call it with a user's API token",
        "(`Authorization: Bearer fbu_…`, made on the API tokens page) or the session cookie",
        "`POST /api/auth/login` sets; a POST, PUT or DELETE with a session cookie must send",
        "`Content-Type: application/json` and an `Origin` equal to the server's base URL. Every",
        "error answers an `ErrorBody`; a body past the size limit answers 413. The agents' WebSocket",
        "(`GET /api/agents/ws`) is not described here.",
      ].join(" "),
    },
    servers: [{ url: options.baseUrl }],
    tags,
    paths,
    components: {
      schemas: collector.components,
      securitySchemes: {
        session: { type: "apiKey", in: "cookie", name: "fleetback_session" },
        apiToken: { type: "http", scheme: "bearer", description: "A user's API token." },
        agentToken: { type: "http", scheme: "bearer", description: "An agent's token from enrolment." },
      },
    },
  };
}
