/**
 * @module http/validate
 * Every request body, query and form is validated against a TypeBox schema before a handler
 * sees it. A failure is an `invalid` RequestError whose message names the first failing field
 * and whose details list every problem, so the JSON caller and the toast both say what to fix.
 */
import type { Context } from "hono";
import { type Static, type TObject, type TSchema, Type } from "typebox";
import { Compile, type Validator } from "typebox/compile";
import { RequestError } from "../errors.js";

export interface FieldProblem {
  field: string;
  message: string;
}

const validators = new WeakMap<TSchema, Validator>();

function validatorOf(schema: TSchema): Validator {
  let validator = validators.get(schema);
  if (!validator) {
    validator = Compile(schema);
    validators.set(schema, validator);
  }
  return validator;
}

function fieldName(instancePath: string, params: Record<string, unknown>): string {
  const extra = params.additionalProperties;
  if (Array.isArray(extra) && extra.length > 0) {
    return String(extra[0]);
  }
  const required = params.requiredProperties;
  if (Array.isArray(required) && required.length > 0) {
    const base = instancePath.replace(/^\//, "").replaceAll("/", ".");
    return base ? `${base}.${String(required[0])}` : String(required[0]);
  }
  return instancePathField(instancePath);
}

/** The field an error's instance path names: `a.b.0`, or the whole body. */
function instancePathField(instancePath: string): string {
  return instancePath.replace(/^\//, "").replaceAll("/", ".") || "body";
}

/** An empty literal (a form's "any") is said in words; listed, it would read as a stray comma. */
function oneOf(values: unknown[]): string {
  const named = values.filter((value) => value !== "");
  return `must be one of ${named.join(", ")}${named.length < values.length ? " (or empty)" : ""}`;
}

/** Turns validator errors into one problem per field, in a wording an operator can act on. */
export function describeProblems(schema: TSchema, value: unknown): FieldProblem[] {
  const byField = new Map<string, string>();
  const allowed = new Map<string, unknown[]>();
  for (const error of validatorOf(schema).Errors(value)) {
    const params = (error.params ?? {}) as Record<string, unknown>;
    const field = fieldName(error.instancePath, params);
    if (error.keyword === "boolean") {
      continue;
    }
    if (error.keyword === "const") {
      allowed.set(field, [...(allowed.get(field) ?? []), params.allowedValue]);
      continue;
    }
    if (error.keyword === "additionalProperties") {
      // A name the client made up is echoed only if it reads as one: a control character or a
      // kilobyte of it is said escaped and cut, at the object that holds it.
      if (/^[A-Za-z_][\w.-]{0,127}$/.test(field)) {
        byField.set(field, "is not a known field");
      } else {
        byField.set(
          instancePathField(error.instancePath),
          `has a field that is not known: ${JSON.stringify(field.slice(0, 64))}`,
        );
      }
      continue;
    }
    if (error.keyword === "required") {
      byField.set(field, "is required");
      continue;
    }
    if (error.keyword === "anyOf" && allowed.has(field)) {
      byField.set(field, oneOf(allowed.get(field) ?? []));
      continue;
    }
    if (!byField.has(field)) {
      byField.set(field, error.message);
    }
  }
  // A lone literal (no union around it) reports only its const failure.
  for (const [field, values] of allowed) {
    if (!byField.has(field)) {
      byField.set(field, `must be ${values.map((value) => JSON.stringify(value)).join(" or ")}`);
    }
  }
  return [...byField].map(([field, message]) => ({ field, message }));
}

/** An `invalid` error whose message names the first problem and whose details list them all. */
export function invalidFrom(problems: FieldProblem[]): RequestError {
  const first = problems[0] ?? { field: "body", message: "is invalid" };
  return new RequestError("invalid", `${first.field}: ${first.message}`, { details: problems });
}

export function validate<S extends TSchema>(schema: S, value: unknown): Static<S> {
  if (validatorOf(schema).Check(value)) {
    return value as Static<S>;
  }
  throw invalidFrom(describeProblems(schema, value));
}

/** No request schema nests deeper than a few levels; this leaves ample room. */
export const MAX_JSON_DEPTH = 32;

/**
 * How deeply `text` nests arrays and objects, stopping early past `limit`. One linear scan,
 * run before JSON.parse so a body of nothing but brackets costs microseconds, not a parse.
 */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c) {
        i++;
      } else if (ch === 0x22) {
        inString = false;
      }
    } else if (ch === 0x22) {
      inString = true;
    } else if (ch === 0x5b || ch === 0x7b) {
      depth++;
      if (depth > limit) {
        return true;
      }
    } else if (ch === 0x5d || ch === 0x7d) {
      depth--;
    }
  }
  return false;
}

/** Reads a JSON body; a body that is not JSON is itself a named validation failure. */
export async function readJson<S extends TSchema>(c: Context, schema: S): Promise<Static<S>> {
  return parseJsonBody(await c.req.text(), schema);
}

/** As readJson, for a route whose body is optional: an empty body is read as `{}`. */
export async function readOptionalJson<S extends TSchema>(c: Context, schema: S): Promise<Static<S>> {
  const text = await c.req.text();
  return parseJsonBody(text.trim() === "" ? "{}" : text, schema);
}

function parseJsonBody<S extends TSchema>(text: string, schema: S): Static<S> {
  // The body's size was bounded before authentication (http/request-limits).
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) {
    throw new RequestError("invalid", `body: nests deeper than ${MAX_JSON_DEPTH} levels`);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new RequestError("invalid", "body: must be a JSON object");
  }
  return validate(schema, body);
}

/** A form with no field but its CSRF token, whose post is the whole request (resolve, run now). */
export const EmptyForm = Type.Object({}, { additionalProperties: false });

/** Reads a urlencoded or multipart form; repeated fields become arrays, files are refused. */
export async function readForm<S extends TSchema>(c: Context, schema: S): Promise<Static<S>> {
  const form = await c.req.parseBody({ all: true });
  const value: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(form)) {
    if (key === "_csrf") {
      continue;
    }
    const items = Array.isArray(raw) ? raw : [raw];
    if (items.some((item) => typeof item !== "string")) {
      throw new RequestError("invalid", `${key}: files are not accepted here`);
    }
    value[key] = Array.isArray(raw) ? items : raw;
  }
  return validate(schema, value);
}

/**
 * A query string holds only text; a parameter the schema types as an integer (page, limit) is
 * read as one when it is written as one, so the document can say `integer` and the handler gets a
 * number. Anything else stays text and fails the schema under its own name.
 */
export function coerceQuery(schema: TSchema, raw: Record<string, string>): Record<string, unknown> {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const value: Record<string, unknown> = { ...raw };
  for (const [key, text] of Object.entries(raw)) {
    if (properties[key]?.type === "integer" && /^-?[0-9]{1,15}$/.test(text)) {
      value[key] = Number(text);
    }
  }
  return value;
}

export function validateQuery<S extends TSchema>(schema: S, raw: Record<string, string>): Static<S> {
  return validate(schema, coerceQuery(schema, raw));
}

/** The query parameters `schema` names, as sent: what a GET form shows again, valid or not. */
export function sentQuery(c: Context, schema: TObject): Record<string, string> {
  return Object.fromEntries(Object.entries(c.req.query()).filter(([key]) => key in schema.properties));
}

export function readQuery<S extends TSchema>(c: Context, schema: S): Static<S> {
  return validateQuery(schema, c.req.query());
}
