/**
 * @module openapi/json-schema
 * TypeBox schemas are JSON Schema already; what they carry beyond it are non-enumerable `~kind`
 * and `~optional` markers, which a copy of the enumerable keys leaves behind. A schema with a
 * `$id` becomes a component of the document and each use of it a `$ref`, so the document names
 * the shapes it repeats (Job, Host, ErrorBody) instead of inlining them everywhere.
 */
import { isDeepStrictEqual } from "node:util";
import type { TSchema } from "typebox";

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonRecord = { [key: string]: JsonValue };

export interface SchemaCollector {
  /** The schema as plain JSON, named schemas inside it replaced by `$ref`s. */
  toJson(schema: TSchema): JsonValue;
  /** Every named schema met so far, by name. */
  readonly components: Record<string, JsonValue>;
}

export const COMPONENT_PREFIX = "#/components/schemas/";

export function createSchemaCollector(): SchemaCollector {
  const components: Record<string, JsonValue> = {};

  function register(name: string, node: Record<string, unknown>): void {
    const body = copy(node, true);
    const known = components[name];
    if (known === undefined) {
      components[name] = body;
    } else if (!isDeepStrictEqual(known, body)) {
      throw new Error(`two different schemas are both named ${name}`);
    }
  }

  function copy(node: unknown, isComponentBody: boolean): JsonValue {
    if (Array.isArray(node)) {
      return node.map((item) => copy(item, false));
    }
    if (node === null || typeof node !== "object") {
      if (node === undefined || typeof node === "function" || typeof node === "symbol") {
        throw new Error(`a schema holds a value JSON cannot carry: ${String(node)}`);
      }
      return node as JsonValue;
    }
    const record = node as Record<string, unknown>;
    const name = record.$id;
    if (typeof name === "string" && !isComponentBody) {
      register(name, record);
      return { $ref: `${COMPONENT_PREFIX}${name}` };
    }
    const out: Record<string, JsonValue> = {};
    // Object.keys: own enumerable string keys only, so TypeBox's markers stay behind.
    for (const key of Object.keys(record)) {
      if (key === "$id" || key.startsWith("~")) {
        continue;
      }
      out[key] = copy(record[key], false);
    }
    return out;
  }

  return { toJson: (schema) => copy(schema, false), components };
}
