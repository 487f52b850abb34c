/**
 * @module testing/smtp-receiver
 * A real SMTP server (the smtp-server package) on port 0, plain text with AUTH allowed, that
 * records each message with its envelope and the credentials it was sent with.
 */
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { eventually } from "./eventually.js";

export interface ReceivedMail {
  from: string;
  to: string[];
  /** The whole message as sent: headers, blank line, body. */
  raw: string;
  username: string | undefined;
  password: string | undefined;
}

export interface SmtpReceiver {
  host: string;
  port: number;
  messages: ReceivedMail[];
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

/** An email channel's config that sends through `smtp` to `to`. */
export function mailChannelConfig(smtp: Pick<SmtpReceiver, "host" | "port">, to: string[]) {
  return { host: smtp.host, port: smtp.port, security: "none", from: "fleetback@example.org", to };
}

export async function startSmtpReceiver(
  options: { username?: string; password?: string } = {},
): Promise<SmtpReceiver> {
  const messages: ReceivedMail[] = [];
  const logins = new Map<string, { username: string; password: string }>();
  const server = new SMTPServer({
    authOptional: options.username === undefined,
    allowInsecureAuth: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onAuth(auth, session, callback) {
      if (auth.username !== options.username || auth.password !== options.password) {
        callback(new Error("Invalid username or password"));
        return;
      }
      logins.set(session.id, { username: auth.username ?? "", password: auth.password ?? "" });
      callback(null, { user: auth.username });
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const login = logins.get(session.id);
        const mailFrom = session.envelope.mailFrom;
        messages.push({
          from: mailFrom ? mailFrom.address : "",
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw: Buffer.concat(chunks).toString("utf8"),
          username: login?.username,
          password: login?.password,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    host: "127.0.0.1",
    port,
    messages,
    // A hang guard, not a budget: a loaded machine is slow, not broken.
    waitFor(count, timeoutMs = 30_000) {
      return eventually(
        () => messages,
        (seen) => seen.length >= count,
        { timeoutMs, what: `${count} message(s) at the SMTP receiver` },
      );
    },
    close() {
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The parts of a MIME message by their headers, bodies decoded. */
export function mailParts(raw: string): Array<{ headers: string; body: string }> {
  const boundaries = [...raw.matchAll(/boundary="?([^";\r\n]+)"?/g)].map((m) => m[1] as string);
  let parts = [raw];
  for (const boundary of boundaries) {
    parts = parts.flatMap((part) => (part.includes(`--${boundary}`) ? part.split(`--${boundary}`) : [part]));
  }
  return parts.flatMap((part) => {
    const split = part.search(/\r?\n\r?\n/);
    if (split < 0) {
      return [];
    }
    const headers = part.slice(0, split).replace(/\r?\n[ \t]+/g, " ");
    const content = part.slice(split).replace(/^\r?\n\r?\n/, "");
    const encoding = /Content-Transfer-Encoding: (\S+)/i.exec(headers)?.[1]?.toLowerCase();
    const body =
      encoding === "base64"
        ? Buffer.from(content.replace(/\s+/g, ""), "base64").toString("utf8")
        : encoding === "quoted-printable"
          ? Buffer.from(
              content
                .replace(/=\r?\n/g, "")
                .replace(/=([0-9A-F]{2})/g, (_, hex: string) =>
                  String.fromCharCode(Number.parseInt(hex, 16)),
                ),
              "latin1",
            ).toString("utf8")
          : content;
    return [{ headers, body }];
  });
}
