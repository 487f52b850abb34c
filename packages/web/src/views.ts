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
  formatExactUtc,
  formatHostState,
  formatProtection,
  formatRelative,
  shortId,
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
  /** The render time relative times are counted from (tests pass their clock); default: now. */
  now?: () => Date;
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
 * `<time datetime="ISO" title="exact UTC">3 h ago</time>`, or "–" for no date. app.js swaps the
 * title for the exact time in the reader's own zone; without script the UTC one stays.
 */
export function timeElement(value: unknown, now: Date): string {
  if (value === null || value === undefined || value === "") {
    return "–";
  }
  const date = value instanceof Date ? value : new Date(value as string | number);
  if (!Number.isFinite(date.getTime())) {
    return "–";
  }
  return `<time datetime="${escapeHtml(date.toISOString())}" title="${escapeHtml(formatExactUtc(date))}">${escapeHtml(formatRelative(date, now))}</time>`;
}

export const viewsDir = fileURLToPath(new URL("../views/", import.meta.url));

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
  // Every moment a page shows: relative, with the exact time on hover (see timeElement).
  env.addFilter("when", (value: unknown) => new nunjucks.runtime.SafeString(timeElement(value, now())));
  return {
    render: (template, context = {}) => env.render(template, context),
    assets: options.assets,
  };
}
