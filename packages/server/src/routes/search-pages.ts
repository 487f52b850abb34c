/**
 * @module routes/search-pages
 * Fleet search in the browser (issue 38.3): a GET form (text, hosts by label, groups, dates), one
 * line per version found, each linking to the path's version history on its host, where any
 * version restores through the restore wizard (snapshot and path filled in). A bad query is said
 * at its input. The JSON is routes/search-api.ts.
 */
import { type Context, Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, requireRole } from "../auth/actor.js";
import { splitPath } from "../catalog/catalog-keys.js";
import { searchCatalogue } from "../catalog/catalog-search.js";
import { fileHistory } from "../catalog/file-history.js";
import { FileVersionsQuery, SearchQueryParams, searchRequestOf } from "../catalog/search-request.js";
import { requireHost } from "../hosts/require-host.js";
import { formErrorsOrThrow } from "../http/form-errors.js";
import { renderPage } from "../http/render.js";
import { readQuery, sentQuery } from "../http/validate.js";

function versionsUrl(hostId: string, path: string): string {
  return `/hosts/${hostId}/versions?${new URLSearchParams({ path }).toString()}`;
}

function restoreUrl(hostId: string, snapshotId: string, path: string): string {
  return `/hosts/${hostId}/restore?${new URLSearchParams({ snapshot_id: snapshotId, path }).toString()}`;
}

export function searchPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const operator = requireRole("operator");

  async function build(c: Context<AppEnv>) {
    const raw = sentQuery(c, SearchQueryParams);
    const form = { q: "", selector: "", groups: "", from: "", to: "", ...raw };
    if (form.q.trim() === "") {
      return { status: 200 as const, context: { form } };
    }
    try {
      const params = readQuery(c, SearchQueryParams);
      const request = searchRequestOf(params);
      const result = await searchCatalogue(deps.db, request.query, request.filters, request);
      const offset = request.offset ?? 0;
      const next = new URLSearchParams({ ...raw, offset: String(offset + result.hits.length) }).toString();
      return {
        status: 200 as const,
        context: {
          form,
          result,
          hits: result.hits.map((hit) => ({
            ...hit,
            versionsUrl: versionsUrl(hit.host.id, hit.path),
            restoreUrl: restoreUrl(hit.host.id, hit.last.id, hit.path),
          })),
          nextUrl: result.more ? `/search?${next}` : undefined,
        },
      };
    } catch (err) {
      return { status: 400 as const, context: { form, errors: formErrorsOrThrow(err) } };
    }
  }

  routes.get("/search", operator, async (c) => {
    const built = await build(c);
    return renderPage(c, deps.views, "pages/search.njk", { title: "Search", ...built.context }, built.status);
  });

  routes.get("/hosts/:id/versions", operator, async (c) => {
    const host = await requireHost(deps.db, c.req.param("id"));
    const { path } = readQuery(c, FileVersionsQuery);
    const versions = await fileHistory(deps.db, host.id, path);
    const split = splitPath(path);
    return renderPage(c, deps.views, "pages/file-versions.njk", {
      title: `Versions of ${path}`,
      host,
      path,
      name: split?.name ?? path,
      searchUrl: `/search?${new URLSearchParams({ q: split?.name ?? path }).toString()}`,
      versions: versions.map((version) => ({
        ...version,
        snapshots: version.snapshots.map((snapshot) => ({
          ...snapshot,
          restoreUrl: restoreUrl(host.id, snapshot.id, path),
          downloadUrl:
            version.type === "file"
              ? `/hosts/${host.id}/snapshots/${snapshot.id}/download?${new URLSearchParams({ path }).toString()}`
              : undefined,
        })),
      })),
    });
  });

  return routes;
}
