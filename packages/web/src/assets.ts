/**
 * @module assets
 * Every asset a page loads, served from our own origin (strict CSP, no CDN). URLs carry a
 * content hash so the server can cache them forever and a new release is never served stale.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

export interface StaticAsset {
  /** URL path, e.g. "/static/htmx.min.js". */
  path: string;
  contentType: string;
  body: Buffer;
  /** First 12 hex of the SHA-256 of the body, appended as ?v= to bust caches. */
  hash: string;
}

const require = createRequire(import.meta.url);
const ownStatic = (name: string) => fileURLToPath(new URL(`../static/${name}`, import.meta.url));

const SOURCES: ReadonlyArray<{ name: string; file: () => string; contentType: string }> = [
  {
    name: "htmx.min.js",
    file: () => require.resolve("htmx.org/dist/htmx.min.js"),
    contentType: "text/javascript; charset=utf-8",
  },
  {
    name: "pico.min.css",
    file: () => require.resolve("@picocss/pico/css/pico.min.css"),
    contentType: "text/css; charset=utf-8",
  },
  { name: "app.css", file: () => ownStatic("app.css"), contentType: "text/css; charset=utf-8" },
  { name: "app.js", file: () => ownStatic("app.js"), contentType: "text/javascript; charset=utf-8" },
  // The formatter the other scripts read (see static/format.js), loaded as a module script.
  { name: "format.js", file: () => ownStatic("format.js"), contentType: "text/javascript; charset=utf-8" },
  { name: "copy.js", file: () => ownStatic("copy.js"), contentType: "text/javascript; charset=utf-8" },
  {
    name: "job-stream.js",
    file: () => ownStatic("job-stream.js"),
    contentType: "text/javascript; charset=utf-8",
  },
];

/** Reads the assets once; the server keeps the result for its lifetime. */
export function loadStaticAssets(): Map<string, StaticAsset> {
  const assets = new Map<string, StaticAsset>();
  for (const source of SOURCES) {
    const body = readFileSync(source.file());
    const hash = createHash("sha256").update(body).digest("hex").slice(0, 12);
    const path = `/static/${source.name}`;
    assets.set(path, { path, contentType: source.contentType, body, hash });
  }
  return assets;
}
