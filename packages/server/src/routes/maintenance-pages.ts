/**
 * @module routes/maintenance-pages
 * A host's Maintenance tab: its cadences, with the form that changes them, and its repository
 * stats. Viewers read, operators write. The manual jobs of the tab post to /hosts/{id}/jobs
 * (routes/hosts-pages.ts); the JSON twins are in routes/maintenance-api.ts.
 */
import { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, hasRole, requireRole } from "../auth/actor.js";
import { loadHostCredentials } from "../hosts/credentials.js";
import { requireHost } from "../hosts/require-host.js";
import { redirectAfterPost, renderPage } from "../http/render.js";
import { readForm, validate } from "../http/validate.js";
import { agentTooOldMessage, speaksDrill } from "../maintenance/drill-plan.js";
import { lastDrillOf } from "../maintenance/last-drill.js";
import { forgetGroupsOf } from "../maintenance/maintenance-jobs.js";
import {
  MaintenanceBody,
  maintenanceJson,
  readMaintenance,
  updateMaintenance,
} from "../maintenance/maintenance-record.js";
import { repositoryInitialisedEvidence } from "../maintenance/repository-initialised.js";
import { readRepoStats, repoStatsJson } from "../snapshots/repo-stats.js";
import { describeCron } from "../sources/cron-description.js";

const Flag = Type.Optional(Type.String({ maxLength: 8 }));
const MaintenanceForm = Type.Object(
  {
    forget_cron: Type.String({ maxLength: 200 }),
    forget_enabled: Flag,
    prune_cron: Type.String({ maxLength: 200 }),
    prune_enabled: Flag,
    check_cron: Type.String({ maxLength: 200 }),
    check_enabled: Flag,
    check_read_data_subset: Type.String({ maxLength: 32 }),
    // Optional so that a form from before drills existed still saves.
    drill_cron: Type.Optional(Type.String({ maxLength: 200 })),
    drill_enabled: Flag,
    drill_sample_files: Type.Optional(Type.String({ maxLength: 8 })),
  },
  { additionalProperties: false },
);

function integerOrText(value: string): number | string {
  const trimmed = value.trim();
  return /^\d{1,7}$/.test(trimmed) ? Number(trimmed) : trimmed;
}

function bodyFromForm(form: Type.Static<typeof MaintenanceForm>): Record<string, unknown> {
  const on = (value: string | undefined) => value !== undefined && value !== "";
  return {
    forget_cron: form.forget_cron.trim(),
    forget_enabled: on(form.forget_enabled),
    prune_cron: form.prune_cron.trim(),
    prune_enabled: on(form.prune_enabled),
    check_cron: form.check_cron.trim(),
    check_enabled: on(form.check_enabled),
    check_read_data_subset: form.check_read_data_subset.trim(),
    ...(form.drill_cron === undefined
      ? {}
      : { drill_cron: form.drill_cron.trim(), drill_enabled: on(form.drill_enabled) }),
    // A number the schema then bounds; text that is no integer stays text, so the error names the field.
    ...(form.drill_sample_files === undefined
      ? {}
      : { drill_sample_files: integerOrText(form.drill_sample_files) }),
  };
}

export function maintenancePageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  const operator = requireRole("operator");

  routes.get("/hosts/:id/maintenance", viewer, async (c) => {
    const hostId = c.req.param("id");
    const now = deps.clock.now();
    const host = await requireHost(deps.db, hostId);
    const record = await readMaintenance(deps.db, hostId, now);
    const credentials = await loadHostCredentials(deps.db, deps.keys.secret, hostId);
    const maintenanceView = maintenanceJson(record, deps.config.timeZone, now);
    return renderPage(c, deps.views, "pages/host-maintenance.njk", {
      title: `${host.name}: maintenance`,
      host,
      connected: deps.hub.isOnline(hostId),
      maintenance: maintenanceView,
      // Each cadence as a sentence where it has a common shape (issue 17).
      cadenceText: {
        forget: describeCron(maintenanceView.forget_cron),
        prune: describeCron(maintenanceView.prune_cron),
        check: describeCron(maintenanceView.check_cron),
        drill: describeCron(maintenanceView.drill_cron),
      },
      stats: repoStatsJson(await readRepoStats(deps.db, hostId)),
      forgetGroups: await forgetGroupsOf(deps.db, hostId),
      adminBound: credentials.admin.state === "bound",
      // Why a job needing the admin slot (prune, unlock) cannot start; shown beside its button.
      adminRefusal:
        credentials.admin.state === "bound"
          ? undefined
          : credentials.admin.state === "unreadable"
            ? "the admin credentials cannot be read; bind them again on the host page"
            : "needs the admin credentials of the repository; an admin binds them on the host page",
      initialised: await repositoryInitialisedEvidence(deps.db, hostId),
      lastDrill: await lastDrillOf(deps.db, hostId),
      drillRefusal: speaksDrill(host.protocolVersion) ? undefined : agentTooOldMessage(host.protocolVersion),
      canOperate: hasRole(c.get("actor"), "operator"),
      canAdmin: hasRole(c.get("actor"), "admin"),
    });
  });
  routes.post("/hosts/:id/maintenance", operator, async (c) => {
    const form = await readForm(c, MaintenanceForm);
    const body = validate(MaintenanceBody, bodyFromForm(form));
    await updateMaintenance(deps, auditOf(c), c.req.param("id"), body);
    return redirectAfterPost(c, `/hosts/${c.req.param("id")}/maintenance`);
  });
  return routes;
}
