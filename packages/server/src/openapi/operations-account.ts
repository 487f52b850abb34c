/**
 * @module openapi/operations-account
 * Signing in, users, API tokens, the audit trail and notification channels.
 */
import { AuditQuery } from "../audit/audit-query.js";
import { NewApiTokenInput } from "../auth/api-token-input.js";
import { NewUserInput } from "../auth/user-input.js";
import { CHANNEL_CONFIG_SCHEMAS } from "../notifications/channel-config.js";
import { BootstrapBody, Credentials, PasswordChangeBody } from "../routes/auth-api.js";
import { ChannelChangeBody, NewChannelBody } from "../routes/notification-channels-api.js";
import { PasswordReset, UserChange } from "../routes/users-api.js";
import {
  ApiTokenCreated,
  ApiTokenList,
  AuditPage,
  MeAnswer,
  NotificationChannelAnswer,
  NotificationChannelDetail,
  NotificationChannelList,
  NotificationTestResult,
  UserAnswer,
  UserChanged,
  UserList,
} from "./account-schemas.js";
import type { ApiOperation } from "./operation.js";

const NO_CONTENT = { 204: { description: "Done." } } as const;

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

export const ACCOUNT_OPERATIONS: ApiOperation[] = [
  {
    id: "bootstrap",
    method: "post",
    path: "/api/auth/bootstrap",
    tag: "Auth",
    summary: "Create the first admin with the bootstrap token",
    description: "Only while no user exists; signs the new admin in (sets the session cookie).",
    access: "public",
    body: BootstrapBody,
    responses: { 201: { description: "The admin, signed in.", schema: UserAnswer } },
    errors: { 401: "The bootstrap token is wrong.", 409: "An admin already exists." },
  },
  {
    id: "login",
    method: "post",
    path: "/api/auth/login",
    tag: "Auth",
    summary: "Sign in",
    description: "Sets the `fleetback_session` cookie (HttpOnly, 12 h idle, 7 days at most).",
    access: "public",
    body: Credentials,
    responses: { 200: { description: "Signed in.", schema: UserAnswer } },
    errors: {
      401: "Username or password is wrong.",
      429: "Too many attempts from this address or for this user.",
    },
  },
  {
    id: "logout",
    method: "post",
    path: "/api/auth/logout",
    tag: "Auth",
    summary: "Sign out (ends this session)",
    access: "viewer",
    responses: NO_CONTENT,
  },
  {
    id: "getMe",
    method: "get",
    path: "/api/auth/me",
    tag: "Auth",
    summary: "Who the caller is",
    access: "viewer",
    responses: { 200: { description: "The caller.", schema: MeAnswer } },
  },
  {
    id: "changeMyPassword",
    method: "put",
    path: "/api/auth/me/password",
    tag: "Auth",
    summary: "Change your own password",
    description: "Your other sessions end; this one stays.",
    access: "viewer",
    body: PasswordChangeBody,
    responses: NO_CONTENT,
    errors: { 429: "Too many wrong current passwords." },
  },
  {
    id: "listUsers",
    method: "get",
    path: "/api/users",
    tag: "Users",
    summary: "List users",
    access: "admin",
    responses: { 200: { description: "Every user.", schema: UserList } },
  },
  {
    id: "createUser",
    method: "post",
    path: "/api/users",
    tag: "Users",
    summary: "Add a user",
    access: "admin",
    body: NewUserInput,
    responses: { 201: { description: "The new user.", schema: UserAnswer } },
    errors: { 409: "The username is taken." },
  },
  {
    id: "updateUser",
    method: "put",
    path: "/api/users/:id",
    tag: "Users",
    summary: "Change a user's role, password or disabled flag",
    description: "The user's sessions end, so the change takes effect at once.",
    access: "admin",
    body: UserChange,
    responses: { 200: { description: "The user as changed.", schema: UserChanged } },
    errors: { 409: "The last enabled admin cannot be demoted or disabled." },
  },
  {
    id: "resetUserPassword",
    method: "post",
    path: "/api/users/:id/password",
    tag: "Users",
    summary: "Set another user's password",
    description: "That user is signed out everywhere.",
    access: "admin",
    body: PasswordReset,
    responses: NO_CONTENT,
    errors: { 409: "Your own password is changed with PUT /api/auth/me/password." },
  },
  {
    id: "deleteUser",
    method: "delete",
    path: "/api/users/:id",
    tag: "Users",
    summary: "Delete a user",
    access: "admin",
    responses: NO_CONTENT,
    errors: { 409: "The last enabled admin cannot be deleted." },
  },
  {
    id: "listApiTokens",
    method: "get",
    path: "/api/api-tokens",
    tag: "API tokens",
    summary: "List your API tokens (never their secret)",
    access: "viewer",
    responses: { 200: { description: "The caller's tokens.", schema: ApiTokenList } },
  },
  {
    id: "createApiToken",
    method: "post",
    path: "/api/api-tokens",
    tag: "API tokens",
    summary: "Make an API token",
    description:
      "It acts with your role. The secret is in this answer only. Made with an API token that expires, it expires no later than that token: no `expires_at`, or a later one, gets that token's expiry (the answer shows it).",
    access: "viewer",
    body: NewApiTokenInput,
    responses: { 201: { description: "The token and its secret.", schema: ApiTokenCreated } },
  },
  {
    id: "revokeApiToken",
    method: "delete",
    path: "/api/api-tokens/:id",
    tag: "API tokens",
    summary: "Revoke one of your API tokens",
    access: "viewer",
    responses: NO_CONTENT,
  },
  {
    id: "listAudit",
    method: "get",
    path: "/api/audit",
    tag: "Audit",
    summary: "The audit trail, newest first",
    access: "admin",
    query: AuditQuery,
    responses: { 200: { description: "A page of entries.", schema: AuditPage } },
  },
  {
    id: "listNotificationChannels",
    method: "get",
    path: "/api/notification-channels",
    tag: "Notifications",
    summary: "List notification channels",
    access: "admin",
    responses: {
      200: {
        description: "Every channel; secrets only say whether they are set.",
        schema: NotificationChannelList,
      },
    },
  },
  {
    id: "createNotificationChannel",
    method: "post",
    path: "/api/notification-channels",
    tag: "Notifications",
    summary: "Add a notification channel",
    description: `\`config\` by kind (a field with ? is optional): ${configFields()}.`,
    access: "admin",
    body: NewChannelBody,
    responses: { 201: { description: "The new channel.", schema: NotificationChannelAnswer } },
    errors: { 409: "A channel with that name exists." },
  },
  {
    id: "getNotificationChannel",
    method: "get",
    path: "/api/notification-channels/:id",
    tag: "Notifications",
    summary: "One channel with its recent delivery attempts",
    access: "admin",
    responses: { 200: { description: "The channel.", schema: NotificationChannelDetail } },
  },
  {
    id: "updateNotificationChannel",
    method: "put",
    path: "/api/notification-channels/:id",
    tag: "Notifications",
    summary: "Change a channel",
    description: "A secret left out of `config` keeps its stored value.",
    access: "admin",
    body: ChannelChangeBody,
    responses: { 200: { description: "The channel as changed.", schema: NotificationChannelAnswer } },
    errors: { 409: "A channel with that name exists." },
  },
  {
    id: "deleteNotificationChannel",
    method: "delete",
    path: "/api/notification-channels/:id",
    tag: "Notifications",
    summary: "Delete a channel",
    access: "admin",
    responses: NO_CONTENT,
  },
  {
    id: "testNotificationChannel",
    method: "post",
    path: "/api/notification-channels/:id/test",
    tag: "Notifications",
    summary: "Send a test notification now and wait for its outcome",
    access: "admin",
    responses: { 200: { description: "How the attempt went.", schema: NotificationTestResult } },
  },
];
