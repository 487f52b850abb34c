/**
 * @module notifications/deliver
 * One delivery attempt to one channel, shaped for its kind. An attempt never throws: it comes
 * back as a value saying whether it was sent, or why not and whether trying again could help.
 * Error texts here may still hold secrets (a server echoing its URL); the notifier scrubs them.
 */
import { createHmac } from "node:crypto";
import nodemailer from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport/index.js";
import type { ChannelSettings, EmailConfig } from "./channel-config.js";
import type { Notification } from "./message.js";

export type AttemptResult =
  | { ok: true; statusCode?: number | undefined }
  | { ok: false; retryable: boolean; statusCode?: number | undefined; error: string };

/** The part of a nodemailer transport an attempt uses. */
export interface MailTransport {
  sendMail(message: { from: string; to: string[]; subject: string; text: string }): Promise<unknown>;
  close(): void;
}
export type MailTransportFactory = (options: SMTPTransport.Options) => MailTransport;

export interface DeliveryPorts {
  fetch: typeof globalThis.fetch;
  createMailTransport: MailTransportFactory;
}

export const realDeliveryPorts: DeliveryPorts = {
  fetch: (input, init) => globalThis.fetch(input, init),
  createMailTransport: (options) => nodemailer.createTransport(options),
};

const USER_AGENT = "Fleetback-Notifier/1";
const DISCORD_LIMIT = 2000;
const SLACK_LIMIT = 3000;

export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

interface HttpRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

function clip(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}

/** ntfy reads RFC 2047 encoded words in headers; fetch refuses non-Latin-1 header values. */
function headerText(text: string): string {
  const oneLine = text.replace(/[\r\n]+/g, " ");
  return /^[\x20-\x7e]*$/.test(oneLine) ? oneLine : `=?UTF-8?B?${Buffer.from(oneLine).toString("base64")}?=`;
}

function serverUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}/${path}`;
}

function httpRequestFor(settings: Exclude<ChannelSettings, { kind: "email" }>, n: Notification): HttpRequest {
  const json = { "Content-Type": "application/json", "User-Agent": USER_AGENT };
  switch (settings.kind) {
    case "webhook": {
      const body = JSON.stringify(n.data);
      return {
        url: settings.config.url,
        body,
        headers: {
          ...json,
          "X-Fleetback-Event": n.event,
          "X-Fleetback-Signature": signBody(settings.config.secret, body),
        },
      };
    }
    case "slack":
      return {
        url: settings.config.url,
        headers: json,
        body: JSON.stringify({
          text: clip(`*${n.title}*\n${n.body}\n<${n.link}|Open in Fleetback>`, SLACK_LIMIT),
        }),
      };
    case "discord":
      return {
        url: settings.config.url,
        headers: json,
        body: JSON.stringify({
          content: clip(`**${n.title}**\n${n.body}\n${n.link}`, DISCORD_LIMIT),
          allowed_mentions: { parse: [] },
        }),
      };
    case "ntfy": {
      const opened = n.event === "alert.opened";
      const headers: Record<string, string> = {
        "Content-Type": "text/plain; charset=utf-8",
        "User-Agent": USER_AGENT,
        Title: headerText(n.title),
        Priority: String(settings.config.priority ?? (opened ? 4 : 3)),
        Tags: opened ? "warning" : n.event === "alert.resolved" ? "white_check_mark" : "bell",
        Click: n.link,
      };
      if (settings.config.token) {
        headers.Authorization = `Bearer ${settings.config.token}`;
      }
      return { url: serverUrl(settings.config.server_url, settings.config.topic), headers, body: n.body };
    }
    case "gotify":
      // The token goes in a header, never the query string, so it cannot end up in access logs.
      return {
        url: serverUrl(settings.config.server_url, "message"),
        headers: { ...json, "X-Gotify-Key": settings.config.token },
        body: JSON.stringify({
          title: n.title,
          message: `${n.body}\n${n.link}`,
          priority: settings.config.priority ?? 5,
          extras: { "client::notification": { click: { url: n.link } } },
        }),
      };
  }
}

function describeError(err: unknown): string {
  if (!(err instanceof Error)) {
    return String(err);
  }
  if (err.name === "TimeoutError") {
    return "timed out";
  }
  if (err.name === "AbortError") {
    return "aborted";
  }
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : "";
  return `${err.message}${cause}`;
}

async function postHttp(
  request: HttpRequest,
  ports: DeliveryPorts,
  signal: AbortSignal,
): Promise<AttemptResult> {
  let res: Response;
  try {
    res = await ports.fetch(request.url, {
      method: "POST",
      headers: request.headers,
      body: request.body,
      // A redirect could carry the secret payload to a host nobody configured.
      redirect: "manual",
      signal,
    });
  } catch (err) {
    return { ok: false, retryable: true, error: describeError(err) };
  }
  const statusCode = res.status;
  if (statusCode >= 200 && statusCode < 300) {
    await res.body?.cancel().catch(() => undefined);
    return { ok: true, statusCode };
  }
  let detail = "";
  try {
    detail = (await res.text()).slice(0, 300).replace(/\s+/g, " ").trim();
  } catch {
    detail = "";
  }
  const retryable = statusCode >= 500 || statusCode === 408 || statusCode === 429;
  const why = statusCode >= 300 && statusCode < 400 ? " (redirects are not followed)" : "";
  return {
    ok: false,
    retryable,
    statusCode,
    error: `HTTP ${statusCode}${why}${detail ? `: ${detail}` : ""}`,
  };
}

function mailOptions(config: EmailConfig, timeoutMs: number): SMTPTransport.Options {
  return {
    host: config.host,
    port: config.port,
    secure: config.security === "tls",
    requireTLS: config.security === "starttls",
    ignoreTLS: config.security === "none",
    ...(config.username ? { auth: { user: config.username, pass: config.password ?? "" } } : {}),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

async function sendEmail(
  config: EmailConfig,
  n: Notification,
  ports: DeliveryPorts,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<AttemptResult> {
  const transport = ports.createMailTransport(mailOptions(config, timeoutMs));
  let onAbort: (() => void) | undefined;
  try {
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason);
      if (signal.aborted) {
        onAbort();
      } else {
        signal.addEventListener("abort", onAbort, { once: true });
      }
    });
    await Promise.race([
      transport.sendMail({
        from: config.from,
        to: config.to,
        subject: `[Fleetback] ${n.title}`,
        text: `${n.body}\n\n${n.link}\n`,
      }),
      aborted,
    ]);
    return { ok: true };
  } catch (err) {
    const responseCode = (err as { responseCode?: unknown }).responseCode;
    const code = typeof responseCode === "number" ? responseCode : undefined;
    // 5xx SMTP replies (bad recipient, authentication refused) will not change on a retry.
    return {
      ok: false,
      retryable: code === undefined || code < 500,
      statusCode: code,
      error: describeError(err),
    };
  } finally {
    if (onAbort) {
      signal.removeEventListener("abort", onAbort);
    }
    transport.close();
  }
}

/** One attempt; `signal` ends it (per-attempt timeout or shutdown). */
export async function attemptDelivery(
  settings: ChannelSettings,
  n: Notification,
  ports: DeliveryPorts,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<AttemptResult> {
  if (settings.kind === "email") {
    return sendEmail(settings.config, n, ports, signal, timeoutMs);
  }
  return postHttp(httpRequestFor(settings, n), ports, signal);
}
