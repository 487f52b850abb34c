/**
 * @module labels/selector
 * Kubernetes-style label selectors (issue 37): `k=v` (or `k==v`), `k!=v`, `k in (a,b)`,
 * `k notin (a,b)`, `k` (has the key), `!k` (lacks it); commas join requirements with AND. As in
 * Kubernetes, `!=` and `notin` also match hosts without the key. The empty selector matches every
 * host. Parse errors name the 1-based position and the token, so a typo is found in a long one.
 * Evaluated in memory (matchesSelector, for the policy engine) and in SQL (selector-sql.ts, for
 * lists and bulk actions); a property test holds that both agree.
 */
import { RequestError } from "../errors.js";
import { type Labels, labelKeyProblem, labelValueProblem } from "./label-rules.js";

export const SELECTOR_MAX_LENGTH = 4096;

export type Requirement =
  | { key: string; op: "eq" | "ne"; value: string }
  | { key: string; op: "in" | "notin"; values: string[] }
  | { key: string; op: "exists" | "notexists" };

export type Selector = Requirement[];

type TokenKind = "word" | "=" | "==" | "!=" | "!" | "," | "(" | ")" | "end";
interface Token {
  kind: TokenKind;
  text: string;
  /** 1-based character position in the selector. */
  position: number;
}

export class SelectorError extends Error {
  override readonly name = "SelectorError";
  constructor(
    readonly position: number,
    readonly token: string,
    readonly problem: string,
  ) {
    super(
      `at position ${position} (${token === "" ? "end of selector" : JSON.stringify(token)}): ${problem}`,
    );
  }
}

const WORD = /[A-Za-z0-9._/-]/;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let index = 0;
  while (index < text.length) {
    const ch = text[index] ?? "";
    if (/\s/.test(ch)) {
      index += 1;
      continue;
    }
    const two = text.slice(index, index + 2);
    if (two === "==" || two === "!=") {
      tokens.push({ kind: two, text: two, position: index + 1 });
      index += 2;
      continue;
    }
    if (ch === "=" || ch === "!" || ch === "," || ch === "(" || ch === ")") {
      tokens.push({ kind: ch, text: ch, position: index + 1 });
      index += 1;
      continue;
    }
    if (!WORD.test(ch)) {
      throw new SelectorError(index + 1, ch, "is not allowed in a selector");
    }
    const start = index;
    while (index < text.length && WORD.test(text[index] ?? "")) {
      index += 1;
    }
    tokens.push({ kind: "word", text: text.slice(start, index), position: start + 1 });
  }
  tokens.push({ kind: "end", text: "", position: text.length + 1 });
  return tokens;
}

class Parser {
  private index = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.index] ?? { kind: "end", text: "", position: 0 };
  }

  private next(): Token {
    const token = this.peek();
    this.index += 1;
    return token;
  }

  private expect(kind: TokenKind, what: string): Token {
    const token = this.next();
    if (token.kind !== kind) {
      throw new SelectorError(token.position, token.text, `expected ${what}`);
    }
    return token;
  }

  private key(): string {
    const token = this.expect("word", "a label key");
    const problem = labelKeyProblem(token.text);
    if (problem) {
      throw new SelectorError(token.position, token.text, problem);
    }
    return token.text;
  }

  private value(key: string): string {
    const token = this.peek();
    // `k=` and `k in (a,)` name the empty value, as Kubernetes reads them.
    if (token.kind !== "word") {
      return "";
    }
    this.index += 1;
    const problem = labelValueProblem(key, token.text);
    if (problem) {
      throw new SelectorError(token.position, token.text, problem);
    }
    return token.text;
  }

  private requirement(): Requirement {
    if (this.peek().kind === "!") {
      this.next();
      return { key: this.key(), op: "notexists" };
    }
    const key = this.key();
    const token = this.peek();
    if (token.kind === "=" || token.kind === "==" || token.kind === "!=") {
      this.next();
      return { key, op: token.kind === "!=" ? "ne" : "eq", value: this.value(key) };
    }
    if (token.kind === "word" && (token.text === "in" || token.text === "notin")) {
      this.next();
      this.expect("(", `"(" after ${token.text}`);
      const values = [this.value(key)];
      while (this.peek().kind === ",") {
        this.next();
        values.push(this.value(key));
      }
      this.expect(")", `"," or ")" in the value list`);
      return { key, op: token.text, values: [...new Set(values)] };
    }
    if (token.kind === "," || token.kind === "end") {
      return { key, op: "exists" };
    }
    throw new SelectorError(
      token.position,
      token.text,
      `expected =, !=, in, notin, "," or the end after ${key}`,
    );
  }

  parse(): Selector {
    const requirements: Selector = [];
    if (this.peek().kind === "end") {
      return requirements;
    }
    for (;;) {
      requirements.push(this.requirement());
      const token = this.next();
      if (token.kind === "end") {
        return requirements;
      }
      if (token.kind !== ",") {
        throw new SelectorError(token.position, token.text, 'expected "," or the end');
      }
    }
  }
}

/** Parses a selector; throws SelectorError naming the position and the token. */
export function parseSelector(text: string): Selector {
  if (text.length > SELECTOR_MAX_LENGTH) {
    throw new SelectorError(
      SELECTOR_MAX_LENGTH + 1,
      "",
      `a selector is at most ${SELECTOR_MAX_LENGTH} characters`,
    );
  }
  return new Parser(tokenize(text)).parse();
}

/** parseSelector for a request: a parse error becomes an `invalid` error on `field`. */
export function selectorFromRequest(text: string, field: string): Selector {
  try {
    return parseSelector(text);
  } catch (error) {
    if (error instanceof SelectorError) {
      const message = error.message;
      throw new RequestError("invalid", `${field}: ${message}`, { details: [{ field, message }] });
    }
    throw error;
  }
}

function matchesRequirement(requirement: Requirement, labels: Labels): boolean {
  const has = Object.hasOwn(labels, requirement.key);
  const value = has ? labels[requirement.key] : undefined;
  switch (requirement.op) {
    case "eq":
      return value === requirement.value;
    case "ne":
      return value !== requirement.value;
    case "in":
      return value !== undefined && requirement.values.includes(value);
    case "notin":
      return value === undefined || !requirement.values.includes(value);
    case "exists":
      return has;
    case "notexists":
      return !has;
  }
}

export function matchesSelector(selector: Selector, labels: Labels): boolean {
  return selector.every((requirement) => matchesRequirement(requirement, labels));
}

/** The canonical text of a parsed selector (what audit entries and links carry). */
function formatRequirement(requirement: Requirement): string {
  switch (requirement.op) {
    case "eq":
      return `${requirement.key}=${requirement.value}`;
    case "ne":
      return `${requirement.key}!=${requirement.value}`;
    case "in":
    case "notin":
      return `${requirement.key} ${requirement.op} (${requirement.values.join(",")})`;
    case "exists":
      return requirement.key;
    case "notexists":
      return `!${requirement.key}`;
  }
}

export function formatSelector(selector: Selector): string {
  return selector.map(formatRequirement).join(",");
}
