/**
 * @module views
 * One nunjucks environment for every page and fragment, with autoescaping always on: an operator
 * value (host name, path, log line) can never become markup.
 */
import { fileURLToPath } from "node:url";
import nunjucks from "nunjucks";
import type { StaticAsset } from "./assets.js";
import { formatBytes, formatDuration } from "./format.js";

export interface Views {
  render(template: string, context?: Record<string, unknown>): string;
  /** The assets the pages link to, for the server's static route. */
  readonly assets: Map<string, StaticAsset>;
}

export interface ViewOptions {
  assets: Map<string, StaticAsset>;
  /** Re-read templates on every render (development only). */
  watch?: boolean;
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
  return {
    render: (template, context = {}) => env.render(template, context),
    assets: options.assets,
  };
}
