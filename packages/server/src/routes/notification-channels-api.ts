/**
 * @module routes/notification-channels-api
 * Notification channels as JSON (admins only): create, read with its recent attempts, change,
 * delete, send a test. Secrets go in and never come out: views say only whether each is set. The
 * settings page is in routes/notification-channels-pages.ts.
 */
import { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import { readJson } from "../http/validate.js";
import { ChannelKind } from "../notifications/channel-config.js";
import {
  channelJson,
  createChannel,
  deleteChannel,
  getChannel,
  listChannels,
  testChannel,
  updateChannel,
} from "../notifications/channels.js";
import { listNotificationLog } from "../notifications/notification-log.js";

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: "\\S" });
const ConfigBody = Type.Record(Type.String(), Type.Unknown());

export const NewChannelBody = Type.Object(
  {
    name: Name,
    kind: ChannelKind,
    enabled: Type.Optional(Type.Boolean()),
    notify_resolved: Type.Optional(Type.Boolean()),
    config: ConfigBody,
  },
  { additionalProperties: false },
);

export const ChannelChangeBody = Type.Object(
  {
    name: Type.Optional(Name),
    enabled: Type.Optional(Type.Boolean()),
    notify_resolved: Type.Optional(Type.Boolean()),
    config: Type.Optional(ConfigBody),
  },
  { additionalProperties: false },
);

const CHANNEL_LOG_LIMIT = 20;

export function notificationChannelApiRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const admin = requireRole("admin");

  routes.get("/api/notification-channels", admin, async (c) => {
    const channels = await listChannels(deps);
    return c.json({ notification_channels: channels.map(channelJson) });
  });
  routes.post("/api/notification-channels", admin, async (c) => {
    const body = await readJson(c, NewChannelBody);
    const channel = await createChannel(deps, auditOf(c), {
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
    const channel = await updateChannel(deps, auditOf(c), c.req.param("id"), {
      name: body.name?.trim(),
      enabled: body.enabled,
      notifyResolved: body.notify_resolved,
      config: body.config,
    });
    return c.json({ notification_channel: channelJson(channel) });
  });
  routes.delete("/api/notification-channels/:id", admin, async (c) => {
    await deleteChannel(deps, auditOf(c), c.req.param("id"));
    return c.body(null, 204);
  });
  routes.post("/api/notification-channels/:id/test", admin, async (c) => {
    const outcome = await testChannel(deps, auditOf(c), c.req.param("id"));
    return c.json({
      result: { status: outcome.status, status_code: outcome.statusCode, error: outcome.error },
    });
  });
  return routes;
}
