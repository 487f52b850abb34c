/**
 * @module testing/documented-answers
 * Holds a real answer of the app to the OpenAPI document: its status must be one the operation
 * documents, and its body must match that status's schema (ErrorBody for an error). The check is
 * stricter than the document: an object may carry no field the schema leaves out, so a field
 * added to a *Json view without its schema fails here instead of going undocumented.
 */
import type { TSchema } from "typebox";
import { Compile, type Validator } from "typebox/compile";
import { API_OPERATIONS } from "../api-operations.js";
import { ErrorBody } from "../errors.js";
import { buildOpenApiDocument, openApiPath } from "../openapi/document.js";
import type { JsonRecord } from "../openapi/json-schema.js";
import type { ApiOperation } from "../openapi/operation.js";

export interface AnswerChecker {
  /** Reads the answer's body, checks it and returns it (parsed JSON, or text for other types). */
  check(method: string, url: string, res: Response): Promise<unknown>;
  /** Operation id → statuses seen and checked. */
  readonly seen: Map<string, Set<number>>;
}

/** A copy of `schema` in which every object with properties refuses properties it does not name. */
function closed(schema: TSchema): unknown {
  const copy: unknown = JSON.parse(JSON.stringify(schema));
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    if (node !== null && typeof node === "object") {
      const record = node as Record<string, unknown>;
      if (record.properties !== undefined && record.additionalProperties === undefined) {
        record.additionalProperties = false;
      }
      Object.values(record).forEach(visit);
    }
  };
  visit(copy);
  return copy;
}

function matcher(op: ApiOperation): RegExp {
  const pattern = op.path
    .split("/")
    .map((part) => (part.startsWith(":") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${pattern}$`);
}

export function createAnswerChecker(operations: readonly ApiOperation[] = API_OPERATIONS): AnswerChecker {
  const document = buildOpenApiDocument(operations, { baseUrl: "http://checker.invalid", version: "test" });
  const paths = document.paths as JsonRecord;
  const validators = new WeakMap<TSchema, Validator>();
  const validatorOf = (schema: TSchema) => {
    let validator = validators.get(schema);
    if (!validator) {
      validator = Compile(closed(schema) as TSchema);
      validators.set(schema, validator);
    }
    return validator;
  };
  // Literal paths first, so /api/pending-hosts/reject is not read as /api/pending-hosts/:id.
  const ranked = [...operations]
    .map((op) => ({ op, regex: matcher(op), params: op.path.split(":").length }))
    .sort((a, b) => a.params - b.params);
  const seen = new Map<string, Set<number>>();

  function find(method: string, path: string): ApiOperation {
    const found = ranked.find(({ op, regex }) => op.method === method.toLowerCase() && regex.test(path));
    if (!found) {
      throw new Error(`${method} ${path} is no documented operation`);
    }
    return found.op;
  }

  function documentedStatuses(op: ApiOperation): string[] {
    const item = paths[openApiPath(op.path)] as JsonRecord;
    const operation = item[op.method] as JsonRecord;
    return Object.keys(operation.responses as JsonRecord);
  }

  return {
    seen,
    async check(method, url, res) {
      const path = new URL(url, "http://checker.invalid").pathname;
      const op = find(method, path);
      const where = `${method} ${path} (${op.id}) answered ${res.status}`;
      if (!documentedStatuses(op).includes(String(res.status))) {
        throw new Error(`${where}, which its operation does not document: ${await res.text()}`);
      }
      const answer = op.responses[res.status as keyof ApiOperation["responses"]];
      const schema = answer ? answer.schema : ErrorBody;
      const contentType = answer?.contentType ?? "application/json";
      const text = await res.text();
      let body: unknown = text;
      if (schema === undefined) {
        if (text !== "") {
          throw new Error(`${where} with a body, but its operation documents none: ${text}`);
        }
      } else {
        const got = res.headers.get("Content-Type") ?? "";
        if (!got.startsWith(contentType)) {
          throw new Error(`${where} as ${got}, not the documented ${contentType}`);
        }
        body = contentType === "application/json" ? JSON.parse(text) : text;
        const validator = validatorOf(schema);
        if (!validator.Check(body)) {
          const problems = [...validator.Errors(body)]
            .slice(0, 10)
            .map((error) => `${error.instancePath || "/"} ${error.message} ${JSON.stringify(error.params)}`);
          throw new Error(
            `${where} with a body its schema refuses:\n  ${problems.join("\n  ")}\n${text.slice(0, 2000)}`,
          );
        }
      }
      const statuses = seen.get(op.id) ?? new Set<number>();
      statuses.add(res.status);
      seen.set(op.id, statuses);
      return body;
    },
  };
}
