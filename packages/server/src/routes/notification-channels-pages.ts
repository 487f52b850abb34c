/**
 * @module routes/notification-channels-pages
 * The notification settings page (admins only): create, edit, enable, delete and test channels,
 * and the recent notification log. Secrets are never shown again once saved. The JSON twins are in
 * routes/notification-channels-api.ts.
 */
import { NOTIFICATION_CHANNEL_KINDS, type NotificationChannelKind } from "@fleetback/db";
import { type Context, Hono } from "hono";
import { type Static, Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import { idButton } from "../auth/id-button.js";
import { redirectAfterPost, renderPage } from "../http/render.js";
import { describeProblems, EmptyForm, invalidFrom, readForm } from "../http/validate.js";
import { ChannelKind } from "../notifications/channel-config.js";
import {
  CONFIG_FORM_FIELDS,
  configFromForm,
  KIND_FIELDS,
  KIND_LABELS,
} from "../notifications/channel-form.js";
import {
  type ChannelPatch,
  channelJson,
  createChannel,
  deleteChannel,
  getChannel,
  listChannels,
  testChannel,
  updateChannel,
} from "../notifications/channels.js";
import {
  DIGEST_FORM_FIELDS,
  describeDigest,
  digestFromForm,
  WEEKDAYS,
} from "../notifications/digest-schedule.js";
import { listNotificationLog } from "../notifications/notification-log.js";
import {
  createReportSchedule,
  deleteReportSchedule,
  listReportSchedules,
  NewReportScheduleBody,
  reportScheduleJson,
} from "../reports/report-schedules.js";

const formFields: Record<string, ReturnType<typeof Type.Optional>> = {
  name: Type.Optional(Type.String({ maxLength: 100 })),
  kind: Type.Optional(ChannelKind),
  enabled: Type.Optional(Type.Literal("on")),
  notify_resolved: Type.Optional(Type.Literal("on")),
};
for (const name of CONFIG_FORM_FIELDS) {
  formFields[name] = Type.Optional(Type.String({ maxLength: 4096 }));
}
for (const name of DIGEST_FORM_FIELDS) {
  formFields[name] = Type.Optional(Type.String({ maxLength: 16 }));
}
const ChannelForm = Type.Object(formFields, { additionalProperties: false });
const StateForm = Type.Object(
  { state: Type.Union([Type.Literal("enabled"), Type.Literal("disabled")]) },
  { additionalProperties: false },
);
const ReportForm = Type.Object(
  {
    name: Type.String({ maxLength: 100 }),
    channel_id: Type.String({ maxLength: 64 }),
    recipients: Type.String({ maxLength: 8192 }),
    period: Type.String({ maxLength: 16 }),
    time: Type.String({ maxLength: 16 }),
    weekday: Type.Optional(Type.String({ maxLength: 4 })),
    selector: Type.Optional(Type.String({ maxLength: 4096 })),
    groups: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { additionalProperties: false },
);

/** The report form as the API's body, so one schema names whatever is wrong. */
function reportBodyOf(form: Static<typeof ReportForm>) {
  const body = {
    name: form.name.trim(),
    channel_id: form.channel_id,
    recipients: form.recipients.split(/[\s,;]+/).filter((address) => address !== ""),
    period: form.period,
    time: form.time,
    // The day select is always sent; it means something for a weekly report only.
    ...(form.period === "weekly" && form.weekday ? { weekday: Number(form.weekday) } : {}),
    selector: form.selector ?? "",
    groups: form.groups ?? "",
  };
  // One textarea holds the list: a bad address is that input's problem ("recipients.2" in JSON).
  const problems = describeProblems(NewReportScheduleBody, body).map((problem) =>
    problem.field.startsWith("recipients.")
      ? {
          field: "recipients",
          message: `${problem.message} (address ${Number(problem.field.slice(11)) + 1})`,
        }
      : problem,
  );
  if (problems.length > 0) {
    throw invalidFrom(problems);
  }
  return body as Static<typeof NewReportScheduleBody>;
}

const PAGE_LOG_LIMIT = 50;

export function notificationChannelPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const admin = requireRole("admin");

  const change = (c: Context<AppEnv>, id: string, patch: ChannelPatch) =>
    updateChannel(deps, auditOf(c), id, patch);

  routes.get("/settings/notifications", admin, async (c) => {
    const channels = (await listChannels(deps))
      .map(channelJson)
      .map((channel) => ({ ...channel, digest_text: describeDigest(channel.digest) }));
    const log = await listNotificationLog(deps.db, { limit: PAGE_LOG_LIMIT });
    const reports = (await listReportSchedules(deps.db)).map(reportScheduleJson);
    // From the evidence page's "mail it" link: the report's selector and groups, to start from.
    const reportDefaults = {
      selector: (c.req.query("report_selector") ?? "").slice(0, 4096),
      groups: (c.req.query("report_groups") ?? "").slice(0, 2048),
    };
    const testedId = c.req.query("tested");
    const tested = testedId
      ? (await listNotificationLog(deps.db, { limit: 10, channelId: testedId })).find(
          (entry) => entry.event === "test",
        )
      : undefined;
    return renderPage(c, deps.views, "pages/notifications.njk", {
      title: "Notifications",
      channels,
      log,
      tested,
      kinds: NOTIFICATION_CHANNEL_KINDS.map((kind) => ({
        kind,
        label: KIND_LABELS[kind],
        fields: KIND_FIELDS[kind],
      })),
      kindFields: KIND_FIELDS,
      kindLabels: KIND_LABELS,
      weekdays: WEEKDAYS,
      timeZone: deps.config.timeZone,
      reports,
      reportDefaults,
      emailChannels: channels.filter((channel) => channel.kind === "email"),
      channelNames: Object.fromEntries(channels.map((channel) => [channel.id, channel.name])),
    });
  });
  routes.post("/settings/notifications", admin, async (c) => {
    const form = (await readForm(c, ChannelForm)) as Record<string, string | undefined>;
    const kind = (form.kind ?? "webhook") as NotificationChannelKind;
    await createChannel(deps, auditOf(c), {
      name: (form.name ?? "").trim(),
      kind,
      enabled: form.enabled === "on",
      notifyResolved: form.notify_resolved === "on",
      digest: digestFromForm(form),
      config: configFromForm(kind, form, "create"),
    });
    return redirectAfterPost(c, "/settings/notifications");
  });
  // Before "/settings/notifications/:id", which would take "reports" for a channel id.
  routes.post("/settings/notifications/reports", admin, async (c) => {
    const form = await readForm(c, ReportForm);
    await createReportSchedule(deps, auditOf(c), reportBodyOf(form));
    return redirectAfterPost(c, "/settings/notifications#reports-heading");
  });
  routes.post(
    "/settings/notifications/reports/:id/delete",
    admin,
    idButton(deps, deleteReportSchedule, "/settings/notifications#reports-heading"),
  );
  routes.post("/settings/notifications/:id", admin, async (c) => {
    const form = (await readForm(c, ChannelForm)) as Record<string, string | undefined>;
    const id = c.req.param("id");
    const current = await getChannel(deps, id);
    await change(c, id, {
      name: form.name?.trim() || undefined,
      notifyResolved: form.notify_resolved === "on",
      digest: digestFromForm(form),
      config: configFromForm(current.row.kind, form, "update"),
    });
    return redirectAfterPost(c, "/settings/notifications");
  });
  routes.post("/settings/notifications/:id/state", admin, async (c) => {
    const form = await readForm(c, StateForm);
    await change(c, c.req.param("id"), { enabled: form.state === "enabled" });
    return redirectAfterPost(c, "/settings/notifications");
  });
  routes.post(
    "/settings/notifications/:id/delete",
    admin,
    idButton(deps, deleteChannel, "/settings/notifications"),
  );
  routes.post("/settings/notifications/:id/test", admin, async (c) => {
    await readForm(c, EmptyForm);
    const id = c.req.param("id");
    await testChannel(deps, auditOf(c), id);
    return redirectAfterPost(c, `/settings/notifications?tested=${encodeURIComponent(id)}`);
  });
  return routes;
}
