/**
 * @module http/refused-form
 * A plain form post (no script, or a form without htmx) that the server refuses for a named field
 * comes back as the page it was sent from, with what was typed still in every input and the
 * message at the input it is about (issue 35). One mechanism for every form: the page is rendered
 * again by its own GET route (the Referer's path, same session), and its form with the posted
 * action is marked here. Where that fails (no page, or no such input) the caller keeps its
 * error page, so nothing is ever hidden.
 */
import type { Context } from "hono";
import type { ErrorStatus } from "../errors.js";
import type { FieldProblem } from "./validate.js";

export interface RefusedForm {
  action: string;
  values: Record<string, string | string[]>;
  problems: FieldProblem[];
}

const FORM_OPEN = /<form\b[^>]*>/gi;
const FIELD = /<(input|textarea|select)\b([^>]*)>/gi;
const NOT_TYPED = new Set(["hidden", "submit", "button", "file", "reset", "image"]);

/** Each character attributes and text must not hold raw, with its entity; "&" first. */
const ENTITIES = [
  ["&", "&amp;"],
  ["<", "&lt;"],
  [">", "&gt;"],
  ['"', "&quot;"],
  ["'", "&#39;"],
] as const;

function escapeHtml(text: string): string {
  return ENTITIES.reduce((out, [char, entity]) => out.replaceAll(char, entity), text);
}

/** The other way round, so "&amp;" is undone last and "&amp;lt;" stays "&lt;". */
function unescapeHtml(text: string): string {
  return ENTITIES.reduceRight((out, [char, entity]) => out.replaceAll(entity, char), text);
}

function attr(attrs: string, name: string): string | undefined {
  const match = new RegExp(`\\s${name}="([^"]*)"`, "i").exec(attrs);
  return match?.[1] === undefined ? undefined : unescapeHtml(match[1]);
}

function withAttr(attrs: string, name: string, value: string | undefined): string {
  const without = attrs.replace(new RegExp(`\\s${name}(="[^"]*")?(?=[\\s/]|$)`, "i"), "");
  return value === undefined ? without : `${without} ${name}="${escapeHtml(value)}"`;
}

function valuesOf(values: RefusedForm["values"], name: string): string[] | undefined {
  const value = values[name];
  return value === undefined ? undefined : Array.isArray(value) ? value : [value];
}

/** The text of the label an input sits in, for the summary's link; the name when there is none. */
function labelBefore(html: string, at: number, name: string): string {
  const open = html.lastIndexOf("<label", at);
  if (open >= 0 && html.lastIndexOf("</label>", at) < open) {
    const text = html
      .slice(html.indexOf(">", open) + 1, at)
      .replace(/<[^>]*>/g, " ")
      .replace(/\s+/g, " ")
      .trim();
    if (text) {
      return unescapeHtml(text);
    }
  }
  return name.replaceAll("_", " ");
}

interface Marked {
  html: string;
  summary: { id: string; label: string; message: string }[];
}

/** One form's inner HTML with the typed values put back and each problem at its input. */
function markFields(inner: string, refused: RefusedForm, errors: Record<string, string>): Marked {
  const summary: Marked["summary"] = [];
  let out = "";
  let last = 0;
  for (const match of inner.matchAll(FIELD)) {
    const [tag, kind = "", rawAttrs = ""] = match;
    const start = match.index ?? 0;
    const selfAttrs = rawAttrs.replace(/\/$/, "");
    const name = attr(selfAttrs, "name");
    const type = (attr(selfAttrs, "type") ?? "text").toLowerCase();
    if (!name || (kind.toLowerCase() === "input" && NOT_TYPED.has(type))) {
      continue;
    }
    const closing = kind.toLowerCase() === "input" ? "" : `</${kind.toLowerCase()}>`;
    const end = closing ? inner.indexOf(closing, start + tag.length) : start + tag.length;
    if (end < 0) {
      continue;
    }
    let body = closing ? inner.slice(start + tag.length, end) : "";
    let attrs = selfAttrs;
    const typed = valuesOf(refused.values, name);
    const kindLower = kind.toLowerCase();
    if (kindLower === "input" && (type === "checkbox" || type === "radio")) {
      attrs = withAttr(attrs, "checked", undefined);
      if (typed?.includes(attr(attrs, "value") ?? "on")) {
        attrs = `${attrs} checked`;
      }
    } else if (kindLower === "input" && typed !== undefined && type !== "password") {
      // Secrets are not sent back: the operator types them again rather than find them in a page.
      attrs = withAttr(attrs, "value", typed[0] ?? "");
    } else if (kindLower === "textarea" && typed !== undefined) {
      body = escapeHtml(typed[0] ?? "");
    } else if (kindLower === "select" && typed !== undefined) {
      body = body.replace(/<option\b([^>]*)>/gi, (_option, optionAttrs: string) => {
        const plain = withAttr(optionAttrs, "selected", undefined);
        return typed.includes(attr(plain, "value") ?? "") ? `<option${plain} selected>` : `<option${plain}>`;
      });
    }
    const message = errors[name];
    let after = "";
    if (
      message !== undefined &&
      !summary.some((entry) => entry.id === (attr(attrs, "id") ?? `field-${name}`))
    ) {
      const id = attr(attrs, "id") ?? `field-${name}`;
      attrs = withAttr(
        withAttr(withAttr(attrs, "id", id), "aria-invalid", "true"),
        "aria-describedby",
        `error-${name}`,
      );
      after = `<small class="field-error" id="error-${escapeHtml(name)}" data-testid="field-error-${escapeHtml(name)}">${escapeHtml(message)}</small>`;
      summary.push({ id, label: labelBefore(inner, start, name), message });
    }
    const rebuilt = closing ? `<${kind}${attrs}>${body}${closing}` : `<${kind}${attrs}>`;
    out += inner.slice(last, start) + rebuilt + after;
    last = closing ? end + closing.length : start + tag.length;
  }
  return { html: out + inner.slice(last), summary };
}

function summaryHtml(summary: Marked["summary"]): string {
  const items = summary
    .map(
      (entry) =>
        `<li><a href="#${escapeHtml(entry.id)}">${escapeHtml(entry.label)}</a>: ${escapeHtml(entry.message)}</li>`,
    )
    .join("");
  const which = summary.length === 1 ? "this" : "these";
  return `<div class="form-error-summary" role="alert" tabindex="-1" data-testid="form-error-summary"><p><strong>Not saved; fix ${which} first:</strong></p><ul>${items}</ul></div>`;
}

const DETAILS_TAG = /<(\/?)details\b[^>]*>/gi;

/**
 * The page with every `<details>` around the given positions open: a refused form folded away in
 * one (a "change labels" section), or an input in a folded part of its form (more rings), would
 * hide its own message.
 */
function openDetailsAround(html: string, positions: number[]): string {
  const opens = new Map<number, string>();
  for (const at of positions) {
    const enclosing: Array<{ index: number; tag: string }> = [];
    for (const match of html.slice(0, at).matchAll(DETAILS_TAG)) {
      if (match[1] === "/") {
        enclosing.pop();
      } else {
        enclosing.push({ index: match.index ?? 0, tag: match[0] });
      }
    }
    for (const { index, tag } of enclosing) {
      opens.set(index, tag);
    }
  }
  let out = html;
  // From the last to the first, so that each insertion leaves the earlier positions as they were.
  for (const [index, tag] of [...opens].sort(([a], [b]) => b - a)) {
    if (!/\sopen(?=[\s>=])/i.test(tag)) {
      const end = index + tag.length - 1;
      out = `${out.slice(0, end)} open${out.slice(end)}`;
    }
  }
  return out;
}

/**
 * The page with the refused form marked, or undefined when the page has no form posting to the
 * action that holds an input a problem names (the caller then shows its error page instead).
 */
export function markRefusedForm(html: string, refused: RefusedForm): string | undefined {
  const errors: Record<string, string> = {};
  for (const problem of refused.problems) {
    // "includes.2" is the third line of the includes box (or the third box ticked).
    const item = /^(.+)\.(\d+)$/.exec(problem.field);
    const name = (item?.[1] ?? problem.field).replaceAll(".", "_");
    errors[name] ??= item ? `item ${Number(item[2]) + 1}: ${problem.message}` : problem.message;
  }
  for (const open of html.matchAll(FORM_OPEN)) {
    const [tag] = open;
    if ((attr(tag, "method") ?? "get").toLowerCase() !== "post" || attr(tag, "action") !== refused.action) {
      continue;
    }
    const innerStart = (open.index ?? 0) + tag.length;
    const innerEnd = html.indexOf("</form>", innerStart);
    if (innerEnd < 0) {
      continue;
    }
    const marked = markFields(html.slice(innerStart, innerEnd), refused, errors);
    if (marked.summary.length > 0) {
      const inner = summaryHtml(marked.summary) + marked.html;
      const invalid = [...inner.matchAll(/aria-invalid="true"/g)].map(
        (match) => innerStart + (match.index ?? 0),
      );
      return openDetailsAround(html.slice(0, innerStart) + inner + html.slice(innerEnd), [
        open.index ?? 0,
        ...invalid,
      ]);
    }
  }
  return undefined;
}

/** Renders a page of this app for the same browser (its session cookie), as its GET would. */
export type Rerender = (request: Request, env: unknown) => Response | Promise<Response>;

/**
 * The refused plain form's page, marked, with the refusal's status; undefined when the post did
 * not come from a page of this app or that page cannot show the problem at an input.
 */
export async function refusedFormPage(
  c: Context,
  status: ErrorStatus,
  problems: FieldProblem[],
  rerender: Rerender,
): Promise<Response | undefined> {
  const referer = c.req.header("Referer");
  if (c.req.method !== "POST" || problems.length === 0 || referer === undefined) {
    return undefined;
  }
  let page: URL;
  try {
    page = new URL(referer);
  } catch {
    return undefined;
  }
  const here = new URL(c.req.url);
  // Only the page's path is taken from the Referer: the page is always this app's own, and its
  // GET (never a post) cannot come back here.
  const target = new URL(`${page.pathname}${page.search}`, here);
  const form = await c.req.parseBody({ all: true });
  const values: RefusedForm["values"] = {};
  for (const [name, raw] of Object.entries(form)) {
    const items = (Array.isArray(raw) ? raw : [raw]).filter(
      (item): item is string => typeof item === "string",
    );
    if (name !== "_csrf") {
      values[name] = items;
    }
  }
  const headers = new Headers(c.req.raw.headers);
  for (const name of ["content-type", "content-length", "hx-request", "origin"]) {
    headers.delete(name);
  }
  const answer = await rerender(new Request(target, { method: "GET", headers }), c.env);
  if (answer.status !== 200 || !(answer.headers.get("Content-Type") ?? "").includes("text/html")) {
    return undefined;
  }
  const marked = markRefusedForm(await answer.text(), { action: here.pathname, values, problems });
  if (marked === undefined) {
    return undefined;
  }
  // What was typed is in this response; no cache may keep it.
  c.header("Cache-Control", "no-store");
  return c.html(marked, status);
}
