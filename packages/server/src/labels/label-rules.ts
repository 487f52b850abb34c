/**
 * @module labels/label-rules
 * What a host label may be (issue 37), as Kubernetes has it, so selectors and policies written for
 * one read the same here: a key is an optional DNS-subdomain prefix and `/`, then a name of at most
 * 63 characters of [A-Za-z0-9._-] that starts and ends alphanumeric; a value is empty or such a
 * name. At most 32 labels per host, so a host row and a policy match stay small. Every problem
 * names the field and the label it is about.
 */
import { Type } from "typebox";
import { RequestError } from "../errors.js";
import type { FieldProblem } from "../http/validate.js";

export const LABELS_MAX = 32;
export const LABEL_NAME_MAX_LENGTH = 63;
export const LABEL_PREFIX_MAX_LENGTH = 253;
export const LABEL_KEY_MAX_LENGTH = LABEL_PREFIX_MAX_LENGTH + 1 + LABEL_NAME_MAX_LENGTH;

export type Labels = Record<string, string>;

const NAME = /^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/;
const DNS_LABEL = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

/** The request shape; the rules below say what TypeBox cannot (and name the label). */
export const LabelsSchema = Type.Record(
  Type.String({ maxLength: LABEL_KEY_MAX_LENGTH }),
  Type.String({ maxLength: LABEL_NAME_MAX_LENGTH }),
  { maxProperties: LABELS_MAX },
);
export const LabelKeysSchema = Type.Array(Type.String({ minLength: 1, maxLength: LABEL_KEY_MAX_LENGTH }), {
  maxItems: LABELS_MAX,
});

export function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf("/");
  const name = slash === -1 ? key : key.slice(slash + 1);
  if (slash !== -1) {
    const prefix = key.slice(0, slash);
    if (prefix === "" || prefix.length > LABEL_PREFIX_MAX_LENGTH) {
      return `the prefix of ${JSON.stringify(key)} must be 1 to ${LABEL_PREFIX_MAX_LENGTH} characters`;
    }
    if (!prefix.split(".").every((part) => DNS_LABEL.test(part))) {
      return `the prefix of ${JSON.stringify(key)} must be a lower-case DNS name (like example.com)`;
    }
  }
  if (name === "" || name.length > LABEL_NAME_MAX_LENGTH) {
    return `the key ${JSON.stringify(key)} must have a name of 1 to ${LABEL_NAME_MAX_LENGTH} characters`;
  }
  if (!NAME.test(name)) {
    return `the key ${JSON.stringify(key)} may hold only letters, digits, ".", "_" and "-", and must start and end with a letter or digit`;
  }
  return undefined;
}

export function labelValueProblem(key: string, value: string): string | undefined {
  if (value === "") {
    return undefined;
  }
  if (value.length > LABEL_NAME_MAX_LENGTH) {
    return `the value of ${JSON.stringify(key)} must be at most ${LABEL_NAME_MAX_LENGTH} characters`;
  }
  if (!NAME.test(value)) {
    return `the value ${JSON.stringify(value)} of ${JSON.stringify(key)} may hold only letters, digits, ".", "_" and "-", and must start and end with a letter or digit`;
  }
  return undefined;
}

/** Every problem of a label set, each under `field.key` (or `field` for the count). */
export function labelProblems(labels: Labels, field: string): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const keys = Object.keys(labels);
  if (keys.length > LABELS_MAX) {
    problems.push({ field, message: `has ${keys.length} labels; a host has at most ${LABELS_MAX}` });
  }
  for (const key of keys) {
    const message = labelKeyProblem(key) ?? labelValueProblem(key, labels[key] ?? "");
    if (message) {
      problems.push({ field: `${field}.${key}`, message });
    }
  }
  return problems;
}

export function invalidLabels(problems: FieldProblem[]): RequestError {
  const first = problems[0] ?? { field: "labels", message: "is invalid" };
  return new RequestError("invalid", `${first.field}: ${first.message}`, { details: problems });
}

/** The labels as given, or an `invalid` error naming the field and the first bad label. */
export function checkLabels(labels: Labels, field: string): Labels {
  const problems = labelProblems(labels, field);
  if (problems.length > 0) {
    throw invalidLabels(problems);
  }
  return labels;
}

export function checkLabelKeys(keys: readonly string[], field: string): string[] {
  const problems = keys.flatMap((key, index) => {
    const message = labelKeyProblem(key);
    return message ? [{ field: `${field}.${index}`, message }] : [];
  });
  if (problems.length > 0) {
    throw invalidLabels(problems);
  }
  return [...keys];
}

/**
 * `env=prod, role=db` (a form field, install.sh's --label) as labels; a key given twice is a
 * mistake, not "the last one wins". Checked against the rules as a whole.
 */
export function parseLabelText(text: string, field: string): Labels {
  const labels: Labels = {};
  const problems: FieldProblem[] = [];
  for (const part of text.split(/[,\n]/)) {
    const item = part.trim();
    if (item === "") {
      continue;
    }
    const equals = item.indexOf("=");
    if (equals === -1) {
      problems.push({ field, message: `${JSON.stringify(item)} is not key=value` });
      continue;
    }
    const key = item.slice(0, equals).trim();
    if (Object.hasOwn(labels, key)) {
      problems.push({ field, message: `the key ${JSON.stringify(key)} is given twice` });
      continue;
    }
    labels[key] = item.slice(equals + 1).trim();
  }
  const all = [...problems, ...labelProblems(labels, field)];
  if (all.length > 0) {
    throw invalidLabels(all.map((problem) => ({ field, message: problem.message })));
  }
  return labels;
}

/**
 * Keys typed in a form (`tier, old-key` or one a line), each once; what they may be is checked
 * where they are used (host-labels' checkEdit), so the form and the API refuse alike.
 */
export function parseLabelKeyText(text: string): string[] {
  return [
    ...new Set(
      text
        .split(/[,\n]/)
        .map((key) => key.trim())
        .filter((key) => key !== ""),
    ),
  ];
}

/** The editable text form of labels, sorted by key: what parseLabelText reads back. */
export function formatLabels(labels: Labels): string {
  return sortedLabels(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(", ");
}

export function sortedLabels(labels: Labels): Array<[string, string]> {
  return Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Labels stored by an older build or read from jsonb: only string pairs survive. */
export function labelsOf(value: unknown): Labels {
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    return {};
  }
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).filter(
      (entry): entry is [string, string] => typeof entry[1] === "string",
    ),
  );
}
