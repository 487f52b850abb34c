/**
 * @module openapi/operation
 * What each /api route declares for the OpenAPI document: its method and path (as Hono spells
 * them), who may call it, and the TypeBox schemas of its query, body and answers. The query and
 * body schemas are the very constants the route validates with (imported, never copied); the
 * answer schemas describe what the route's *Json view returns, and openapi.test.ts checks real
 * answers against them. A type-only leaf: the document builder and the page read it.
 */
import type { TObject, TSchema } from "typebox";
import type { Role } from "../http/app-env.js";

/** A signed-in role (session or API token), nobody at all, or an agent's own bearer token. */
export type ApiAccess = Role | "public" | "agent";

export type ApiMethod = "get" | "post" | "put" | "patch" | "delete";

export type SuccessStatus = 200 | 201 | 202 | 204;
/** Statuses of ErrorBody answers (errors.ts); the builder adds the ones every route can give. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 410 | 429 | 502 | 503 | 504;

export interface ApiAnswer {
  description: string;
  /** Absent: no body (204). */
  schema?: TSchema;
  /** Default application/json. */
  contentType?: string;
}

export interface ApiOperation {
  /** Unique; what client generators name the call. */
  id: string;
  method: ApiMethod;
  /** Hono's pattern, `:name` for a path parameter, exactly as the route table holds it. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  access: ApiAccess;
  /** Each property is one query parameter. */
  query?: TObject;
  body?: TSchema;
  /** The route reads an empty body as `{}` (readOptionalJson). */
  bodyOptional?: boolean;
  /** Descriptions of the path parameters, by name. */
  params?: Record<string, string>;
  responses: Partial<Record<SuccessStatus, ApiAnswer>>;
  /** Errors beyond the ones the builder derives (400 for input, 401/403 for a role, 404 for an id). */
  errors?: Partial<Record<ErrorStatus, string>>;
}
