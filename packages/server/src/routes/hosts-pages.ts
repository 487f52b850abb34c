/**
 * @module routes/hosts-pages
 * A host's page and its forms (deletion, credentials, bandwidth caps, keeper, manual jobs), plus the two
 * removed endpoints that now answer 410 with the way forward. The JSON twins are in
 * routes/hosts-api.ts; what both check is in fleet/host-requests.ts.
 */
import { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, actorOf, auditOf, requireRole } from "../auth/actor.js";
import { mintSuccessorToken } from "../enrolment/tokens.js";
import { RequestError } from "../errors.js";
import { getHostDetail } from "../fleet/host-detail.js";
import { JobBody, putBandwidth, putCredentials, startHostJob } from "../fleet/host-requests.js";
import { deleteHost } from "../hosts/delete-host.js";
import { RenameHostBody, renameHost } from "../hosts/rename-host.js";
import { requireHost } from "../hosts/require-host.js";
import { clientIp, redirectAfterPost, renderPage } from "../http/render.js";
import { EmptyForm, readForm } from "../http/validate.js";
import { formatLabels, labelsOf, parseLabelText } from "../labels/label-rules.js";
import { recoverHost } from "../restore/recover-host.js";

// The host page's "recover everything" form (issue 38.2): in place, confirmed by the host's name,
// or beside the files under a directory.
const RecoverForm = Type.Object(
  {
    where: Type.Union([Type.Literal("in_place"), Type.Literal("directory")]),
    confirm_hostname: Type.Optional(Type.String({ maxLength: 255 })),
    target_dir: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { additionalProperties: false },
);

// The host page's labels box: every label as `key=value`, comma or line separated; empty: none.
const LabelsForm = Type.Object(
  { labels: Type.Optional(Type.String({ maxLength: 20_000 })) },
  { additionalProperties: false },
);

import { idButton } from "../auth/id-button.js";
import { readCredentialForm } from "../hosts/credential-form.js";
import { setKeeper } from "../keepers/keeper-assignment.js";
import { keeperCandidates } from "../keepers/protection-view.js";
import { ReleaseHoldBody, releaseHold } from "../maintenance/release-hold.js";
import { changeLabelsFollowingPolicies } from "../policies/label-changes.js";
import { helpUrl } from "../updates/agent-upgrade-help.js";

const CapField = Type.String({ pattern: "^([0-9]{0,8})$" });
const BandwidthForm = Type.Object(
  { up_kbps: CapField, down_kbps: CapField },
  { additionalProperties: false },
);

/** An empty choice is "no keeper". */
const KeeperForm = Type.Object(
  { keeper_host_id: Type.String({ maxLength: 64 }) },
  { additionalProperties: false },
);

function formCap(value: string): number | null {
  return value === "" || value === "0" ? null : Number(value);
}

export function hostPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  const operator = requireRole("operator");
  const admin = requireRole("admin");

  routes.get("/hosts/:id", viewer, async (c) => {
    const detail = await getHostDetail(deps.db, deps.keys.secret, c.req.param("id"));
    return renderPage(c, deps.views, "pages/host.njk", {
      title: detail.host.name,
      detail,
      keeperCandidates: await keeperCandidates(deps.db, detail.host.id),
      connected: deps.hub.isOnline(detail.host.id),
      helpUrl: helpUrl(deps.config.baseUrl),
      labelsText: formatLabels(labelsOf(detail.host.labels)),
    });
  });
  routes.post("/hosts/:id/rename", operator, async (c) => {
    const form = await readForm(c, RenameHostBody);
    const hostId = c.req.param("id");
    await renameHost(deps, auditOf(c), hostId, form.name);
    return redirectAfterPost(c, `/hosts/${encodeURIComponent(hostId)}`);
  });
  routes.post("/hosts/:id/labels", operator, async (c) => {
    const form = await readForm(c, LabelsForm);
    const hostId = c.req.param("id");
    await changeLabelsFollowingPolicies(deps, auditOf(c), hostId, {
      replace: parseLabelText(form.labels ?? "", "labels"),
    });
    return redirectAfterPost(c, `/hosts/${encodeURIComponent(hostId)}`);
  });
  routes.post("/hosts/:id/credentials/:slot", admin, async (c) => {
    const slot = c.req.param("slot");
    if (slot !== "repo" && slot !== "admin") {
      throw new RequestError("not_found", `No credential slot ${slot}`);
    }
    await putCredentials(deps, auditOf(c), c.req.param("id"), slot, await readCredentialForm(c));
    return redirectAfterPost(c, `/hosts/${c.req.param("id")}`);
  });
  routes.post("/hosts/:id/bandwidth", operator, async (c) => {
    const form = await readForm(c, BandwidthForm);
    await putBandwidth(deps, auditOf(c), c.req.param("id"), formCap(form.up_kbps), formCap(form.down_kbps));
    return redirectAfterPost(c, `/hosts/${c.req.param("id")}`);
  });
  routes.post("/hosts/:id/keeper", admin, async (c) => {
    const form = await readForm(c, KeeperForm);
    await setKeeper(
      deps,
      auditOf(c),
      c.req.param("id"),
      form.keeper_host_id === "" ? null : form.keeper_host_id,
    );
    return redirectAfterPost(c, `/hosts/${c.req.param("id")}`);
  });
  routes.post("/hosts/:id/deletion-holds/:hid/release", admin, async (c) => {
    const form = await readForm(c, ReleaseHoldBody);
    await releaseHold(deps, auditOf(c), c.req.param("id"), c.req.param("hid"), form.reason);
    return redirectAfterPost(c, `/hosts/${c.req.param("id")}`);
  });
  routes.post("/hosts/:id/jobs", operator, async (c) => {
    const form = await readForm(c, JobBody);
    const job = await startHostJob(deps, auditOf(c), c.req.param("id"), form.kind);
    // Straight to the live job page: the button's feedback is the job itself (issue 17).
    return redirectAfterPost(c, `/jobs/${job.id}`);
  });
  routes.post("/hosts/:id/recover", operator, async (c) => {
    const form = await readForm(c, RecoverForm);
    const host = await requireHost(deps.db, c.req.param("id"));
    await recoverHost(
      deps,
      host,
      {
        inPlace: form.where === "in_place",
        confirmHostname: form.confirm_hostname ?? "",
        targetDir: form.target_dir ?? "",
      },
      actorOf(c),
      clientIp(c),
    );
    // The jobs, one per group, are followed on the host's jobs page.
    return redirectAfterPost(c, `/hosts/${encodeURIComponent(host.id)}/jobs`);
  });
  // Rendered in the response, never redirected: the token is shown once and never in a URL.
  routes.post("/hosts/:id/successor-token", admin, async (c) => {
    await readForm(c, EmptyForm);
    const hostId = c.req.param("id");
    const minted = await mintSuccessorToken(deps, auditOf(c), hostId);
    c.header("Cache-Control", "no-store");
    return renderPage(c, deps.views, "pages/host-successor.njk", {
      title: `Replace ${minted.hostName}`,
      host: { id: hostId, name: minted.hostName },
      minted: { token: minted.token, install_command: minted.installCommand },
    });
  });
  routes.post("/hosts/:id/delete", admin, idButton(deps, deleteHost, "/hosts"));

  // Removed in favour of source groups (run-now) and automatic/manual init jobs.
  routes.post("/hosts/:id/run-backup", (c) =>
    c.text(
      "Gone: run a backup from a source group instead (POST /hosts/{id}/source-groups/{gid}/run, or the Run now button on the host page).",
      410,
    ),
  );
  routes.post("/hosts/:id/init-repo", (c) =>
    c.text(
      'Gone: the repository is initialised automatically when credentials are bound; to run it again use POST /api/hosts/{id}/jobs with {"kind":"init"} or the Initialise button on the host page.',
      410,
    ),
  );
  return routes;
}
