/**
 * @module routes/fleet-pages
 * The host list at /hosts: a GET filter form (state, search on name or tag), column headers that
 * sort, paging links and the host count, all plain links that work without JavaScript; htmx swaps
 * the list in place and pushes the URL. The table refreshes every 10 s through `/partials/fleet`
 * with the same query string. The dashboard's numbers link here with `?state=`. Admins also get
 * the agent rollout form, offering the hosts of the page shown (or all hosts). Filtered by labels,
 * operators act on every host the selector matches: run, pause, resume, and set or remove labels
 * (POST /hosts/labels). The JSON host list
 * is in routes/fleet-api.ts; the landing page is the dashboard (routes/dashboard-pages.ts).
 */
import { type Context, Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, hasRole, requireRole } from "../auth/actor.js";
import { actOnSelector, FleetActionBody, type FleetActionResult } from "../fleet/fleet-actions.js";
import { type FleetPage, listFleetPage } from "../fleet/fleet-list.js";
import { FLEET_SORTS, type FleetListParams, fleetHref, readHostListQuery } from "../fleet/fleet-query.js";
import { HOST_STATES } from "../freshness/host-states.js";
import { redirectAfterPost, renderPage } from "../http/render.js";
import { readForm, validate } from "../http/validate.js";
import { bulkTarget } from "../labels/bulk-target.js";
import { BulkLabelsBody } from "../labels/label-bodies.js";
import { parseLabelKeyText, parseLabelText } from "../labels/label-rules.js";
import { SELECTOR_MAX_LENGTH } from "../labels/selector.js";
import { bulkChangeLabelsFollowingPolicies, labelEditOf } from "../policies/label-changes.js";

/**
 * What the last rollout from this page did (POST /agent-updates redirects here with it), so that a
 * host already on the version is said to be skipped instead of the form seeming to send.
 */
const RolloutOutcome = Type.Object(
  {
    rollout: Type.String({ minLength: 1, maxLength: 64 }),
    requested: Type.String({ pattern: "^[0-9]{1,6}$" }),
    already: Type.String({ pattern: "^[0-9]{1,6}$" }),
  },
  { additionalProperties: false },
);
const ROLLOUT_KEYS = ["rollout", "requested", "already"];

/** What the last bulk label change did (POST /hosts/labels redirects here with it). */
const LabelsOutcome = Type.Object(
  {
    labels_matched: Type.String({ pattern: "^[0-9]{1,9}$" }),
    labels_changed: Type.String({ pattern: "^[0-9]{1,9}$" }),
  },
  { additionalProperties: false },
);
const LABELS_KEYS = ["labels_matched", "labels_changed"];

function pick(query: Record<string, string>, keys: string[], keep: boolean): Record<string, string> {
  return Object.fromEntries(Object.entries(query).filter(([key]) => keys.includes(key) === keep));
}

/** The list's own query, and what a form that redirected here reports. */
function splitOutcomes(query: Record<string, string>) {
  const list = pick(query, [...ROLLOUT_KEYS, ...LABELS_KEYS], false);
  const rolled =
    query.rollout === undefined ? undefined : validate(RolloutOutcome, pick(query, ROLLOUT_KEYS, true));
  const labelled =
    query.labels_matched === undefined && query.labels_changed === undefined
      ? undefined
      : validate(LabelsOutcome, pick(query, LABELS_KEYS, true));
  return {
    list,
    rollout: rolled && {
      version: rolled.rollout,
      requested: Number(rolled.requested),
      already: Number(rolled.already),
    },
    labelled: labelled && {
      matched: Number(labelled.labels_matched),
      changed: Number(labelled.labels_changed),
    },
  };
}

/**
 * The host list's bulk label form: the list's selector, labels to set as `k=v` (comma or line
 * separated) and keys to remove. Read as the API's body and changed by the same functions.
 */
const BulkLabelsForm = Type.Object(
  {
    selector: Type.String({ maxLength: SELECTOR_MAX_LENGTH }),
    set: Type.Optional(Type.String({ maxLength: 20_000 })),
    remove: Type.Optional(Type.String({ maxLength: 20_000 })),
  },
  { additionalProperties: false },
);

/** Links the list template needs: each sortable column's, the neighbouring pages', the refresh's. */
function listView(page: FleetPage) {
  const { params } = page;
  const sortLinks = Object.fromEntries(
    FLEET_SORTS.map((sort) => {
      const active = params.sort === sort;
      const order = active && params.order === "asc" ? "desc" : "asc";
      return [
        sort,
        {
          href: fleetHref("/hosts", params, { sort, order, page: 1 }),
          active,
          // aria-sort on the header of the active column.
          ariaSort: active ? (params.order === "asc" ? "ascending" : "descending") : undefined,
        },
      ];
    }),
  );
  const pageHref = (n: number) => fleetHref("/hosts", params, { page: n });
  return {
    ...page,
    sortLinks,
    prevHref: params.page > 1 ? pageHref(Math.min(params.page - 1, page.pages)) : undefined,
    nextHref: params.page < page.pages ? pageHref(params.page + 1) : undefined,
    firstRow: page.hosts.length > 0 ? (params.page - 1) * params.limit + 1 : 0,
    lastRow: (params.page - 1) * params.limit + page.hosts.length,
    partialHref: fleetHref("/partials/fleet", params, {}),
    stateHref: (state: string | undefined) =>
      fleetHref("/hosts", params, { state: state as FleetListParams["state"], page: 1 }),
  };
}

export function fleetPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  /** The versions an admin can roll out, each with its single-executable platforms. */
  async function agentVersions() {
    const bundles = await deps.agentBundles.list();
    return Promise.all(
      bundles.map(async (bundle) => ({
        version: bundle.version,
        sea: await deps.agentBundles.listSea(bundle.version),
      })),
    );
  }
  async function renderFleet(c: Context<AppEnv>, query: Record<string, string>, acted?: FleetActionResult) {
    const { list, rollout, labelled } = splitOutcomes(query);
    const params = readHostListQuery(list);
    const page = await listFleetPage(deps, params);
    const { state } = params;
    return renderPage(c, deps.views, "pages/fleet.njk", {
      title: state ? `Hosts ${state}` : "Hosts",
      list: listView(page),
      hosts: page.hosts,
      state,
      states: HOST_STATES,
      sorts: FLEET_SORTS,
      agentVersions: hasRole(c.get("actor"), "admin") ? await agentVersions() : [],
      rollout,
      labelled,
      acted,
    });
  }
  routes.get("/hosts", viewer, (c) => renderFleet(c, c.req.query()));
  // Run, pause or resume the hosts the list's selector shows (issue 37.5); the answer is the list
  // again with what happened to each host.
  routes.post("/hosts/actions", requireRole("operator"), async (c) => {
    const form = await readForm(c, FleetActionBody);
    const acted = await actOnSelector(deps, auditOf(c), form);
    return renderFleet(c, { selector: form.selector }, acted);
  });
  // Set and remove labels on every host the list's selector matches (issue 37.1), as
  // POST /api/hosts/labels does; a refusal comes back as the list with the message at its input.
  routes.post("/hosts/labels", requireRole("operator"), async (c) => {
    const form = await readForm(c, BulkLabelsForm);
    const target = bulkTarget({ selector: form.selector });
    const body = validate(BulkLabelsBody, {
      selector: form.selector,
      set: parseLabelText(form.set ?? "", "set"),
      remove: parseLabelKeyText(form.remove ?? ""),
    });
    const result = await bulkChangeLabelsFollowingPolicies(deps, auditOf(c), target, labelEditOf(body));
    const back = new URLSearchParams({
      selector: form.selector.trim(),
      labels_matched: String(result.matched),
      labels_changed: String(result.changed),
    });
    return redirectAfterPost(c, `/hosts?${back}`);
  });
  routes.get("/partials/fleet", viewer, async (c) => {
    const params = readHostListQuery(c.req.query());
    const page = await listFleetPage(deps, params);
    return renderPage(c, deps.views, "partials/fleet-table.njk", {
      list: listView(page),
      hosts: page.hosts,
      state: params.state,
    });
  });
  return routes;
}
