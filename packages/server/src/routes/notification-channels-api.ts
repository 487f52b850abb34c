/**
 * @module routes/notification-channels-api
 * Notification channels as JSON (admins only): create, read with its recent attempts, change,
 * delete, send a test. Secrets go in and never come out: views say only whether each is set. The
 * settings page is in routes/notification-channels-pages.ts.
 */

import type { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf } from "../auth/actor.js";
import { CHANNEL_CONFIG_SCHEMAS, ChannelKind } from "../notifications/channel-config.js";
import {
  channelJson,
  createChannel,
  deleteChannel,
  getChannel,
  listChannels,
  testChannel,
  updateChannel,
} from "../notifications/channels.js";
import { DigestSetting } from "../notifications/digest-schedule.js";
import { listNotificationLog } from "../notifications/notification-log.js";
import {
  NotificationChannelAnswer,
  NotificationChannelDetail,
  NotificationChannelList,
  NotificationTestResult,
} from "../openapi/account-schemas.js";
import { actOnPathId, apiGroup, NO_CONTENT } from "../openapi/api-route.js";

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: "\\S" });
const ConfigBody = Type.Record(Type.String(), Type.Unknown());
const DigestBody = Type.Optional(
  Type.Union([DigestSetting, Type.Null()], {
    description: "a daily or weekly fleet digest at a local time (FLEETBACK_TZ); null for none",
  }),
);

export const NewChannelBody = Type.Object(
  {
    name: Name,
    kind: ChannelKind,
    enabled: Type.Optional(Type.Boolean()),
    notify_resolved: Type.Optional(Type.Boolean()),
    digest: DigestBody,
    config: ConfigBody,
  },
  { additionalProperties: false },
);

export const ChannelChangeBody = Type.Object(
  {
    name: Type.Optional(Name),
    enabled: Type.Optional(Type.Boolean()),
    notify_resolved: Type.Optional(Type.Boolean()),
    digest: DigestBody,
    config: Type.Optional(ConfigBody),
  },
  { additionalProperties: false },
);

const CHANNEL_LOG_LIMIT = 20;

/** The fields of each channel kind's config, from the schemas createChannel checks it with. */
function configFields(): string {
  return Object.entries(CHANNEL_CONFIG_SCHEMAS)
    .map(([kind, schema]) => {
      const required = new Set<string>(schema.required ?? []);
      const fields = Object.keys(schema.properties).map((name) => (required.has(name) ? name : `${name}?`));
      return `${kind} \`{${fields.join(", ")}}\``;
    })
    .join("; ");
}

export const CHANNEL_API = apiGroup<AppDeps>({ tag: "Notifications" });

CHANNEL_API.add({
  id: "listNotificationChannels",
  method: "get",
  path: "/api/notification-channels",
  summary: "List notification channels",
  access: "admin",
  responses: {
    200: {
      description: "Every channel; secrets only say whether they are set.",
      schema: NotificationChannelList,
    },
  },
  handler: async (c, _input, deps) => {
    const channels = await listChannels(deps);
    return c.json({ notification_channels: channels.map(channelJson) });
  },
});

CHANNEL_API.add({
  id: "createNotificationChannel",
  method: "post",
  path: "/api/notification-channels",
  summary: "Add a notification channel",
  description: `\`config\` by kind (a field with ? is optional): ${configFields()}.`,
  access: "admin",
  body: NewChannelBody,
  responses: { 201: { description: "The new channel.", schema: NotificationChannelAnswer } },
  errors: { 409: "A channel with that name exists." },
  handler: async (c, { body }, deps) => {
    const channel = await createChannel(deps, auditOf(c), {
      name: body.name.trim(),
      kind: body.kind,
      enabled: body.enabled,
      notifyResolved: body.notify_resolved,
      digest: body.digest,
      config: body.config,
    });
    return c.json({ notification_channel: channelJson(channel) }, 201);
  },
});

CHANNEL_API.add({
  id: "getNotificationChannel",
  method: "get",
  path: "/api/notification-channels/:id",
  summary: "One channel with its recent delivery attempts",
  access: "admin",
  responses: { 200: { description: "The channel.", schema: NotificationChannelDetail } },
  handler: async (c, _input, deps) => {
    const channel = await getChannel(deps, c.req.param("id"));
    const attempts = await listNotificationLog(deps.db, {
      limit: CHANNEL_LOG_LIMIT,
      channelId: channel.row.id,
    });
    return c.json({ notification_channel: channelJson(channel), recent_attempts: attempts });
  },
});

CHANNEL_API.add({
  id: "updateNotificationChannel",
  method: "put",
  path: "/api/notification-channels/:id",
  summary: "Change a channel",
  description: "A secret left out of `config` keeps its stored value.",
  access: "admin",
  body: ChannelChangeBody,
  responses: { 200: { description: "The channel as changed.", schema: NotificationChannelAnswer } },
  errors: { 409: "A channel with that name exists." },
  handler: async (c, { body }, deps) => {
    const channel = await updateChannel(deps, auditOf(c), c.req.param("id"), {
      name: body.name?.trim(),
      enabled: body.enabled,
      notifyResolved: body.notify_resolved,
      digest: body.digest,
      config: body.config,
    });
    return c.json({ notification_channel: channelJson(channel) });
  },
});

CHANNEL_API.add({
  id: "deleteNotificationChannel",
  method: "delete",
  path: "/api/notification-channels/:id",
  summary: "Delete a channel",
  access: "admin",
  responses: NO_CONTENT,
  handler: actOnPathId(deleteChannel),
});

CHANNEL_API.add({
  id: "testNotificationChannel",
  method: "post",
  path: "/api/notification-channels/:id/test",
  summary: "Send a test notification now and wait for its outcome",
  access: "admin",
  responses: { 200: { description: "How the attempt went.", schema: NotificationTestResult } },
  handler: async (c, _input, deps) => {
    const outcome = await testChannel(deps, auditOf(c), c.req.param("id"));
    return c.json({
      result: { status: outcome.status, status_code: outcome.statusCode, error: outcome.error },
    });
  },
});

export function notificationChannelApiRoutes(deps: AppDeps): Hono<AppEnv> {
  return CHANNEL_API.routes(deps);
}
