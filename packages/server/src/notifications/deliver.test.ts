import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type HttpReceiver, startHttpReceiver } from "../testing/http-receiver.js";
import { type SmtpReceiver, startSmtpReceiver } from "../testing/smtp-receiver.js";
import { useSuiteReceivers } from "../testing/suite-receivers.js";
import { createAddressPolicy } from "./address-policy.js";
import { parseChannelConfig } from "./channel-config.js";
import { attemptDelivery, realDeliveryPorts, signBody } from "./deliver.js";
import { alertNotification, testNotification } from "./message.js";

const alert = {
  id: "01JD0000000000000000000001",
  hostId: "01JD0000000000000000000002",
  kind: "check_failed",
  dedupKey: "",
  message: "repository damaged",
  createdAt: new Date("2026-11-21T12:00:00Z"),
  resolvedAt: new Date("2026-11-21T13:00:00Z"),
};
const resolved = alertNotification(
  "alert.resolved",
  alert,
  { hostName: "sérveur-1" },
  "https://fb.example",
  new Date(),
);
const timeout = () => AbortSignal.timeout(2_000);
/** The receivers listen on 127.0.0.1: allowed the way an operator would allow a local relay. */
const local = createAddressPolicy(["127.0.0.0/8"]);

describe("one delivery attempt", () => {
  let receiver: HttpReceiver;
  let smtp: SmtpReceiver;
  beforeAll(async () => {
    receiver = await startHttpReceiver();
    smtp = await startSmtpReceiver({ username: "mailer", password: "right-password" });
  });
  afterAll(async () => {
    await receiver.close();
    await smtp.close();
  });
  beforeEach(() => {
    receiver.requests.length = 0;
  });

  it("encodes a non-ASCII ntfy title and marks a resolution", async () => {
    const settings = parseChannelConfig("ntfy", { server_url: receiver.url, topic: "t" });
    expect(await attemptDelivery(settings, resolved, realDeliveryPorts, local, timeout(), 2_000)).toEqual({
      ok: true,
      statusCode: 200,
    });
    const [req] = receiver.requests;
    const title = String(req?.headers.title);
    expect(title).toMatch(/^=\?UTF-8\?B\?/);
    expect(Buffer.from(title.slice(10, -2), "base64").toString("utf8")).toBe(
      "Resolved: check_failed on sérveur-1",
    );
    expect(req?.headers.priority).toBe("3");
    expect(req?.headers.tags).toBe("white_check_mark");
    expect(req?.headers.authorization).toBeUndefined();
  });

  it("signs the exact webhook body it sends", async () => {
    const settings = parseChannelConfig("webhook", { url: `${receiver.url}/w`, secret: "0123456789abcdef" });
    await attemptDelivery(
      settings,
      testNotification("w", "https://fb.example", new Date()),
      realDeliveryPorts,
      local,
      timeout(),
      2_000,
    );
    const [req] = receiver.requests;
    expect(req?.headers["x-fleetback-signature"]).toBe(signBody("0123456789abcdef", req?.body ?? ""));
    expect(req?.headers["x-fleetback-event"]).toBe("test");
  });

  it("does not follow redirects and does not retry them", async () => {
    const settings = parseChannelConfig("slack", { url: `${receiver.url}/moved` });
    receiver.reply(302);
    expect(
      await attemptDelivery(settings, resolved, realDeliveryPorts, local, timeout(), 2_000),
    ).toMatchObject({
      ok: false,
      retryable: false,
      statusCode: 302,
      error: expect.stringMatching(/^HTTP 302 \(redirects are not followed\)/),
    });
  });

  it("treats a refused SMTP login as final and a closed SMTP port as worth retrying", async () => {
    const base = { host: smtp.host, security: "none", from: "a@example.com", to: ["b@example.com"] };
    const refused = parseChannelConfig("email", {
      ...base,
      port: smtp.port,
      username: "mailer",
      password: "wrong-pass",
    });
    const result = await attemptDelivery(refused, resolved, realDeliveryPorts, local, timeout(), 2_000);
    expect(result).toMatchObject({ ok: false, retryable: false, statusCode: 535 });
    expect(JSON.stringify(result)).not.toContain("wrong-pass");

    const dead = await startHttpReceiver();
    await dead.close();
    const closed = parseChannelConfig("email", { ...base, port: Number(new URL(dead.url).port) });
    expect(await attemptDelivery(closed, resolved, realDeliveryPorts, local, timeout(), 2_000)).toMatchObject(
      {
        ok: false,
        retryable: true,
        error: expect.stringMatching(/ECONNREFUSED/),
      },
    );
    expect(smtp.messages).toEqual([]);
  });
});

describe("addresses at send time", () => {
  const receivers = useSuiteReceivers();
  const none = createAddressPolicy([]);

  it("refuses a stored literal internal address of every HTTP kind without connecting", async () => {
    const port = new URL(receivers.webhook.url).port;
    const hosts = [
      `127.0.0.1:${port}`,
      `0x7f000001:${port}`,
      `[::1]:${port}`,
      "169.254.169.254",
      "[fd00::1]",
    ];
    const configs = {
      webhook: (base: string) => ({ url: `${base}/w`, secret: "0123456789abcdef" }),
      slack: (base: string) => ({ url: `${base}/s` }),
      discord: (base: string) => ({ url: `${base}/d` }),
      ntfy: (base: string) => ({ server_url: base, topic: "t" }),
      gotify: (base: string) => ({ server_url: base, token: "t" }),
    };
    for (const [kind, config] of Object.entries(configs)) {
      for (const host of hosts) {
        // Parsed without a policy: as a channel saved before the allow-list was narrowed.
        const settings = parseChannelConfig(kind as keyof typeof configs, config(`http://${host}`));
        const result = await attemptDelivery(settings, resolved, realDeliveryPorts, none, timeout(), 2_000);
        expect([kind, host, result]).toEqual([
          kind,
          host,
          {
            ok: false,
            retryable: false,
            error: expect.stringMatching(/ is an? .*address; notifications to internal/),
          },
        ]);
      }
    }
    expect(receivers.webhook.requests).toEqual([]);
  });

  it("refuses an SMTP host that is or resolves to loopback, and allows it when allow-listed", async () => {
    const base = {
      port: receivers.smtp.port,
      security: "none",
      from: "a@example.com",
      to: ["b@example.com"],
    };
    for (const host of ["127.0.0.1", "localhost"]) {
      const settings = parseChannelConfig("email", { ...base, host });
      expect(
        await attemptDelivery(settings, resolved, realDeliveryPorts, none, timeout(), 2_000),
      ).toMatchObject({
        ok: false,
        retryable: false,
        error: expect.stringMatching(/^(127\.0\.0\.1 is|localhost resolves to) a loopback address; /),
      });
    }
    expect(receivers.smtp.messages).toEqual([]);
    const allowLoopback = createAddressPolicy(["127.0.0.0/8", "::1"]);
    const settings = parseChannelConfig("email", { ...base, host: "localhost" });
    const result = await attemptDelivery(
      settings,
      resolved,
      realDeliveryPorts,
      allowLoopback,
      timeout(),
      2_000,
    );
    expect(result).toEqual({ ok: true });
    expect(receivers.smtp.messages).toHaveLength(1);
  });
});

describe("text from hosts in chat messages", () => {
  let receiver: HttpReceiver;
  beforeAll(async () => {
    receiver = await startHttpReceiver();
  });
  afterAll(async () => {
    await receiver.close();
  });
  const hostile = alertNotification(
    "alert.opened",
    { ...alert, message: "cannot read /srv/<!here>&[x](https://evil.example) @everyone" },
    { hostName: "<!channel> <https://evil|click>" },
    "https://fb.example",
    new Date(),
  );

  it("escapes &, < and > in every Slack field that carries data", async () => {
    const settings = parseChannelConfig("slack", { url: `${receiver.url}/s` });
    await attemptDelivery(settings, hostile, realDeliveryPorts, local, timeout(), 2_000);
    const { text } = JSON.parse(receiver.requests.at(-1)?.body ?? "{}") as { text: string };
    expect(text).toContain("&lt;!channel&gt; &lt;https:\u200B//evil|click&gt;");
    expect(text).toContain("/srv/&lt;!here&gt;&amp;[x]");
    // The one link is Fleetback's own; nothing from the host opens a tag.
    expect(text.match(/</g)).toEqual(["<"]);
    expect(text).toMatch(/<https:\/\/fb\.example\/hosts\/[^|>]+\|Open in Fleetback>$/);
  });

  it("sends Discord text with mentions off and no link or mention markup from the host", async () => {
    const settings = parseChannelConfig("discord", { url: `${receiver.url}/d` });
    await attemptDelivery(settings, hostile, realDeliveryPorts, local, timeout(), 2_000);
    const payload = JSON.parse(receiver.requests.at(-1)?.body ?? "{}") as {
      content: string;
      allowed_mentions: unknown;
    };
    expect(payload.allowed_mentions).toEqual({ parse: [] });
    expect(payload.content).toContain("\\<!channel\\> \\<https:\u200B//evil\\|click\\>");
    expect(payload.content).toContain("\\[x\\]\\(https:\u200B//evil.example\\) \\@everyone");
  });

  const marked = alertNotification(
    "alert.opened",
    { ...alert, message: "cannot read /srv/_tmp_/~a~/`x`: see https://phish.example/fix" },
    { hostName: "evil *bold* <https://x.example|click> @everyone https://phish.example" },
    "https://fb.example",
    new Date(),
  );
  const ZW = "\u200B";

  it("neutralises Slack formatting and autolinks in host text", async () => {
    const settings = parseChannelConfig("slack", { url: `${receiver.url}/s` });
    expect(await attemptDelivery(settings, marked, realDeliveryPorts, local, timeout(), 2_000)).toMatchObject(
      {
        ok: true,
      },
    );
    const { text } = JSON.parse(receiver.requests.at(-1)?.body ?? "{}") as { text: string };
    expect(text).toContain(`evil ${ZW}*${ZW}bold${ZW}*${ZW} &lt;https:${ZW}//x.example|click&gt; @everyone`);
    expect(text).toContain(`https:${ZW}//phish.example`);
    expect(text).toContain(`/srv/${ZW}_${ZW}tmp${ZW}_${ZW}/${ZW}~${ZW}a${ZW}~${ZW}/${ZW}\`${ZW}x${ZW}\``);
    // Every formatting character from the host sits inside a word; Fleetback's own bold and link
    // are the only markup left.
    const bare = text.replace(new RegExp(`${ZW}[*_~\`]${ZW}`, "g"), "");
    // Left: Fleetback's bold around the title, and the `_` inside the word check_failed.
    expect(bare.match(/[*_~`]/g)).toEqual(["*", "_", "*"]);
    expect(text).toMatch(/^\*check_failed on /);
    expect(bare).toMatch(/^\*[^*\n]+\*\n/);
    expect(text.match(/https?:\/\//g)).toEqual(["https://"]);
    expect(text).toMatch(/\n<https:\/\/fb\.example\/hosts\/[^|>]+\|Open in Fleetback>$/);
  });

  it("escapes Discord markdown and breaks autolinks in host text", async () => {
    const settings = parseChannelConfig("discord", { url: `${receiver.url}/d` });
    await attemptDelivery(settings, marked, realDeliveryPorts, local, timeout(), 2_000);
    const { content } = JSON.parse(receiver.requests.at(-1)?.body ?? "{}") as { content: string };
    expect(content).toContain(
      `evil \\*bold\\* \\<https:${ZW}//x.example\\|click\\> \\@everyone https:${ZW}//phish.example`,
    );
    expect(content).toContain("/srv/\\_tmp\\_/\\~a\\~/\\`x\\`");
    // The only scheme left whole is the last line: Fleetback's own link to the host page.
    expect(content.match(/https?:\/\//g)).toEqual(["https://"]);
    expect(content).toMatch(/\nhttps:\/\/fb\.example\/hosts\/\S+$/);
  });

  it("asks Gotify for plain text", async () => {
    const settings = parseChannelConfig("gotify", { server_url: receiver.url, token: "t" });
    await attemptDelivery(settings, hostile, realDeliveryPorts, local, timeout(), 2_000);
    const payload = JSON.parse(receiver.requests.at(-1)?.body ?? "{}") as { extras: Record<string, unknown> };
    expect(payload.extras["client::display"]).toEqual({ contentType: "text/plain" });
  });
});
