/**
 * @module openapi/account-schemas
 * Answers about people and what they hold: users (auth/user-view.ts userView), API tokens
 * (routes/api-tokens-api.ts view), the audit trail (routes/audit-api.ts) and notification
 * channels with their delivery attempts (notifications/channels.ts channelJson,
 * notifications/notification-log.ts).
 */

import {
  AUDIT_ACTOR_KINDS,
  NOTIFICATION_CHANNEL_KINDS,
  NOTIFICATION_STATUSES,
  USER_ROLES,
} from "@fleetback/db";
import { Type } from "typebox";
import { DigestSetting } from "../notifications/digest-schedule.js";
import {
  DateTime,
  Enum,
  Id,
  JsonObject,
  Nullable,
  NullableDateTime,
  NullableInteger,
  NullableString,
} from "./common-schemas.js";
import { NextBefore } from "./job-schemas.js";

const signedInFields = { id: Id, username: Type.String(), role: Enum(USER_ROLES) };
const userFields = {
  ...signedInFields,
  sso: Type.Boolean({ description: "Signs in through the OpenID provider; has no local password." }),
};

export const User = Type.Object(userFields, { $id: "User" });
export const UserAnswer = Type.Object({ user: User });
export const MeAnswer = Type.Object({ user: Nullable(Type.Object(signedInFields)) });
export const UserList = Type.Object({
  users: Type.Array(Type.Object({ ...userFields, disabled: Type.Boolean(), created_at: DateTime })),
});
export const UserChanged = Type.Object({ user: Type.Object({ ...userFields, disabled: Type.Boolean() }) });

export const ApiToken = Type.Object(
  {
    id: Id,
    name: Type.String(),
    created_at: DateTime,
    last_used_at: NullableDateTime,
    revoked_at: NullableDateTime,
    expires_at: NullableDateTime,
    expired: Type.Boolean(),
  },
  { $id: "ApiToken" },
);
export const ApiTokenList = Type.Object({ api_tokens: Type.Array(ApiToken) });
export const ApiTokenCreated = Type.Object({
  token: Type.String({ description: "the secret, shown this once: send it as `Authorization: Bearer`" }),
  api_token: ApiToken,
});

export const AuditPage = Type.Object({
  entries: Type.Array(
    Type.Object(
      {
        id: Id,
        at: DateTime,
        actor_kind: Enum(AUDIT_ACTOR_KINDS),
        actor_user_id: NullableString,
        username: NullableString,
        actor_sso: Type.Boolean({ description: "the acting user signs in through the identity provider" }),
        action: Type.String(),
        target_kind: NullableString,
        target_id: NullableString,
        target_name: NullableString,
        target_sso: Type.Boolean({
          description: "the target is a user who signs in through the identity provider",
        }),
        details: JsonObject,
        ip: NullableString,
      },
      { $id: "AuditEntry" },
    ),
  ),
  next_before: NextBefore,
});

export const NotificationChannel = Type.Object(
  {
    id: Id,
    name: Type.String(),
    kind: Enum(NOTIFICATION_CHANNEL_KINDS),
    enabled: Type.Boolean(),
    notify_resolved: Type.Boolean(),
    digest: Type.Union([DigestSetting, Type.Null()], {
      description: "the fleet digest this channel gets (daily or weekly at a local time), or none",
    }),
    target: Type.Union([Type.String(), Type.Null()], { description: "where it sends, as a host only" }),
    config: Type.Record(Type.String(), Type.Unknown(), { description: "the settings that are not secret" }),
    secrets: Type.Record(Type.String(), Type.Boolean(), { description: "whether each secret is set" }),
    problem: Type.Union([Type.String(), Type.Null()], {
      description: "why the stored config cannot be used",
    }),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { $id: "NotificationChannel" },
);
export const NotificationChannelList = Type.Object({
  notification_channels: Type.Array(NotificationChannel),
});
export const NotificationChannelAnswer = Type.Object({ notification_channel: NotificationChannel });
export const NotificationChannelDetail = Type.Object({
  notification_channel: NotificationChannel,
  recent_attempts: Type.Array(
    Type.Object({
      id: Id,
      channel_id: Id,
      channel_name: Type.String(),
      channel_kind: Type.String(),
      alert_id: NullableString,
      host_id: NullableString,
      host_name: NullableString,
      event: Enum(["alert.opened", "alert.resolved", "test"]),
      attempt: Type.Integer({ minimum: 1 }),
      status: Enum(NOTIFICATION_STATUSES),
      status_code: NullableInteger,
      error: NullableString,
      created_at: DateTime,
    }),
    { description: "the newest 20 delivery attempts" },
  ),
});
export const NotificationTestResult = Type.Object({
  result: Type.Object({
    status: Enum(["sent", "failed"]),
    status_code: NullableInteger,
    error: NullableString,
  }),
});
