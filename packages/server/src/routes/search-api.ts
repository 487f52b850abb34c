/**
 * @module routes/search-api
 * Search across the fleet's backups over HTTP (issue 38.3): file versions by name or glob, and one
 * path's versions on one host. Operators only, like browsing a snapshot: file names can say a lot.
 * The page is routes/search-pages.ts.
 */
import type { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import type { AppEnv } from "../auth/actor.js";
import { searchJson, versionJson } from "../catalog/catalog-json.js";
import { searchCatalogue } from "../catalog/catalog-search.js";
import { fileHistory } from "../catalog/file-history.js";
import { FileVersionsQuery, SearchQueryParams, searchRequestOf } from "../catalog/search-request.js";
import { requireHost } from "../hosts/require-host.js";
import { apiGroup, HOST_ID } from "../openapi/api-route.js";
import { FileSearchAnswer, FileVersionsAnswer } from "../openapi/catalog-schemas.js";

export const SEARCH_API = apiGroup<AppDeps>({ tag: "Search" });

SEARCH_API.add({
  id: "searchFiles",
  method: "get",
  path: "/api/search/files",
  summary: "Find files across the fleet's backups",
  description:
    "Every version of a matching path on every host searched: a text without `/` matches names (`id_rsa`, `*.conf`, case-insensitive); with `/`, the part after the last `/` is the name and the part before the folder, where `*` also crosses `/` (`*/nginx/*.conf`; `nginx/nginx.conf` may sit anywhere). Identical versions over many snapshots are one hit with the range of snapshots that hold it. The catalogue is on the server, so offline hosts are searched too; hosts that have sent no catalogue yet are listed in `not_catalogued`. `from`/`to` keep versions held by a snapshot taken in that range.",
  access: "operator",
  query: SearchQueryParams,
  responses: { 200: { description: "The hits, one page of them.", schema: FileSearchAnswer } },
  handler: async (c, { query }, deps) => {
    const request = searchRequestOf(query);
    const result = await searchCatalogue(deps.db, request.query, request.filters, request);
    return c.json(searchJson(result));
  },
});

SEARCH_API.add({
  id: "getFileVersions",
  method: "get",
  path: "/api/hosts/:id/file-versions",
  summary: "One path's versions on a host",
  description:
    "Newest first, each with the snapshots that hold it (at most 50 listed, all counted); any of them restores that version.",
  access: "operator",
  params: HOST_ID,
  query: FileVersionsQuery,
  responses: { 200: { description: "The versions.", schema: FileVersionsAnswer } },
  handler: async (c, { query }, deps) => {
    const host = await requireHost(deps.db, c.req.param("id"));
    const versions = await fileHistory(deps.db, host.id, query.path);
    return c.json({ host_id: host.id, path: query.path, versions: versions.map(versionJson) });
  },
});

export function searchApiRoutes(deps: AppDeps): Hono<AppEnv> {
  return SEARCH_API.routes(deps);
}
