/**
 * @module notifications/channel-form
 * The settings page's forms: which inputs each kind shows, and how a submitted form becomes the
 * API's body, so one schema (channel-config.ts) names whatever is wrong. On an edit form an empty
 * secret input keeps the stored secret; an emptied plain input removes that field.
 */
import type { NotificationChannelKind } from "@fleetback/db";
import { SECRET_FIELDS, SMTP_SECURITY } from "./channel-config.js";

export interface FormField {
  name: string;
  label: string;
  input: "url" | "text" | "password" | "number" | "select" | "textarea";
  required: boolean;
  secret: boolean;
  placeholder?: string;
  options?: readonly string[];
}

function field(
  kind: NotificationChannelKind,
  name: string,
  label: string,
  input: FormField["input"],
  extra: { required?: boolean; placeholder?: string; options?: readonly string[] } = {},
): FormField {
  const secret = SECRET_FIELDS[kind].includes(name);
  return {
    name,
    label,
    input: secret && input !== "url" ? "password" : input,
    required: extra.required ?? true,
    secret,
    ...(extra.placeholder ? { placeholder: extra.placeholder } : {}),
    ...(extra.options ? { options: extra.options } : {}),
  };
}

export const KIND_LABELS: Record<NotificationChannelKind, string> = {
  webhook: "Webhook (JSON, signed)",
  slack: "Slack",
  discord: "Discord",
  ntfy: "ntfy",
  gotify: "Gotify",
  email: "Email (SMTP)",
};

export const KIND_FIELDS: Record<NotificationChannelKind, FormField[]> = {
  webhook: [
    field("webhook", "url", "URL", "url", { placeholder: "https://example.com/hooks/fleetback" }),
    field("webhook", "secret", "Signing secret (at least 16 characters)", "password"),
  ],
  slack: [
    field("slack", "url", "Incoming webhook URL", "url", {
      placeholder: "https://hooks.slack.com/services/…",
    }),
  ],
  discord: [
    field("discord", "url", "Webhook URL", "url", { placeholder: "https://discord.com/api/webhooks/…" }),
  ],
  ntfy: [
    field("ntfy", "server_url", "Server", "url", { placeholder: "https://ntfy.sh" }),
    field("ntfy", "topic", "Topic", "password"),
    field("ntfy", "token", "Access token (optional)", "password", { required: false }),
    field("ntfy", "priority", "Priority 1–5 (optional)", "number", { required: false }),
  ],
  gotify: [
    field("gotify", "server_url", "Server", "url", { placeholder: "https://gotify.example.com" }),
    field("gotify", "token", "Application token", "password"),
    field("gotify", "priority", "Priority 0–10 (optional)", "number", { required: false }),
  ],
  email: [
    field("email", "host", "SMTP host", "text", { placeholder: "smtp.example.com" }),
    field("email", "port", "Port", "number", { placeholder: "587" }),
    field("email", "security", "Security", "select", { options: SMTP_SECURITY }),
    field("email", "username", "Username (optional)", "text", { required: false }),
    field("email", "password", "Password (optional)", "password", { required: false }),
    field("email", "from", "From address", "text", { placeholder: "fleetback@example.com" }),
    field("email", "to", "To addresses, one per line", "textarea"),
  ],
};

const NUMBER_FIELDS = new Set(["port", "priority"]);

function convert(name: string, raw: string): unknown {
  if (NUMBER_FIELDS.has(name) && /^[0-9]{1,9}$/.test(raw)) {
    return Number(raw);
  }
  if (name === "to") {
    return raw.split(/[\s,;]+/).filter((address) => address !== "");
  }
  return raw;
}

/**
 * The config part of a submitted form. `mode: "create"` leaves empty inputs out; `"update"` keeps
 * secrets left empty and removes plain fields that were emptied (null).
 */
export function configFromForm(
  kind: NotificationChannelKind,
  form: Record<string, string | string[] | undefined>,
  mode: "create" | "update",
): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const spec of KIND_FIELDS[kind]) {
    const value = form[spec.name];
    const raw = (Array.isArray(value) ? value.join("\n") : (value ?? "")).trim();
    if (raw !== "") {
      config[spec.name] = convert(spec.name, raw);
    } else if (mode === "update" && !spec.secret && value !== undefined) {
      config[spec.name] = null;
    }
  }
  return config;
}

/** Every input name any kind's form may send. */
export const CONFIG_FORM_FIELDS: readonly string[] = [
  ...new Set(Object.values(KIND_FIELDS).flatMap((fields) => fields.map((spec) => spec.name))),
];
