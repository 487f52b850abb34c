import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type HttpReceiver, startHttpReceiver } from "../testing/http-receiver.js";
import { type SmtpReceiver, startSmtpReceiver } from "../testing/smtp-receiver.js";
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
    expect(await attemptDelivery(settings, resolved, realDeliveryPorts, timeout(), 2_000)).toEqual({
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
    expect(await attemptDelivery(settings, resolved, realDeliveryPorts, timeout(), 2_000)).toMatchObject({
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
    const result = await attemptDelivery(refused, resolved, realDeliveryPorts, timeout(), 2_000);
    expect(result).toMatchObject({ ok: false, retryable: false, statusCode: 535 });
    expect(JSON.stringify(result)).not.toContain("wrong-pass");

    const dead = await startHttpReceiver();
    await dead.close();
    const closed = parseChannelConfig("email", { ...base, port: Number(new URL(dead.url).port) });
    expect(await attemptDelivery(closed, resolved, realDeliveryPorts, timeout(), 2_000)).toMatchObject({
      ok: false,
      retryable: true,
      error: expect.stringMatching(/ECONNREFUSED/),
    });
    expect(smtp.messages).toEqual([]);
  });
});
