/**
 * @module views
 * One nunjucks environment for every page and fragment, with autoescaping always on: an operator
 * value (host name, path, log line) can never become markup.
 */
import { fileURLToPath } from "node:url";
import nunjucks from "nunjucks";
import type { StaticAsset } from "./assets.js";
import {
  formatBytes,
  formatDuration,
  formatHostState,
  formatIso,
  formatProtection,
  formatTime,
  shortId,
  toDate,
} from "./format.js";

export interface Views {
  render(template: string, context?: Record<string, unknown>): string;
  /** The assets the pages link to, for the server's static route. */
  readonly assets: Map<string, StaticAsset>;
}

export interface ViewOptions {
  assets: Map<string, StaticAsset>;
  /** Re-read templates on every render (development only). */
  watch?: boolean;
  /** The render time, which decides whether a moment's year is shown (tests pass their clock). */
  now?: () => Date;
  /** The IANA zone pages print moments in before app.js takes the reader's own (FLEETBACK_TZ). */
  timeZone?: string;
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (ch) => ESCAPES[ch] ?? ch);

/**
 * `<time datetime="ISO" title="ISO">28 Nov, 10:19 CET</time>`, or "–" for no date: every page's
 * one way to print a moment (issue 35.8). The text is the wall clock in `timeZone` with that
 * zone's name; app.js rewrites it in the reader's own zone. A `pinned` zone (a schedule's, whose
 * "03:00" means the host's 03:00) is kept by app.js as well, and said in data-zone.
 */
export function timeElement(value: unknown, now: Date, timeZone: string, pinned = false): string {
  const date = value === null || value === undefined ? undefined : toDate(value);
  if (!date) {
    return "–";
  }
  const iso = escapeHtml(formatIso(date));
  const zone = pinned ? ` data-zone="${escapeHtml(timeZone)}"` : "";
  return `<time datetime="${iso}" title="${iso}"${zone}>${escapeHtml(formatTime(date, timeZone, now))}</time>`;
}

export const viewsDir = fileURLToPath(new URL("../views/", import.meta.url));

const ISO_IN_TEXT = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})(?![\w:])/g;

/** Text escaped for HTML, each ISO 8601 moment in it a `<time>` like the rest of the page's. */
export function timesInText(value: unknown, now: Date, timeZone: string): string {
  const text = value === null || value === undefined ? "" : String(value);
  let html = "";
  let from = 0;
  for (const match of text.matchAll(ISO_IN_TEXT)) {
    const at = match.index ?? 0;
    const moment = timeElement(match[0], now, timeZone);
    html += escapeHtml(text.slice(from, at)) + (moment === "–" ? escapeHtml(match[0]) : moment);
    from = at + match[0].length;
  }
  return html + escapeHtml(text.slice(from));
}

export function createViews(options: ViewOptions): Views {
  const loader = new nunjucks.FileSystemLoader(viewsDir, { noCache: options.watch ?? false });
  const env = new nunjucks.Environment(loader, {
    autoescape: true,
    throwOnUndefined: false,
    trimBlocks: true,
    lstripBlocks: true,
  });
  env.addGlobal("asset", (path: string) => {
    const asset = options.assets.get(path);
    if (!asset) {
      throw new Error(`unknown asset ${path}`);
    }
    return `${asset.path}?v=${asset.hash}`;
  });
  env.addFilter("bytes", formatBytes);
  env.addFilter("duration", formatDuration);
  env.addFilter("shortId", shortId);
  env.addFilter("protection", formatProtection);
  env.addFilter("hostState", formatHostState);
  const now = options.now ?? (() => new Date());
  const displayZone = options.timeZone ?? "UTC";
  // Every moment a page shows (see timeElement); `| when(zone)` pins it to a zone of its own.
  // Where markup cannot go (an <option>, an attribute): the same words as text, and bare ISO.
  env.addFilter("timeText", (value: unknown) => formatTime(value, displayZone, now()));
  env.addFilter("iso", formatIso);
  env.addFilter(
    "when",
    (value: unknown, zone?: unknown) =>
      new nunjucks.runtime.SafeString(
        typeof zone === "string" && zone !== ""
          ? timeElement(value, now(), zone, true)
          : timeElement(value, now(), displayZone),
      ),
  );
  // Stored sentences (alert messages) carry their moments as ISO 8601 UTC: they are sent as they
  // were written, and a rewording could re-notify. A page shows each as every other moment.
  env.addFilter(
    "withTimes",
    (value: unknown) => new nunjucks.runtime.SafeString(timesInText(value, now(), displayZone)),
  );
  return {
    render: (template, context = {}) => env.render(template, context),
    assets: options.assets,
  };
}
