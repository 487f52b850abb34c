/**
 * @module routes/notification-channels
 * Notification channels (admins only), as JSON and as the settings page: create, edit, enable,
 * delete, send a test, and the recent notification log. Secrets go in and never come out: views
 * say only whether each is set. Audit entries name changed fields, never their values.
 */
import { NOTIFICATION_CHANNEL_KINDS, type NotificationChannelKind } from "@fleetback/db";
import { type Context, Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app.js";
import { writeAudit } from "../audit/audit.js";
import { type AppEnv, requireRole } from "../auth/actor.js";
import { clientIp, redirectAfterPost, renderPage } from "../http/render.js";
import { readForm, readJson } from "../http/validate.js";
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
  type NewChannelInput,
  updateChannel,
} from "../notifications/channels.js";
import { listNotificationLog } from "../notifications/notification-log.js";

const Kind = Type.Union(NOTIFICATION_CHANNEL_KINDS.map((kind) => Type.Literal(kind)));
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: "\\S" });
const ConfigBody = Type.Record(Type.String(), Type.Unknown());

const NewChannelBody = Type.Object(
  {
    name: Name,
    kind: Kind,
    enabled: Type.Optional(Type.Boolean()),
    notify_resolved: Type.Optional(Type.Boolean()),
    config: ConfigBody,
  },
  { additionalProperties: false },
);

const ChannelChangeBody = Type.Object(
  {
    name: Type.Optional(Name),
    enabled: Type.Optional(Type.Boolean()),
    notify_resolved: Type.Optional(Type.Boolean()),
    config: Type.Optional(ConfigBody),
  },
  { additionalProperties: false },
);

const formFields: Record<string, ReturnType<typeof Type.Optional>> = {
  name: Type.Optional(Type.String({ maxLength: 100 })),
  kind: Type.Optional(Kind),
  enabled: Type.Optional(Type.Literal("on")),
  notify_resolved: Type.Optional(Type.Literal("on")),
};
for (const name of CONFIG_FORM_FIELDS) {
  formFields[name] = Type.Optional(Type.String({ maxLength: 4096 }));
}
const ChannelForm = Type.Object(formFields, { additionalProperties: false });
const StateForm = Type.Object(
  { state: Type.Union([Type.Literal("enabled"), Type.Literal("disabled")]) },
  { additionalProperties: false },
);
const EmptyForm = Type.Object({}, { additionalProperties: false });

const PAGE_LOG_LIMIT = 50;
const CHANNEL_LOG_LIMIT = 20;

export function notificationChannelRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const admin = requireRole("admin");

  async function audit(
    c: Context<AppEnv>,
    action: string,
    targetId: string,
    details: Record<string, unknown>,
  ) {
    await writeAudit(deps.db, deps.clock, {
      actor: c.get("actor") ?? "system",
      action,
      targetKind: "notification_channel",
      targetId,
      details,
      ip: clientIp(c),
    });
  }

  async function create(c: Context<AppEnv>, input: NewChannelInput) {
    const channel = await createChannel(deps, input);
    await audit(c, "notification_channel.create", channel.row.id, {
      name: channel.row.name,
      kind: channel.row.kind,
      fields: Object.keys(input.config as Record<string, unknown>),
    });
    return channel;
  }

  async function change(c: Context<AppEnv>, id: string, patch: ChannelPatch) {
    const channel = await updateChannel(deps, id, patch);
    const changed = Object.entries({
      name: patch.name,
      enabled: patch.enabled,
      notify_resolved: patch.notifyResolved,
    })
      .filter(([, value]) => value !== undefined)
      .map(([key]) => key);
    await audit(c, "notification_channel.update", id, {
      fields: changed,
      config_fields: Object.keys(patch.config ?? {}),
    });
    return channel;
  }

  async function remove(c: Context<AppEnv>, id: string) {
    const row = await deleteChannel(deps.db, id);
    await audit(c, "notification_channel.delete", id, { name: row.name, kind: row.kind });
  }

  async function test(c: Context<AppEnv>, id: string) {
    const outcome = await deps.notifier.sendTest(id);
    await audit(c, "notification_channel.test", id, { status: outcome.status });
    return outcome;
  }

  routes.get("/api/notification-channels", admin, async (c) => {
    const channels = await listChannels(deps);
    return c.json({ notification_channels: channels.map(channelJson) });
  });
  routes.post("/api/notification-channels", admin, async (c) => {
    const body = await readJson(c, NewChannelBody);
    const channel = await create(c, {
      name: body.name.trim(),
      kind: body.kind,
      enabled: body.enabled,
      notifyResolved: body.notify_resolved,
      config: body.config,
    });
    return c.json({ notification_channel: channelJson(channel) }, 201);
  });
  routes.get("/api/notification-channels/:id", admin, async (c) => {
    const channel = await getChannel(deps, c.req.param("id"));
    const attempts = await listNotificationLog(deps.db, {
      limit: CHANNEL_LOG_LIMIT,
      channelId: channel.row.id,
    });
    return c.json({ notification_channel: channelJson(channel), recent_attempts: attempts });
  });
  routes.put("/api/notification-channels/:id", admin, async (c) => {
    const body = await readJson(c, ChannelChangeBody);
    const channel = await change(c, c.req.param("id"), {
      name: body.name?.trim(),
      enabled: body.enabled,
      notifyResolved: body.notify_resolved,
      config: body.config,
    });
    return c.json({ notification_channel: channelJson(channel) });
  });
  routes.delete("/api/notification-channels/:id", admin, async (c) => {
    await remove(c, c.req.param("id"));
    return c.body(null, 204);
  });
  routes.post("/api/notification-channels/:id/test", admin, async (c) => {
    const outcome = await test(c, c.req.param("id"));
    return c.json({
      result: { status: outcome.status, status_code: outcome.statusCode, error: outcome.error },
    });
  });

  routes.get("/settings/notifications", admin, async (c) => {
    const channels = (await listChannels(deps)).map(channelJson);
    const log = await listNotificationLog(deps.db, { limit: PAGE_LOG_LIMIT });
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
    });
  });
  routes.post("/settings/notifications", admin, async (c) => {
    const form = (await readForm(c, ChannelForm)) as Record<string, string | undefined>;
    const kind = (form.kind ?? "webhook") as NotificationChannelKind;
    await create(c, {
      name: (form.name ?? "").trim(),
      kind,
      enabled: form.enabled === "on",
      notifyResolved: form.notify_resolved === "on",
      config: configFromForm(kind, form, "create"),
    });
    return redirectAfterPost(c, "/settings/notifications");
  });
  routes.post("/settings/notifications/:id", admin, async (c) => {
    const form = (await readForm(c, ChannelForm)) as Record<string, string | undefined>;
    const id = c.req.param("id");
    const current = await getChannel(deps, id);
    await change(c, id, {
      name: form.name?.trim() || undefined,
      notifyResolved: form.notify_resolved === "on",
      config: configFromForm(current.row.kind, form, "update"),
    });
    return redirectAfterPost(c, "/settings/notifications");
  });
  routes.post("/settings/notifications/:id/state", admin, async (c) => {
    const form = await readForm(c, StateForm);
    await change(c, c.req.param("id"), { enabled: form.state === "enabled" });
    return redirectAfterPost(c, "/settings/notifications");
  });
  routes.post("/settings/notifications/:id/delete", admin, async (c) => {
    await readForm(c, EmptyForm);
    await remove(c, c.req.param("id"));
    return redirectAfterPost(c, "/settings/notifications");
  });
  routes.post("/settings/notifications/:id/test", admin, async (c) => {
    await readForm(c, EmptyForm);
    const id = c.req.param("id");
    await test(c, id);
    return redirectAfterPost(c, `/settings/notifications?tested=${encodeURIComponent(id)}`);
  });
  return routes;
}
