/**
 * @module notifications/channel-config
 * What each channel kind needs to deliver, one TypeBox schema per kind. The whole config is sealed
 * at rest; the fields listed in SECRET_FIELDS are never shown again once saved (the view says only
 * whether they are set), and an update that leaves them out keeps the stored value.
 */
import { NOTIFICATION_CHANNEL_KINDS, type NotificationChannelKind } from "@fleetback/db";
import { type Static, type TSchema, Type } from "typebox";
import { Compile } from "typebox/compile";
import { invalid } from "../errors.js";
import { describeProblems, type FieldProblem } from "../http/validate.js";
import { type AddressPolicy, literalAddress, REFUSAL_HINT } from "./address-policy.js";

export { NOTIFICATION_CHANNEL_KINDS, type NotificationChannelKind };

/** A channel kind as a request names it, in the JSON API and on the settings form alike. */
export const ChannelKind = Type.Union(NOTIFICATION_CHANNEL_KINDS.map((kind) => Type.Literal(kind)));

const Url = Type.String({ minLength: 1, maxLength: 2048 });
const Email = Type.String({ format: "email", maxLength: 320 });
const Token = Type.String({ minLength: 1, maxLength: 512 });

export const WebhookConfig = Type.Object(
  { url: Url, secret: Type.String({ minLength: 16, maxLength: 256 }) },
  { additionalProperties: false },
);
export type WebhookConfig = Static<typeof WebhookConfig>;

export const SlackConfig = Type.Object({ url: Url }, { additionalProperties: false });
export type SlackConfig = Static<typeof SlackConfig>;

export const DiscordConfig = Type.Object({ url: Url }, { additionalProperties: false });
export type DiscordConfig = Static<typeof DiscordConfig>;

export const NtfyConfig = Type.Object(
  {
    server_url: Url,
    // Anyone who knows a topic on a public server can read it, so it is a secret like a token.
    topic: Type.String({ pattern: "^[A-Za-z0-9_-]{1,64}$" }),
    token: Type.Optional(Token),
    priority: Type.Optional(Type.Integer({ minimum: 1, maximum: 5 })),
  },
  { additionalProperties: false },
);
export type NtfyConfig = Static<typeof NtfyConfig>;

export const GotifyConfig = Type.Object(
  { server_url: Url, token: Token, priority: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })) },
  { additionalProperties: false },
);
export type GotifyConfig = Static<typeof GotifyConfig>;

export const SMTP_SECURITY = ["tls", "starttls", "none"] as const;
export type SmtpSecurity = (typeof SMTP_SECURITY)[number];

export const EmailConfig = Type.Object(
  {
    host: Type.String({ pattern: "^[A-Za-z0-9.:\\[\\]-]{1,255}$" }),
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    security: Type.Union(SMTP_SECURITY.map((value) => Type.Literal(value))),
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
    from: Email,
    to: Type.Array(Email, { minItems: 1, maxItems: 20 }),
  },
  { additionalProperties: false },
);
export type EmailConfig = Static<typeof EmailConfig>;

export const CHANNEL_CONFIG_SCHEMAS = {
  webhook: WebhookConfig,
  slack: SlackConfig,
  discord: DiscordConfig,
  ntfy: NtfyConfig,
  gotify: GotifyConfig,
  email: EmailConfig,
} as const satisfies Record<NotificationChannelKind, TSchema>;

/** A kind with its config: the shape delivery switches on. */
export type ChannelSettings = {
  [K in NotificationChannelKind]: { kind: K; config: Static<(typeof CHANNEL_CONFIG_SCHEMAS)[K]> };
}[NotificationChannelKind];

export const SECRET_FIELDS: Record<NotificationChannelKind, readonly string[]> = {
  webhook: ["url", "secret"],
  slack: ["url"],
  discord: ["url"],
  ntfy: ["topic", "token"],
  gotify: ["token"],
  email: ["password"],
};

/** Fields holding an http(s) URL; server URLs must not carry credentials (tokens go in `token`). */
const URL_FIELDS: Record<NotificationChannelKind, readonly string[]> = {
  webhook: ["url"],
  slack: ["url"],
  discord: ["url"],
  ntfy: ["server_url"],
  gotify: ["server_url"],
  email: [],
};
const PUBLIC_URL_FIELDS = new Set(["server_url"]);

const validators = new Map(
  NOTIFICATION_CHANNEL_KINDS.map((kind) => [kind, Compile(CHANNEL_CONFIG_SCHEMAS[kind])] as const),
);

/** A literal internal address is refused when saved; a host name is checked when sending. */
function addressProblem(field: string, host: string, policy: AddressPolicy): FieldProblem | undefined {
  const literal = literalAddress(host);
  const why = literal === undefined ? undefined : policy.refusal(literal);
  return why ? { field, message: `is ${why}; ${REFUSAL_HINT}` } : undefined;
}

function urlProblems(
  kind: NotificationChannelKind,
  config: Record<string, unknown>,
  policy: AddressPolicy | undefined,
): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const refused = (field: string, host: string) => (policy ? addressProblem(field, host, policy) : undefined);
  for (const field of URL_FIELDS[kind]) {
    const value = config[field];
    let url: URL | undefined;
    try {
      url = typeof value === "string" ? new URL(value) : undefined;
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
      problems.push({ field, message: "must be an http:// or https:// URL" });
    } else if (url.username || url.password) {
      // fetch refuses such URLs; a token belongs in the path, the query or the token field.
      problems.push({ field, message: "must not contain user:password@" });
    } else if (PUBLIC_URL_FIELDS.has(field) && (url.search || url.hash)) {
      problems.push({ field, message: "must not contain a query or a fragment (use token)" });
    } else {
      const problem = refused(field, url.hostname);
      if (problem) {
        problems.push(problem);
      }
    }
  }
  const smtpProblem = kind === "email" ? refused("host", String(config.host)) : undefined;
  if (smtpProblem) {
    problems.push(smtpProblem);
  }
  return problems;
}

export type ConfigCheck = { ok: true; settings: ChannelSettings } | { ok: false; problems: FieldProblem[] };

/**
 * Validates a config for `kind`; problems name the field without echoing its value. With a
 * policy (when saving), a literal internal address is refused too; reading a stored config
 * passes none, so a changed allow-list shows at the next send instead of hiding the channel.
 */
export function checkChannelConfig(
  kind: NotificationChannelKind,
  config: unknown,
  policy?: AddressPolicy,
): ConfigCheck {
  const validator = validators.get(kind);
  if (!validator) {
    return { ok: false, problems: [{ field: "kind", message: "is not a channel kind" }] };
  }
  if (!validator.Check(config)) {
    return { ok: false, problems: describeProblems(CHANNEL_CONFIG_SCHEMAS[kind], config) };
  }
  const problems = urlProblems(kind, config as Record<string, unknown>, policy);
  if (problems.length > 0) {
    return { ok: false, problems };
  }
  return { ok: true, settings: { kind, config } as ChannelSettings };
}

/** As checkChannelConfig, for request handlers: throws `invalid` naming `config.<field>`. */
export function parseChannelConfig(
  kind: NotificationChannelKind,
  config: unknown,
  policy?: AddressPolicy,
): ChannelSettings {
  const checked = checkChannelConfig(kind, config, policy);
  if (checked.ok) {
    return checked.settings;
  }
  const problems = checked.problems.map((problem) => ({
    field: problem.field === "body" ? "config" : `config.${problem.field}`,
    message: problem.message,
  }));
  const first = problems[0] ?? { field: "config", message: "is invalid" };
  throw invalid(`${first.field}: ${first.message}`, problems);
}

/**
 * An update's config over the stored one: a field left out keeps its value (so secrets need not
 * be re-sent), `null` removes an optional field. The result is validated as a whole.
 */
export function mergeChannelConfig(
  current: ChannelSettings,
  patch: Record<string, unknown>,
  policy?: AddressPolicy,
): ChannelSettings {
  const merged: Record<string, unknown> = { ...current.config };
  for (const [field, value] of Object.entries(patch)) {
    if (value === null) {
      delete merged[field];
    } else if (value !== undefined) {
      merged[field] = value;
    }
  }
  return parseChannelConfig(current.kind, merged, policy);
}

/** The config without its secrets, plus which secrets are set: what the API and page show. */
export function publicConfig(settings: ChannelSettings): {
  config: Record<string, unknown>;
  secrets: Record<string, boolean>;
} {
  const secretFields = SECRET_FIELDS[settings.kind];
  const config: Record<string, unknown> = {};
  const secrets: Record<string, boolean> = {};
  for (const field of secretFields) {
    secrets[field] = false;
  }
  for (const [field, value] of Object.entries(settings.config)) {
    if (secretFields.includes(field)) {
      secrets[field] = value !== undefined && value !== "";
    } else {
      config[field] = value;
    }
  }
  return { config, secrets };
}

/** Where the channel sends, as a host only: never a path, query or credential. */
export function channelTarget(settings: ChannelSettings): string {
  const hostOf = (value: string) => {
    try {
      return new URL(value).host;
    } catch {
      return "(invalid URL)";
    }
  };
  switch (settings.kind) {
    case "webhook":
    case "slack":
    case "discord":
      return hostOf(settings.config.url);
    case "ntfy":
    case "gotify":
      return hostOf(settings.config.server_url);
    case "email":
      return `${settings.config.host}:${settings.config.port}`;
  }
}

/**
 * Every spelling of the channel's secrets an error text could contain: the values themselves
 * and, for secret URLs, their path and query (where webhook tokens live) and userinfo.
 */
export function secretValues(settings: ChannelSettings): string[] {
  const values: string[] = [];
  const config = settings.config as Record<string, unknown>;
  for (const field of SECRET_FIELDS[settings.kind]) {
    const value = config[field];
    if (typeof value !== "string") {
      continue;
    }
    values.push(value);
    if (URL_FIELDS[settings.kind].includes(field)) {
      try {
        const url = new URL(value);
        values.push(`${url.pathname}${url.search}`, url.search.slice(1), url.username, url.password);
        values.push(...url.pathname.split("/").filter((part) => part.length >= 8));
      } catch {
        // Not a URL: the raw value above covers it.
      }
    }
  }
  return values;
}
