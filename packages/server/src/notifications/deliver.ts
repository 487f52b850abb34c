/**
 * @module notifications/deliver
 * One delivery attempt to one channel, shaped for its kind. An attempt never throws: it comes
 * back as a value saying whether it was sent, or why not and whether trying again could help.
 * Error texts here may still hold secrets (a URL in a connection error); the notifier scrubs them.
 * A failed answer is reported by its status alone: its body is never read, so a channel pointed at
 * some internal service cannot be used to read that service's answers. Every connection goes only
 * to an address the policy allows (address-policy.ts).
 */
import { createHmac } from "node:crypto";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type SMTPTransport from "nodemailer/lib/smtp-transport/index.js";
import {
  type AddressPolicy,
  AddressRefusedError,
  guardedLookup,
  literalRefusal,
  resolveChecked,
} from "./address-policy.js";
import type { ChannelSettings, EmailConfig } from "./channel-config.js";
import { discordEscape, slackEntities, slackEscape } from "./chat-escape.js";
import type { Notification } from "./message.js";

export type AttemptResult =
  | { ok: true; statusCode?: number | undefined }
  | { ok: false; retryable: boolean; statusCode?: number | undefined; error: string };

/** The part of a nodemailer transport an attempt uses. */
export interface MailTransport {
  sendMail(message: {
    from: string;
    to: string[];
    subject: string;
    text: string;
    html?: string;
    attachments?: Array<{ filename: string; contentType: string; content: string }>;
  }): Promise<unknown>;
  close(): void;
}
export type MailTransportFactory = (options: SMTPTransport.Options) => Promise<MailTransport>;

export interface DeliveryPorts {
  createMailTransport: MailTransportFactory;
}

export const realDeliveryPorts: DeliveryPorts = {
  // Loaded on the first mail: nodemailer costs an idle server ~14 MiB, and most never send one.
  createMailTransport: async (options) => (await import("nodemailer")).default.createTransport(options),
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

/** ntfy reads RFC 2047 encoded words in headers; Node refuses non-Latin-1 header values. */
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
          text: clip(
            `*${slackEscape(n.title)}*\n${slackEscape(n.body)}\n<${slackEntities(n.link)}|Open in Fleetback>`,
            SLACK_LIMIT,
          ),
        }),
      };
    case "discord":
      return {
        url: settings.config.url,
        headers: json,
        body: JSON.stringify({
          content: clip(`**${discordEscape(n.title)}**\n${discordEscape(n.body)}\n${n.link}`, DISCORD_LIMIT),
          allowed_mentions: { parse: [] },
        }),
      };
    case "ntfy": {
      // No `Markdown: yes` header: ntfy shows the body as plain text, links in it are not rendered.
      const opened = n.event === "alert.opened";
      const headers: Record<string, string> = {
        "Content-Type": "text/plain; charset=utf-8",
        "User-Agent": USER_AGENT,
        Title: headerText(n.title),
        Priority: String(settings.config.priority ?? (opened ? 4 : 3)),
        Tags: opened
          ? "warning"
          : n.event === "alert.resolved"
            ? "white_check_mark"
            : n.event === "digest"
              ? "clipboard"
              : "bell",
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
          // Plain text, so a host name cannot add markdown links or images to the message.
          extras: {
            "client::display": { contentType: "text/plain" },
            "client::notification": { click: { url: n.link } },
          },
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

/** POSTs and resolves with the answer's head; the body is left unread. */
function post(request: HttpRequest, policy: AddressPolicy, signal: AbortSignal): Promise<IncomingMessage> {
  const url = new URL(request.url);
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    // Node connects to a literal IP without asking `lookup`: such a host is checked here.
    const refused = literalRefusal(url.hostname, policy);
    if (refused) {
      reject(refused);
      return;
    }
    const req = send(url, {
      method: "POST",
      headers: { ...request.headers, "Content-Length": String(Buffer.byteLength(request.body)) },
      // Resolves, checks every address and connects to a checked one.
      lookup: guardedLookup(policy),
      // A pooled socket could outlive the check that opened it; notifications are rare.
      agent: false,
      signal,
    });
    req.on("response", resolve);
    req.on("error", reject);
    req.end(request.body);
  });
}

async function postHttp(
  request: HttpRequest,
  policy: AddressPolicy,
  signal: AbortSignal,
): Promise<AttemptResult> {
  let res: IncomingMessage;
  try {
    res = await post(request, policy, signal);
  } catch (err) {
    if (err instanceof AddressRefusedError) {
      return { ok: false, retryable: false, error: err.message };
    }
    return { ok: false, retryable: true, error: describeError(signal.aborted ? signal.reason : err) };
  }
  const statusCode = res.statusCode ?? 0;
  // The body is never read: only the status leaves this function (see the module comment).
  res.destroy();
  if (statusCode >= 200 && statusCode < 300) {
    return { ok: true, statusCode };
  }
  const retryable = statusCode >= 500 || statusCode === 408 || statusCode === 429;
  // Redirects are not followed: one could carry the payload to a host nobody configured or checked.
  const why = statusCode >= 300 && statusCode < 400 ? " (redirects are not followed)" : "";
  return { ok: false, retryable, statusCode, error: `HTTP ${statusCode}${why}` };
}

/** `address` is the checked address of config.host; TLS still verifies the certificate for the name. */
function mailOptions(config: EmailConfig, address: string, timeoutMs: number): SMTPTransport.Options {
  return {
    host: address,
    ...(address !== config.host && !config.host.startsWith("[") ? { servername: config.host } : {}),
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

/** The server's own words are left out, as an HTTP body is: only the reply code and kind. */
function describeMailError(err: unknown): string {
  const { response, responseCode, code } = err as {
    response?: unknown;
    responseCode?: unknown;
    code?: unknown;
  };
  if (typeof response !== "string") {
    return describeError(err);
  }
  const kind = typeof code === "string" ? ` (${code})` : "";
  return `SMTP ${typeof responseCode === "number" ? responseCode : "error"}${kind}`;
}

async function sendEmail(
  config: EmailConfig,
  n: Notification,
  ports: DeliveryPorts,
  policy: AddressPolicy,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<AttemptResult> {
  let onAbort: (() => void) | undefined;
  let transport: MailTransport | undefined;
  try {
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason);
      if (signal.aborted) {
        onAbort();
      } else {
        signal.addEventListener("abort", onAbort, { once: true });
      }
    });
    // Resolved and checked here, then the transport connects to that address and never resolves
    // the name itself, so a second DNS answer cannot point it elsewhere.
    const address = await Promise.race([resolveChecked(config.host, policy), aborted]);
    transport = await ports.createMailTransport(mailOptions(config, address, timeoutMs));
    await Promise.race([
      transport.sendMail({
        from: config.from,
        // A scheduled report goes to its own list through the channel's server.
        to: n.to ?? config.to,
        subject: `[Fleetback] ${n.title}`,
        text: `${n.body}\n\n${n.link}\n`,
        // A digest goes as HTML with the text as its alternative part.
        ...(n.html ? { html: n.html } : {}),
        ...(n.attachment ? { attachments: [n.attachment] } : {}),
      }),
      aborted,
    ]);
    return { ok: true };
  } catch (err) {
    if (err instanceof AddressRefusedError) {
      return { ok: false, retryable: false, error: err.message };
    }
    const responseCode = (err as { responseCode?: unknown }).responseCode;
    const code = typeof responseCode === "number" ? responseCode : undefined;
    // 5xx SMTP replies (bad recipient, authentication refused) will not change on a retry.
    return {
      ok: false,
      retryable: code === undefined || code < 500,
      statusCode: code,
      error: describeMailError(err),
    };
  } finally {
    if (onAbort) {
      signal.removeEventListener("abort", onAbort);
    }
    transport?.close();
  }
}

/** One attempt; `signal` ends it (per-attempt timeout or shutdown). */
export async function attemptDelivery(
  settings: ChannelSettings,
  n: Notification,
  ports: DeliveryPorts,
  policy: AddressPolicy,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<AttemptResult> {
  if (settings.kind === "email") {
    return sendEmail(settings.config, n, ports, policy, signal, timeoutMs);
  }
  return postHttp(httpRequestFor(settings, n), policy, signal);
}
