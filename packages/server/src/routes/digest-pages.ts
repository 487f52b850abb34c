/**
 * @module routes/digest-pages
 * The fleet digest as it would read now (issue 39.1), in the app's own page: what a channel's
 * daily or weekly digest says, before anyone waits a day for it. Viewers may read it, as its JSON.
 */
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, requireRole } from "../auth/actor.js";
import { buildDigest } from "../digest/digest-content.js";
import { DigestQuery, previewPeriod } from "../digest/digest-query.js";
import { digestLines } from "../digest/digest-text.js";
import { renderPage } from "../http/render.js";
import { readQuery } from "../http/validate.js";

export function digestPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  routes.get("/reports/digest", requireRole("viewer"), async (c) => {
    const { period, periodMs } = previewPeriod(readQuery(c, DigestQuery));
    const digest = await buildDigest(deps, undefined, periodMs);
    const { title, lines } = digestLines(digest);
    const [first, ...rest] = lines;
    return renderPage(c, deps.views, "pages/digest.njk", {
      title: "Fleet digest",
      period,
      verdict: title,
      allWell: digest.all_well,
      first,
      rest,
    });
  });
  return routes;
}
