/**
 * @module validation-messages
 * Turns TypeBox validation errors into one short sentence that names the failing field, e.g.
 * "payload/protocol_version: expected integer". Peers log these, so they must read well and must
 * never echo the offending value (it may be a credential or megabytes long).
 */
import type { TConstError, TLocalizedValidationError } from "typebox/error";

export interface FieldProblem {
  path: string;
  message: string;
}

type SchemaNode = Readonly<Record<string, unknown>>;

function isNode(value: unknown): value is SchemaNode {
  return typeof value === "object" && value !== null;
}

/** Follows a schemaPath such as "#/properties/caps/properties/bandwidth_up_kbps/anyOf/0". */
function schemaAt(root: unknown, schemaPath: string): SchemaNode | undefined {
  let node: unknown = root;
  for (const part of schemaPath.split("/").slice(1)) {
    if (!isNode(node) || !Object.hasOwn(node, part)) {
      return undefined;
    }
    node = node[part];
  }
  return isNode(node) ? node : undefined;
}

function quote(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

/** A schema in the reader's terms: its description, else its literal values, else its JSON type. */
export function describeSchema(schema: SchemaNode | undefined): string {
  if (schema === undefined) {
    return "a valid value";
  }
  if (typeof schema.description === "string") {
    return schema.description;
  }
  if (Object.hasOwn(schema, "const")) {
    return quote(schema.const);
  }
  if (Array.isArray(schema.enum)) {
    return `one of ${schema.enum.map(quote).join(", ")}`;
  }
  if (Array.isArray(schema.anyOf)) {
    return schema.anyOf.map((member) => describeSchema(isNode(member) ? member : undefined)).join(" or ");
  }
  if (isNode(schema.not) && Object.keys(schema.not).length === 0) {
    return "nothing";
  }
  const type = typeof schema.type === "string" ? schema.type : "a valid value";
  const bounds: string[] = [];
  if (typeof schema.minimum === "number") {
    bounds.push(`>= ${schema.minimum}`);
  }
  if (typeof schema.maximum === "number") {
    bounds.push(`<= ${schema.maximum}`);
  }
  return bounds.length === 0 ? type : `${type} ${bounds.join(" and ")}`;
}

function explainKeyword(error: TLocalizedValidationError, schema: SchemaNode | undefined): string {
  switch (error.keyword) {
    case "required":
      return "required";
    case "not":
      return "must be absent";
    case "minLength":
      return error.params.limit === 1
        ? "must not be empty"
        : `expected at least ${error.params.limit} characters`;
    case "minItems":
      return `expected at least ${error.params.limit} item${error.params.limit === 1 ? "" : "s"}`;
    case "maxLength":
    case "maxItems":
      return `expected at most ${error.params.limit}`;
    case "const":
      return `expected ${quote(error.params.allowedValue)}`;
    case "enum":
      return `expected one of ${error.params.allowedValues.map(quote).join(", ")}`;
    case "type":
    case "pattern":
    case "format":
    case "anyOf":
    case "minimum":
    case "maximum":
      return `expected ${describeSchema(schema)}`;
    default:
      return error.message;
  }
}

/** "payload" + "/caps/bandwidth_up_kbps"; at the root of a frame the pointer stands alone: "id". */
export function joinPath(prefix: string, pointer: string): string {
  return prefix === "" ? pointer.slice(1) : `${prefix}${pointer}`;
}

/**
 * Picks the first error, but reports the outermost union that contains it: "expected integer
 * >= 1 or null" says more than the first member's "expected integer >= 1".
 */
export function explainErrors(
  root: unknown,
  errors: readonly TLocalizedValidationError[],
  prefix: string,
): FieldProblem {
  const first = errors[0];
  if (first === undefined) {
    return { path: prefix, message: `${prefix}: invalid value` };
  }
  let chosen = first;
  for (const error of errors) {
    const contains = first.schemaPath.startsWith(`${error.schemaPath}/`);
    if (error.keyword === "anyOf" && contains && error.schemaPath.length < chosen.schemaPath.length) {
      chosen = error;
    }
  }
  let path = joinPath(prefix, chosen.instancePath);
  if (chosen.keyword === "required") {
    const missing = chosen.params.requiredProperties[0];
    path = missing === undefined ? path : joinPath(path, `/${missing}`);
  }
  const text = explainKeyword(chosen, schemaAt(root, chosen.schemaPath));
  return { path, message: `${path}: ${text}` };
}

/** True when the error sits on a literal: in a union of per-kind objects, that variant was not meant. */
export function isLiteralMismatch(
  error: TLocalizedValidationError,
): error is TConstError & { message: string } {
  return error.keyword === "const";
}
