/**
 * @module openapi/operations
 * Every /api operation this server answers, in the order the document lists them. openapi.test.ts
 * holds this list and the app's route table to each other: a route missing here, or an operation
 * no route answers, fails it.
 */
import { Type } from "typebox";
import { ALERT_API } from "../routes/alerts-api.js";
import { DASHBOARD_API } from "../routes/dashboard-api.js";
import { FLEET_API } from "../routes/fleet-api.js";
import { HOST_API } from "../routes/hosts-api.js";
import { MIRROR_API } from "../routes/mirror-api.js";
import type { ApiOperation } from "./operation.js";
import { ACCOUNT_OPERATIONS } from "./operations-account.js";
import { FLEET_ACCESS_OPERATIONS } from "./operations-fleet-access.js";
import { RECOVERY_OPERATIONS } from "./operations-recovery.js";
import { REPOSITORY_OPERATIONS } from "./operations-repository.js";
import { SOURCE_OPERATIONS } from "./operations-sources.js";

export const OPENAPI_JSON_PATH = "/api/openapi.json";
export const API_DOCS_PATH = "/api/docs";

const DOCUMENT_OPERATIONS: ApiOperation[] = [
  {
    id: "getOpenApiDocument",
    method: "get",
    path: OPENAPI_JSON_PATH,
    tag: "API description",
    summary: "This document",
    access: "viewer",
    responses: {
      200: {
        description: "The OpenAPI 3.1 document of /api.",
        schema: Type.Record(Type.String(), Type.Unknown()),
      },
    },
  },
  {
    id: "getApiDocs",
    method: "get",
    path: API_DOCS_PATH,
    tag: "API description",
    summary: "This document as a page",
    access: "viewer",
    responses: { 200: { description: "An HTML page.", contentType: "text/html", schema: Type.String() } },
  },
];

export const API_OPERATIONS: readonly ApiOperation[] = [
  ...ACCOUNT_OPERATIONS,
  ...DASHBOARD_API.operations,
  ...FLEET_API.operations,
  ...HOST_API.operations,
  ...MIRROR_API.operations,
  ...ALERT_API.operations,
  ...RECOVERY_OPERATIONS,
  ...SOURCE_OPERATIONS,
  ...REPOSITORY_OPERATIONS,
  ...FLEET_ACCESS_OPERATIONS,
  ...DOCUMENT_OPERATIONS,
];
