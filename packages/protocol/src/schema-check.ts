/**
 * @module schema-check
 * Compiled validation of one payload schema. Validators are compiled on first use of a schema and
 * cached, so importing the package costs nothing and a connection pays compilation once per type.
 * A top-level union (`command.run`, `config.update`, `tree.list.result`) is compiled per member so
 * that the member which matched can strip unknown properties, and a failure is explained in terms
 * of the member the sender most likely meant.
 */
import { IsUnion, type TSchema } from "typebox";
import { Compile, type Validator } from "typebox/compile";
import type { TConstError, TLocalizedValidationError } from "typebox/error";
import { createStripper, type Stripper } from "./strip.js";
import { explainErrors, type FieldProblem, isLiteralMismatch, joinPath } from "./validation-messages.js";

export interface Member {
  schema: TSchema;
  validator: Validator;
  strip: Stripper | undefined;
}

const compiledMembers = new WeakMap<TSchema, readonly Member[]>();

function membersOf(schema: TSchema): readonly Member[] {
  let members = compiledMembers.get(schema);
  if (members === undefined) {
    const parts: readonly TSchema[] = IsUnion(schema) ? schema.anyOf : [schema];
    members = parts.map((part) => ({ schema: part, validator: Compile(part), strip: createStripper(part) }));
    compiledMembers.set(schema, members);
  }
  return members;
}

/** The member of `schema` that accepts `value`, without touching `value`. */
export function matchSchema(schema: TSchema, value: unknown): Member | undefined {
  return membersOf(schema).find((member) => member.validator.Check(value));
}

/**
 * Removes properties the matched member does not know, in place: the tolerant reader, so that a
 * field added later as optional does not break older peers, and stray fields never travel on.
 */
export function stripUnknown(member: Member, value: unknown): unknown {
  return member.strip === undefined ? value : member.strip(value);
}

interface Attempt {
  member: Member;
  errors: TLocalizedValidationError[];
  literal: TConstError | undefined;
}

/** Why no member of `schema` accepts `value`, naming one field under `prefix`. */
export function explainMismatch(schema: TSchema, value: unknown, prefix: string): FieldProblem {
  const attempts: Attempt[] = membersOf(schema).map((member) => {
    const errors = member.validator.Errors(value);
    return { member, errors, literal: errors.find(isLiteralMismatch) };
  });
  const literals = attempts.map((attempt) => attempt.literal);
  const paths = new Set(literals.map((literal) => literal?.instancePath));
  if (attempts.length > 1 && paths.size === 1 && literals.every((literal) => literal !== undefined)) {
    // Every member refuses the same discriminator: the discriminator itself is wrong.
    const path = joinPath(prefix, literals[0]?.instancePath ?? "");
    const allowed = literals.map((literal) => JSON.stringify(literal?.params.allowedValue));
    return { path, message: `${path}: expected one of ${allowed.join(", ")}` };
  }
  // Members whose literal matched were meant; among those, the one with fewest errors, each
  // missing field counted as one (a caps frame with a bad cap is no clear frame missing two).
  const weight = (attempt: Attempt) =>
    attempt.errors.reduce(
      (sum, error) =>
        sum + (error.keyword === "required" ? Math.max(1, error.params.requiredProperties.length) : 1),
      0,
    );
  const ranked = [...attempts].sort(
    (a, b) => Number(a.literal !== undefined) - Number(b.literal !== undefined) || weight(a) - weight(b),
  );
  const best = ranked[0];
  if (best === undefined) {
    return { path: prefix, message: `${prefix}: invalid value` };
  }
  return explainErrors(best.member.schema, best.errors, prefix);
}
