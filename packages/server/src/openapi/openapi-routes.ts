/**
 * @module openapi/openapi-routes
 * `GET /api/openapi.json` (the OpenAPI 3.1 document of /api, built from the operations the routes
 * define beside their handlers, openapi/api-route.ts) and `GET /api/docs` (the same document as a page). Both need a signed-in
 * user, any role: the document holds no secret, but it describes this deployment, and every
 * caller of the API it describes has a session or an API token anyway. The page is rendered here,
 * with no script: the CSP allows scripts and styles from our origin only, and a client-side
 * renderer (Swagger UI, Redoc) would be a client framework for one page.
 */
import { createRequire } from "node:module";
import type { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import type { AppEnv } from "../auth/actor.js";
import { renderPage } from "../http/render.js";
import { apiGroup } from "./api-route.js";
import { apiDocsView } from "./docs-page.js";
import { buildOpenApiDocument } from "./document.js";
import type { ApiOperation } from "./operation.js";

const OPENAPI_JSON_PATH = "/api/openapi.json";

function serverVersion(): string {
  const manifest: unknown = createRequire(import.meta.url)("../../package.json");
  const version = (manifest as { version?: unknown }).version;
  return typeof version === "string" ? version : "0.0.0";
}

/** The operations come in from the app: the list holds these two as well. */
interface DocumentContext {
  deps: AppDeps;
  documentFor: () => ReturnType<typeof buildOpenApiDocument>;
}

export const DOCUMENT_API = apiGroup<DocumentContext>({ tag: "API description" });

DOCUMENT_API.add({
  id: "getOpenApiDocument",
  method: "get",
  path: OPENAPI_JSON_PATH,
  summary: "This document",
  access: "viewer",
  responses: {
    200: {
      description: "The OpenAPI 3.1 document of /api.",
      schema: Type.Record(Type.String(), Type.Unknown()),
    },
  },
  handler: (c, _input, { documentFor }) => c.json(documentFor()),
});

DOCUMENT_API.add({
  id: "getApiDocs",
  method: "get",
  path: "/api/docs",
  summary: "This document as a page",
  access: "viewer",
  responses: { 200: { description: "An HTML page.", contentType: "text/html", schema: Type.String() } },
  handler: (c, _input, { deps, documentFor }) =>
    renderPage(c, deps.views, "pages/api-docs.njk", {
      title: "API",
      docs: apiDocsView(documentFor()),
      jsonPath: OPENAPI_JSON_PATH,
    }),
});

export function openApiRoutes(deps: AppDeps, operations: readonly ApiOperation[]): Hono<AppEnv> {
  let cached: { baseUrl: string; document: ReturnType<typeof buildOpenApiDocument> } | undefined;
  // Built on first use; the base URL is final only once the server listens (port 0 in tests).
  const documentFor = () => {
    if (cached?.baseUrl !== deps.config.baseUrl) {
      const document = buildOpenApiDocument(operations, {
        baseUrl: deps.config.baseUrl,
        version: serverVersion(),
      });
      cached = { baseUrl: deps.config.baseUrl, document };
    }
    return cached.document;
  };
  return DOCUMENT_API.routes({ deps, documentFor });
}
