/**
 * @module routes/restore-pages
 * The restore wizard's pages (pick a snapshot, browse its tree lazily, tick paths, choose a
 * target, review, submit) and its tree partial; the view model is restore/restore-wizard.ts. All
 * of it needs the operator role (viewers do not restore); browsing a tree shows file names a
 * viewer's snapshot list does not.
 * A folder too large for one reply is shown a page at a time: the tree partial with `after` answers
 * only the next page's rows, which replace the "Show more" row they were asked by, so their
 * checkboxes sit in the same form as the first page's.
 * A rejected submit re-renders the wizard with the operator's input and every problem (400); an
 * offline host re-renders it with 503; nothing is sent in either case.
 * "Restore onto" (issue 38) picks another host to restore this host's snapshot onto: the same
 * restore the JSON twin starts on that host with `from_host_id` this one (restore-source.ts), its
 * refusals shown at the choice (`onto_host_id`). The JSON twins are in
 * routes/restore-api.ts, diff in routes/diff-pages.ts and routes/diff-api.ts.
 */

import { type Host, hosts } from "@fleetback/db";
import { DumpArchiveFormat, TreeChildName } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { type Context, Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, actorOf, requireRole } from "../auth/actor.js";
import { RequestError, type RequestErrorCode } from "../errors.js";
import { agentDirsOf, refuseAgentDirPaths } from "../hosts/agent-dirs.js";
import { requireHost } from "../hosts/require-host.js";
import { clientIp, redirectAfterPost, renderPage } from "../http/render.js";
import { type FieldProblem, readForm, readQuery } from "../http/validate.js";
import { type DownloadFailure, startDownload } from "../restore/download.js";
import { contentDisposition } from "../restore/download-names.js";
import { PathText, SnapshotIdField, TreePath, WizardSession } from "../restore/restore-fields.js";
import { startRestore } from "../restore/restore-jobs.js";
import { checkRestore, findHostSnapshot, MAX_RESTORE_PATHS } from "../restore/restore-request.js";
import { type RestoreSource, resolveRestoreSource } from "../restore/restore-source.js";
import {
  newWizardSession,
  pagingRefused,
  treeView,
  type WizardState,
  wizardInput,
  wizardView,
} from "../restore/restore-wizard.js";
import type { TreeLister, TreeListing } from "../restore/tree-listing.js";

const WizardQuery = Type.Object(
  {
    session: Type.Optional(WizardSession),
    q: Type.Optional(Type.String({ maxLength: 100 })),
    snapshot_id: Type.Optional(Type.String({ maxLength: 64 })),
    path: Type.Optional(TreePath),
  },
  { additionalProperties: false },
);
const TreeQuery = Type.Object(
  {
    session: WizardSession,
    snapshot_id: SnapshotIdField,
    path: TreePath,
    nested: Type.Optional(Type.Literal("1")),
    after: Type.Optional(TreeChildName),
  },
  { additionalProperties: false },
);
const RestoreForm = Type.Object(
  {
    session: WizardSession,
    snapshot_id: Type.Optional(Type.String({ maxLength: 64 })),
    paths: Type.Optional(Type.Union([PathText, Type.Array(PathText, { maxItems: MAX_RESTORE_PATHS * 2 })])),
    in_place: Type.Optional(Type.Union([Type.Literal("true"), Type.Literal("false")])),
    target_dir: Type.Optional(Type.String({ maxLength: 4096 })),
    confirm_hostname: Type.Optional(Type.String({ maxLength: 256 })),
    onto_host_id: Type.Optional(Type.String({ maxLength: 64 })),
    action: Type.Optional(
      Type.Union([Type.Literal("review"), Type.Literal("restore"), Type.Literal("edit")]),
    ),
  },
  { additionalProperties: false },
);

/** The wizard's "restore onto" choice: its refusals are shown there. */
const ONTO_FIELD = "onto_host_id";

const DownloadQuery = Type.Object(
  {
    path: TreePath,
    /** Only for a folder: the archive it comes as; a file comes as itself. */
    archive: Type.Optional(DumpArchiveFormat),
  },
  { additionalProperties: false },
);

const FAILURE_CODES: Record<DownloadFailure["status"], RequestErrorCode> = {
  400: "invalid",
  404: "not_found",
  409: "conflict",
  413: "too_large",
  502: "agent_error",
  503: "unavailable",
  504: "timeout",
};

/** `trees` is shared with the JSON twin, so both serve from one per-session cache. */
export function restorePageRoutes(deps: AppDeps, trees: TreeLister): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const operator = requireRole("operator");

  async function renderWizard(c: Context<AppEnv>, state: WizardState, status: 200 | 400 | 404 | 503 = 200) {
    return renderPage(c, deps.views, "pages/restore.njk", await wizardView(deps, state), status);
  }

  /** The host a snapshot of `host` is restored onto, and where it is read from when that is another. */
  async function ontoTarget(
    host: Host,
    ontoHostId: string,
  ): Promise<
    { ok: true; target: Host; source: RestoreSource | undefined } | { ok: false; problem: FieldProblem }
  > {
    if (ontoHostId === "" || ontoHostId === host.id) {
      return { ok: true, target: host, source: undefined };
    }
    const [target] = await deps.db.select().from(hosts).where(eq(hosts.id, ontoHostId)).limit(1);
    if (target === undefined) {
      return { ok: false, problem: { field: ONTO_FIELD, message: `${ontoHostId} is not a host` } };
    }
    const from = await resolveRestoreSource(deps, target, host.id);
    return from.ok
      ? { ok: true, target, source: from.source }
      : { ok: false, problem: { field: ONTO_FIELD, message: from.problem.message } };
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
    if (query.path !== undefined) {
      refuseAgentDirPaths("path", [query.path], agentDirsOf(host));
    }
    const paths = query.path === undefined || snapshot === undefined ? [] : [query.path];
    return renderWizard(c, { host, session, snapshot, q: query.q ?? "", paths });
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
    refuseAgentDirPaths("path", [query.path], agentDirsOf(host));
    const snapshot = await findHostSnapshot(deps.db, host.id, query.snapshot_id);
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
    const { template, view } = treeView(
      {
        host,
        session: query.session,
        snapshotId: query.snapshot_id,
        path: query.path,
        nested: query.nested === "1",
        after: query.after,
      },
      listing,
    );
    return c.html(deps.views.render(template, view));
  });

  // A file, or a folder as an archive, streamed from the agent (restore/download.ts); audited.
  routes.get("/hosts/:id/snapshots/:sid/download", operator, async (c) => {
    const query = readQuery(c, DownloadQuery);
    const host = await requireHost(deps.db, c.req.param("id"));
    const sid = c.req.param("sid");
    const snapshot = await findHostSnapshot(deps.db, host.id, sid);
    if (!snapshot) {
      throw new RequestError("not_found", `snapshot_id: ${sid} is not a snapshot of ${host.name}`);
    }
    const started = await startDownload(
      deps,
      {
        host,
        snapshot,
        path: query.path,
        archive: query.archive,
        actor: actorOf(c),
        ip: clientIp(c),
        breakConnection: () => (c.env as { outgoing?: { destroy(): void } } | undefined)?.outgoing?.destroy(),
      },
      c.req.raw.signal,
    );
    if (!started.ok) {
      const message = started.field === undefined ? started.message : `${started.field}: ${started.message}`;
      throw new RequestError(FAILURE_CODES[started.status], message);
    }
    return new Response(started.body, {
      status: 200,
      headers: {
        "content-type": started.contentType,
        "content-disposition": contentDisposition(started.filename),
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      },
    });
  });

  routes.post("/hosts/:id/restore", operator, async (c) => {
    const form = await readForm(c, RestoreForm);
    const host = await requireHost(deps.db, c.req.param("id"));
    const input = wizardInput(form);
    const snapshot = input.snapshotId.trim()
      ? await findHostSnapshot(deps.db, host.id, input.snapshotId.trim())
      : undefined;
    const state = { host, session: form.session, snapshot, input };
    if (form.action === "edit") {
      return renderWizard(c, state);
    }
    const onto = await ontoTarget(host, input.ontoHostId ?? "");
    if (!onto.ok) {
      return renderWizard(c, { ...state, problems: [onto.problem] }, 400);
    }
    const checked = await checkRestore(deps.db, onto.target, input, onto.source);
    if (!checked.ok) {
      return renderWizard(c, { ...state, problems: checked.problems }, 400);
    }
    if (form.action === "review") {
      return renderWizard(c, { ...state, review: true });
    }
    const started = await startRestore(deps, onto.target.id, checked.plan, actorOf(c), clientIp(c));
    if (!started.ok) {
      return renderWizard(
        c,
        {
          ...state,
          review: true,
          notice: `${onto.target.name} is offline; nothing was sent. Try again once its agent is connected.`,
        },
        503,
      );
    }
    return redirectAfterPost(c, `/jobs/${started.job.id}`);
  });

  return routes;
}
