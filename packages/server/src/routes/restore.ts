/**
 * @module routes/restore
 * The restore wizard (pick a snapshot, browse its tree lazily, tick paths, choose a target,
 * review, submit), its tree partial and JSON twins. All of it needs the operator role
 * (viewers do not restore); browsing a tree shows file names a viewer's snapshot list does
 * not. A wizard session id (random, carried in the URL and a hidden field) scopes the tree cache
 * together with the user, so one operator's cached listings are never served to another.
 * A folder too large for one reply is shown a page at a time: the tree partial with `after` answers
 * only the next page's rows, which replace the "Show more" row they were asked by, so their
 * checkboxes sit in the same form as the first page's.
 * A rejected submit re-renders the wizard with the operator's input and every problem (400); an
 * offline host re-renders it with 503; nothing is sent in either case. Diff is in routes/diff.ts.
 */
import type { Host, Snapshot } from "@fleetback/db";
import { SNAPSHOT_ID_PATTERN, TREE_PAGING_PROTOCOL_VERSION, TreeChildName } from "@fleetback/protocol";
import { type Context, Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app.js";
import { type AppEnv, actorOf, requireRole } from "../auth/actor.js";
import { RequestError, unavailable } from "../errors.js";
import { clientIp, redirectAfterPost, renderPage } from "../http/render.js";
import { type FieldProblem, readForm, readJson, readQuery } from "../http/validate.js";
import type { Ids } from "../ids.js";
import { startRestore } from "../restore/restore-jobs.js";
import {
  checkRestore,
  cleanPaths,
  DEFAULT_RESTORE_TARGET,
  findHostSnapshot,
  MAX_RESTORE_PATHS,
  type RestoreInput,
} from "../restore/restore-request.js";
import { searchSnapshots } from "../restore/snapshot-search.js";
import { createTreeLister, type TreeListing } from "../restore/tree-listing.js";
import { requireHost } from "../sources/source-groups.js";

export const WIZARD_SESSION_PATTERN = "^[A-Za-z0-9_-]{16,64}$";
const Session = Type.String({ pattern: WIZARD_SESSION_PATTERN, description: "wizard session id" });
const SnapshotIdField = Type.String({ pattern: SNAPSHOT_ID_PATTERN, description: "hex snapshot id" });
const TreePath = Type.String({ pattern: "^/", maxLength: 4096, description: "absolute path" });
const PathText = Type.String({ maxLength: 4096 });

const WizardQuery = Type.Object(
  {
    session: Type.Optional(Session),
    q: Type.Optional(Type.String({ maxLength: 100 })),
    snapshot_id: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);
const TreeQuery = Type.Object(
  {
    session: Session,
    snapshot_id: SnapshotIdField,
    path: TreePath,
    nested: Type.Optional(Type.Literal("1")),
    after: Type.Optional(TreeChildName),
  },
  { additionalProperties: false },
);
const ApiTreeQuery = Type.Object(
  {
    snapshot_id: SnapshotIdField,
    path: TreePath,
    session: Type.Optional(Session),
    after: Type.Optional(TreeChildName),
  },
  { additionalProperties: false },
);
const RestoreForm = Type.Object(
  {
    session: Session,
    snapshot_id: Type.Optional(Type.String({ maxLength: 64 })),
    paths: Type.Optional(Type.Union([PathText, Type.Array(PathText, { maxItems: MAX_RESTORE_PATHS * 2 })])),
    in_place: Type.Optional(Type.Union([Type.Literal("true"), Type.Literal("false")])),
    target_dir: Type.Optional(Type.String({ maxLength: 4096 })),
    confirm_hostname: Type.Optional(Type.String({ maxLength: 256 })),
    action: Type.Optional(
      Type.Union([Type.Literal("review"), Type.Literal("restore"), Type.Literal("edit")]),
    ),
  },
  { additionalProperties: false },
);
const RestoreBody = Type.Object(
  {
    snapshot_id: Type.String({ maxLength: 64 }),
    paths: Type.Array(PathText, { maxItems: MAX_RESTORE_PATHS }),
    in_place: Type.Boolean(),
    target_dir: Type.Optional(Type.String({ maxLength: 4096 })),
    confirm_hostname: Type.Optional(Type.String({ maxLength: 256 })),
  },
  { additionalProperties: false },
);

export function newWizardSession(ids: Pick<Ids, "randomBytes">): string {
  return ids.randomBytes(18).toString("base64url");
}

function treeUrl(
  hostId: string,
  session: string,
  snapshotId: string,
  path: string,
  nested: boolean,
  after?: string,
): string {
  const query = new URLSearchParams({ session, snapshot_id: snapshotId, path });
  if (nested) {
    query.set("nested", "1");
  }
  if (after !== undefined) {
    query.set("after", after);
  }
  return `/hosts/${hostId}/restore/tree?${query.toString()}`;
}

/**
 * An agent before protocol 4 ignores `after` and would send the first page again, which the
 * wizard would append as if it were new. It never sends `next_after`, so only a hand-made URL
 * gets here.
 */
function pagingRefused(host: Host): TreeListing | undefined {
  if ((host.protocolVersion ?? 0) >= TREE_PAGING_PROTOCOL_VERSION) {
    return undefined;
  }
  return {
    ok: false,
    reason: "agent_error",
    message: `after: the agent of ${host.name} is too old to list a folder in pages; upgrade it`,
  };
}

/** `/`, then one crumb per segment of `path`. */
function crumbsOf(path: string): Array<{ name: string; path: string }> {
  const crumbs = [{ name: "/", path: "/" }];
  let current = "";
  for (const segment of path.split("/").filter((part) => part !== "")) {
    current = `${current}/${segment}`;
    crumbs.push({ name: segment, path: current });
  }
  return crumbs;
}

export function invalidFrom(problems: FieldProblem[]): RequestError {
  const first = problems[0] ?? { field: "body", message: "is invalid" };
  return new RequestError("invalid", `${first.field}: ${first.message}`, { details: problems });
}

function listOf(value: string | string[] | undefined): string[] {
  if (value === undefined) {
    return [];
  }
  return Array.isArray(value) ? value : [value];
}

export function restoreRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const operator = requireRole("operator");
  const trees = createTreeLister(deps, deps.treeListing);

  interface WizardState {
    host: Host;
    session: string;
    snapshot?: Snapshot | undefined;
    q?: string;
    input?: RestoreInput;
    problems?: FieldProblem[];
    notice?: string;
    review?: boolean;
  }

  async function renderWizard(c: Context<AppEnv>, state: WizardState, status: 200 | 400 | 404 | 503 = 200) {
    const { host, session, snapshot } = state;
    const q = state.q ?? "";
    const input: RestoreInput = state.input ?? {
      snapshotId: snapshot?.id ?? "",
      paths: [],
      inPlace: false,
      targetDir: DEFAULT_RESTORE_TARGET,
      confirmHostname: "",
    };
    const problems = state.problems ?? [];
    const pickList = snapshot && q === "" ? [] : await searchSnapshots(deps.db, host.id, q);
    return renderPage(
      c,
      deps.views,
      "pages/restore.njk",
      {
        title: `${host.name}: restore`,
        host,
        connected: deps.hub.isOnline(host.id),
        session,
        q,
        snapshot,
        pickList,
        input,
        selectedPaths: cleanPaths(input.paths),
        problems,
        fieldErrors: Object.fromEntries(problems.map((problem) => [problem.field, problem.message])),
        notice: state.notice,
        review: state.review === true,
        showForm: snapshot !== undefined || state.input !== undefined,
        defaultTarget: DEFAULT_RESTORE_TARGET,
        rootTreeUrl: snapshot ? treeUrl(host.id, session, snapshot.id, "/", false) : undefined,
        jumpTo: snapshot
          ? snapshot.paths.map((path) => ({ path, url: treeUrl(host.id, session, snapshot.id, path, false) }))
          : [],
      },
      status,
    );
  }

  routes.get("/hosts/:id/restore", operator, async (c) => {
    const query = readQuery(c, WizardQuery);
    const host = await requireHost(deps.db, c.req.param("id"));
    const session = query.session ?? newWizardSession(deps.ids);
    const wanted = query.snapshot_id?.trim();
    const snapshot = wanted ? await findHostSnapshot(deps.db, host.id, wanted) : undefined;
    if (wanted && !snapshot) {
      return renderWizard(
        c,
        {
          host,
          session,
          q: query.q ?? "",
          problems: [{ field: "snapshot_id", message: `${wanted} is not a snapshot of this host` }],
        },
        404,
      );
    }
    return renderWizard(c, { host, session, snapshot, q: query.q ?? "" });
  });

  routes.get("/hosts/:id/snapshots/:sid/restore", operator, async (c) => {
    const query = readQuery(c, WizardQuery);
    const host = await requireHost(deps.db, c.req.param("id"));
    const session = query.session ?? newWizardSession(deps.ids);
    const sid = c.req.param("sid");
    const snapshot = await findHostSnapshot(deps.db, host.id, sid);
    if (!snapshot) {
      return renderWizard(
        c,
        {
          host,
          session,
          problems: [{ field: "snapshot_id", message: `${sid} is not a snapshot of this host` }],
        },
        404,
      );
    }
    return renderWizard(c, { host, session, snapshot, q: query.q ?? "" });
  });

  routes.get("/hosts/:id/restore/tree", operator, async (c) => {
    const query = readQuery(c, TreeQuery);
    const host = await requireHost(deps.db, c.req.param("id"));
    const nested = query.nested === "1";
    const snapshot = await findHostSnapshot(deps.db, host.id, query.snapshot_id);
    const urlOf = (path: string, nestedUrl: boolean, after?: string) =>
      treeUrl(host.id, query.session, query.snapshot_id, path, nestedUrl, after);
    const refused = query.after === undefined ? undefined : pagingRefused(host);
    const listing: TreeListing = !snapshot
      ? { ok: false, reason: "agent_error", message: `${query.snapshot_id} is not a snapshot of this host` }
      : (refused ??
        (await trees.list({
          userId: actorOf(c).userId,
          sessionId: query.session,
          hostId: host.id,
          snapshotId: snapshot.id,
          path: query.path,
          after: query.after,
        })));
    const page = {
      path: query.path,
      selfUrl: urlOf(query.path, nested, query.after),
      moreUrl: listing.ok && listing.nextAfter ? urlOf(query.path, nested, listing.nextAfter) : undefined,
      nextAfter: listing.ok ? listing.nextAfter : undefined,
      entries: listing.ok
        ? listing.entries.map((entry) => ({
            ...entry,
            url: entry.type === "dir" ? urlOf(entry.path, true) : undefined,
          }))
        : [],
    };
    if (query.after !== undefined) {
      // The rows that follow the "Show more" row they replace; an error takes that row's place.
      return c.html(
        deps.views.render("partials/restore-tree-rows.njk", {
          ...page,
          appended: true,
          pageError: listing.ok ? undefined : listing.message,
        }),
      );
    }
    const html = deps.views.render("partials/restore-tree.njk", {
      ...page,
      nested,
      crumbs: crumbsOf(query.path).map((crumb) => ({ ...crumb, url: urlOf(crumb.path, false) })),
      error: listing.ok ? undefined : listing.message,
      cached: listing.ok ? listing.cached : false,
    });
    return c.html(html);
  });

  routes.get("/api/hosts/:id/tree", operator, async (c) => {
    const query = readQuery(c, ApiTreeQuery);
    const host = await requireHost(deps.db, c.req.param("id"));
    const snapshot = await findHostSnapshot(deps.db, host.id, query.snapshot_id);
    if (!snapshot) {
      throw new RequestError("invalid", `snapshot_id: ${query.snapshot_id} is not a snapshot of this host`);
    }
    const refused = query.after === undefined ? undefined : pagingRefused(host);
    if (refused && !refused.ok) {
      throw new RequestError("invalid", refused.message);
    }
    const listing = await trees.list({
      userId: actorOf(c).userId,
      sessionId: query.session ?? "api",
      hostId: host.id,
      snapshotId: snapshot.id,
      path: query.path,
      after: query.after,
    });
    if (listing.ok) {
      return c.json({
        path: query.path,
        entries: listing.entries,
        cached: listing.cached,
        ...(listing.nextAfter === undefined ? {} : { next_after: listing.nextAfter }),
      });
    }
    if (listing.reason === "offline") {
      throw unavailable(listing.message);
    }
    const requestId = c.get("requestId");
    return listing.reason === "timeout"
      ? c.json({ code: "timeout", message: listing.message, request_id: requestId }, 504)
      : c.json({ code: "agent_error", message: listing.message, request_id: requestId }, 502);
  });

  routes.post("/hosts/:id/restore", operator, async (c) => {
    const form = await readForm(c, RestoreForm);
    const host = await requireHost(deps.db, c.req.param("id"));
    const inPlace = form.in_place === "true";
    const input: RestoreInput = {
      snapshotId: form.snapshot_id ?? "",
      paths: cleanPaths(listOf(form.paths)),
      inPlace,
      targetDir: form.target_dir ?? (inPlace ? "" : DEFAULT_RESTORE_TARGET),
      confirmHostname: form.confirm_hostname ?? "",
    };
    const snapshot = input.snapshotId.trim()
      ? await findHostSnapshot(deps.db, host.id, input.snapshotId.trim())
      : undefined;
    const state = { host, session: form.session, snapshot, input };
    if (form.action === "edit") {
      return renderWizard(c, state);
    }
    const checked = await checkRestore(deps.db, host, input);
    if (!checked.ok) {
      return renderWizard(c, { ...state, problems: checked.problems }, 400);
    }
    if (form.action === "review") {
      return renderWizard(c, { ...state, review: true });
    }
    const started = await startRestore(deps, host.id, checked.plan, actorOf(c), clientIp(c));
    if (!started.ok) {
      return renderWizard(
        c,
        {
          ...state,
          review: true,
          notice: `${host.name} is offline; nothing was sent. Try again once its agent is connected.`,
        },
        503,
      );
    }
    return redirectAfterPost(c, `/jobs/${started.job.id}`);
  });

  routes.post("/api/hosts/:id/restore", operator, async (c) => {
    const body = await readJson(c, RestoreBody);
    const host = await requireHost(deps.db, c.req.param("id"));
    const checked = await checkRestore(deps.db, host, {
      snapshotId: body.snapshot_id,
      paths: body.paths,
      inPlace: body.in_place,
      targetDir: body.target_dir ?? (body.in_place ? "" : DEFAULT_RESTORE_TARGET),
      confirmHostname: body.confirm_hostname ?? "",
    });
    if (!checked.ok) {
      throw invalidFrom(checked.problems);
    }
    const started = await startRestore(deps, host.id, checked.plan, actorOf(c), clientIp(c));
    if (!started.ok) {
      throw unavailable(`${host.name} is offline; nothing was sent.`);
    }
    return c.json({ job_id: started.job.id, target_dir: started.job.params.target_dir }, 201);
  });

  return routes;
}
