/**
 * @module openapi/openapi-routes
 * `GET /api/openapi.json` (the OpenAPI 3.1 document of /api, built from the operations the routes
 * declare in openapi/) and `GET /api/docs` (the same document as a page). Both need a signed-in
 * user, any role: the document holds no secret, but it describes this deployment, and every
 * caller of the API it describes has a session or an API token anyway. The page is rendered here,
 * with no script: the CSP allows scripts and styles from our origin only, and a client-side
 * renderer (Swagger UI, Redoc) would be a client framework for one page.
 */
import { createRequire } from "node:module";
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, requireRole } from "../auth/actor.js";
import { renderPage } from "../http/render.js";
import { apiDocsView } from "./docs-page.js";
import { buildOpenApiDocument } from "./document.js";
import { API_DOCS_PATH, API_OPERATIONS, OPENAPI_JSON_PATH } from "./operations.js";

function serverVersion(): string {
  const manifest: unknown = createRequire(import.meta.url)("../../package.json");
  const version = (manifest as { version?: unknown }).version;
  return typeof version === "string" ? version : "0.0.0";
}

export function openApiRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  let cached: { baseUrl: string; document: ReturnType<typeof buildOpenApiDocument> } | undefined;
  // Built on first use; the base URL is final only once the server listens (port 0 in tests).
  const documentFor = () => {
    if (cached?.baseUrl !== deps.config.baseUrl) {
      const document = buildOpenApiDocument(API_OPERATIONS, {
        baseUrl: deps.config.baseUrl,
        version: serverVersion(),
      });
      cached = { baseUrl: deps.config.baseUrl, document };
    }
    return cached.document;
  };

  routes.get(OPENAPI_JSON_PATH, viewer, (c) => c.json(documentFor()));
  routes.get(API_DOCS_PATH, viewer, (c) =>
    renderPage(c, deps.views, "pages/api-docs.njk", {
      title: "API",
      docs: apiDocsView(documentFor()),
      jsonPath: OPENAPI_JSON_PATH,
    }),
  );
  return routes;
}
