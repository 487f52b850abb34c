/**
 * @module http/form-errors
 * What a refused form says about its own fields. A validation error names its field either in
 * its details (TypeBox: every problem) or at the head of its message ("field: what is wrong");
 * both reach the form, so the message sits at the input the operator has to change, not in a
 * toast away from it. API field paths (`repository.url`) are the form's names (`repository_url`).
 */
import { isRequestError } from "../errors.js";
import type { FieldProblem } from "./validate.js";

const NAMED = /^([A-Za-z_][\w.]*): ([\s\S]+)$/;

function isProblem(value: unknown): value is FieldProblem {
  const item = value as Partial<FieldProblem> | null;
  return typeof item?.field === "string" && typeof item.message === "string";
}

/**
 * The field problems of a refusal that names its field (invalid input, or a conflict such as a
 * username already taken); none for any other error or an unnamed one. The page decides whether
 * a named field is one of its inputs.
 */
export function fieldProblemsOf(err: unknown): FieldProblem[] {
  if (!isRequestError(err) || (err.code !== "invalid" && err.code !== "conflict")) {
    return [];
  }
  if (Array.isArray(err.details) && err.details.length > 0 && err.details.every(isProblem)) {
    return err.details.filter((problem) => problem.field !== "body");
  }
  const named = NAMED.exec(err.message);
  return named?.[1] && named[1] !== "body" ? [{ field: named[1], message: named[2] ?? "" }] : [];
}

/** The problems keyed by the form's input name, for a template to show at each input. */
export function formFieldErrors(problems: FieldProblem[]): Record<string, string> {
  const byName: Record<string, string> = {};
  for (const problem of problems) {
    byName[problem.field.replaceAll(".", "_")] ??= problem.message;
  }
  return byName;
}

/**
 * A GET form's errors from what building its page threw, keyed by input name; `err` is thrown
 * again when it names no field, for the error handler to answer.
 */
export function formErrorsOrThrow(err: unknown): Record<string, string> {
  const problems = fieldProblemsOf(err);
  if (problems.length === 0) {
    throw err;
  }
  return formFieldErrors(problems);
}
