import { auditLog, notificationChannels, notificationLog } from "@fleetback/db";
import { asc, like } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { type HttpReceiver, startHttpReceiver } from "../testing/http-receiver.js";
import { runServerSuite } from "../testing/server-suite.js";
import { signInOn } from "../testing/signed-in-app.js";
import { type SmtpReceiver, startSmtpReceiver } from "../testing/smtp-receiver.js";

const CANARY = "canary-SECRET-123";
const API = "/api/notification-channels";

interface ChannelBody {
  notification_channel: {
    id: string;
    name: string;
    kind: string;
    enabled: boolean;
    notify_resolved: boolean;
    target: string;
    config: Record<string, unknown>;
    secrets: Record<string, boolean>;
  };
}

runServerSuite("notification channel routes", (server) => {
  let receiver: HttpReceiver;
  let smtp: SmtpReceiver;
  let admin: TestClient;
  let operator: TestClient;
  /** Every response body the test saw: none may hold a secret. */
  const seen: string[] = [];

  async function read(res: Response): Promise<string> {
    const text = await res.text();
    seen.push(text);
    return text;
  }
  async function json<T>(res: Response): Promise<T> {
    return JSON.parse(await read(res)) as T;
  }

  beforeAll(async () => {
    receiver = await startHttpReceiver();
    smtp = await startSmtpReceiver({ username: "mailer", password: CANARY });
    const signed = await signInOn(server.deps, { users: [{ username: "oper", role: "operator" }] });
    admin = signed.admin;
    operator = signed.users.oper;
  });
  afterAll(async () => {
    await receiver.close();
    await smtp.close();
    const everything = [
      ...seen,
      JSON.stringify(await server.deps.db.select().from(notificationLog)),
      JSON.stringify(await server.deps.db.select().from(auditLog)),
      server.deps.logLines.join("\n"),
    ].join("\n");
    expect(everything).not.toContain(CANARY);
  });
  beforeEach(async () => {
    await server.deps.db.delete(notificationChannels);
    receiver.requests.length = 0;
    smtp.messages.length = 0;
  });

  const webhook = () => ({
    name: "ops hook",
    kind: "webhook",
    notify_resolved: true,
    config: { url: `${receiver.url}/hooks/${CANARY}`, secret: `${CANARY}-hmac` },
  });

  it("creates every kind, and no response shows a secret", async () => {
    const bodies = [
      webhook(),
      { name: "slack", kind: "slack", config: { url: `${receiver.url}/services/T0/B0/${CANARY}` } },
      { name: "discord", kind: "discord", config: { url: `${receiver.url}/api/webhooks/1/${CANARY}` } },
      {
        name: "ntfy",
        kind: "ntfy",
        config: { server_url: receiver.url, topic: CANARY, token: CANARY, priority: 5 },
      },
      { name: "gotify", kind: "gotify", config: { server_url: receiver.url, token: CANARY } },
      {
        name: "mail",
        kind: "email",
        config: {
          host: smtp.host,
          port: smtp.port,
          security: "none",
          username: "mailer",
          password: CANARY,
          from: "fleetback@example.com",
          to: ["ops@example.com"],
        },
      },
    ];
    for (const body of bodies) {
      const res = await admin.json("POST", API, body);
      expect([body.kind, res.status]).toEqual([body.kind, 201]);
      await read(res);
    }
    const list = await json<{ notification_channels: ChannelBody["notification_channel"][] }>(
      await admin.request(API),
    );
    const byKind = Object.fromEntries(list.notification_channels.map((channel) => [channel.kind, channel]));
    expect(byKind.webhook).toMatchObject({
      name: "ops hook",
      enabled: true,
      notify_resolved: true,
      target: new URL(receiver.url).host,
      config: {},
      secrets: { url: true, secret: true },
    });
    expect(byKind.ntfy).toMatchObject({
      config: { server_url: receiver.url, priority: 5 },
      secrets: { topic: true, token: true },
    });
    expect(byKind.gotify).toMatchObject({ secrets: { token: true } });
    expect(byKind.email).toMatchObject({
      target: `${smtp.host}:${smtp.port}`,
      config: { host: smtp.host, username: "mailer", to: ["ops@example.com"], security: "none" },
      secrets: { password: true },
    });

    // Every channel answers "Send test" through its real endpoint.
    for (const channel of list.notification_channels) {
      const res = await admin.json("POST", `${API}/${channel.id}/test`, {});
      expect([channel.kind, res.status]).toEqual([channel.kind, 200]);
      expect([channel.kind, (await json<{ result: unknown }>(res)).result]).toEqual([
        channel.kind,
        { status: "sent", status_code: channel.kind === "email" ? null : 200, error: null },
      ]);
    }
    expect(receiver.requests).toHaveLength(5);
    expect(smtp.messages).toHaveLength(1);

    const page = await read(await admin.request("/settings/notifications"));
    expect(page).toContain('data-testid="channel-ops hook"');
    expect(page).toContain("set; leave empty to keep");
    expect(page.match(/data-testid="log-row"/g)).toHaveLength(6);
    const audit = await server.deps.db
      .select()
      .from(auditLog)
      .where(like(auditLog.action, "notification_channel.%"))
      .orderBy(asc(auditLog.id));
    expect(audit.filter((entry) => entry.action === "notification_channel.create")).toHaveLength(6);
  });

  it("refuses bad config naming the field, and a duplicate name", async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [
        { name: "x", kind: "webhook", config: { url: "ftp://example.com", secret: CANARY } },
        /^config\.url: must be an http/,
      ],
      [
        { name: "x", kind: "webhook", config: { url: "https://example.com", secret: "short" } },
        /^config\.secret: /,
      ],
      [{ name: "x", kind: "slack", config: {} }, /^config\.url: is required/],
      [
        { name: "x", kind: "slack", config: { url: "https://e.com", bogus: 1 } },
        /^config\.bogus: is not a known field/,
      ],
      [
        { name: "x", kind: "ntfy", config: { server_url: "https://u:p@ntfy.sh", topic: "t" } },
        /^config\.server_url: must not contain user:password@/,
      ],
      [
        { name: "x", kind: "ntfy", config: { server_url: "https://ntfy.sh", topic: "a/b" } },
        /^config\.topic: /,
      ],
      [
        { name: "x", kind: "gotify", config: { server_url: "https://g.example", token: "t", priority: 11 } },
        /^config\.priority: /,
      ],
      [
        {
          name: "x",
          kind: "email",
          config: { host: "smtp", port: 70000, security: "none", from: "a@b.c", to: ["a@b.c"] },
        },
        /^config\.port: /,
      ],
      [
        {
          name: "x",
          kind: "email",
          config: { host: "smtp", port: 25, security: "ssl", from: "a@b.c", to: ["a@b.c"] },
        },
        /^config\.security: must be one of tls, starttls, none/,
      ],
      [
        {
          name: "x",
          kind: "email",
          config: { host: "smtp", port: 25, security: "none", from: "a@b.c", to: ["nobody"] },
        },
        /^config\.to\.0: /,
      ],
      [{ name: "x", kind: "pager", config: {} }, /^kind: must be one of/],
      [{ name: "", kind: "slack", config: { url: "https://e.com" } }, /^name: /],
    ];
    for (const [body, pattern] of cases) {
      const res = await admin.json("POST", API, body);
      const answer = await json<{ message: string }>(res);
      expect([JSON.stringify(body), res.status, answer.message]).toEqual([
        JSON.stringify(body),
        400,
        expect.stringMatching(pattern),
      ]);
    }
    expect(await server.deps.db.select().from(notificationChannels)).toEqual([]);
    expect((await admin.json("POST", API, webhook())).status).toBe(201);
    const dup = await admin.json("POST", API, webhook());
    expect(dup.status).toBe(409);
    expect((await json<{ message: string }>(dup)).message).toMatch(/^name: /);
  });

  it("sets, changes and removes a channel's digest by API and by form, naming a wrong field", async () => {
    const created = await admin.json("POST", API, {
      ...webhook(),
      digest: { period: "weekly", time: "07:30" },
    });
    expect(created.status).toBe(201);
    const channel = (await json<ChannelBody & { notification_channel: { digest: unknown } }>(created))
      .notification_channel;
    // A weekly digest without a day goes out on Monday.
    expect(channel.digest).toEqual({ period: "weekly", time: "07:30", weekday: 1 });
    const refusals: Array<[unknown, RegExp]> = [
      [{ period: "daily", time: "07:30", weekday: 3 }, /^digest\.weekday: only a weekly digest/],
      [{ period: "daily", time: "7:30" }, /^digest\.time: /],
      [{ period: "monthly", time: "07:30" }, /^digest\.period: /],
      [{ period: "weekly", time: "07:30", weekday: 7 }, /^digest\.weekday: /],
    ];
    for (const [digest, pattern] of refusals) {
      const res = await admin.json("PUT", `${API}/${channel.id}`, { digest });
      expect([JSON.stringify(digest), res.status, (await json<{ message: string }>(res)).message]).toEqual([
        JSON.stringify(digest),
        400,
        expect.stringMatching(pattern),
      ]);
    }
    const daily = await admin.json("PUT", `${API}/${channel.id}`, {
      digest: { period: "daily", time: "06:00" },
    });
    expect(
      (await json<{ notification_channel: { digest: unknown } }>(daily)).notification_channel.digest,
    ).toEqual({
      period: "daily",
      time: "06:00",
    });

    const page = await read(await admin.request("/settings/notifications"));
    expect(page).toContain('data-testid="channel-digest-ops hook">digest daily at 06:00<');
    const csrf = csrfFrom(page);
    const bad = await admin.form(
      `/settings/notifications/${channel.id}`,
      { _csrf: csrf, name: "ops hook", digest_period: "weekly", digest_time: "25:00", digest_weekday: "5" },
      { "HX-Request": "true" },
    );
    expect(bad.status).toBe(400);
    expect(bad.headers.get("HX-Trigger")).toContain("digest_time");
    const weekly = await admin.form(`/settings/notifications/${channel.id}`, {
      _csrf: csrf,
      name: "ops hook",
      digest_period: "weekly",
      digest_time: "18:15",
      digest_weekday: "5",
    });
    expect(weekly.status).toBe(303);
    expect(await read(await admin.request("/settings/notifications"))).toContain(
      'data-testid="channel-digest-ops hook">digest weekly on Friday at 18:15<',
    );
    await admin.form(`/settings/notifications/${channel.id}`, {
      _csrf: csrf,
      name: "ops hook",
      digest_period: "",
      digest_time: "18:15",
      digest_weekday: "5",
    });
    const [row] = await server.deps.db.select().from(notificationChannels);
    expect(row).toMatchObject({ digestPeriod: null, digestTime: null, digestWeekday: null });
    const audits = (await server.deps.db.select().from(auditLog)).filter(
      (entry) => entry.targetId === channel.id,
    );
    expect(
      audits
        .map((entry) => (entry.details as { digest?: string }).digest)
        .filter(Boolean)
        .sort(),
    ).toEqual(["daily at 06:00", "none", "weekly on Friday at 18:15", "weekly on Monday at 07:30"].sort());
  });

  it("schedules evidence reports through an email channel only, by API and by form", async () => {
    const hook = await json<ChannelBody>(await admin.json("POST", API, webhook()));
    const mail = await json<ChannelBody>(
      await admin.json("POST", API, {
        name: "mail",
        kind: "email",
        config: {
          host: smtp.host,
          port: smtp.port,
          security: "none",
          from: "f@example.org",
          to: ["a@example.org"],
        },
      }),
    );
    const good = {
      name: "weekly prod",
      channel_id: mail.notification_channel.id,
      recipients: ["auditor@example.org"],
      period: "weekly",
      time: "08:00",
    };
    const refusals: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...good, channel_id: hook.notification_channel.id }, /^channel_id: must be an email channel/],
      [{ ...good, channel_id: "nope" }, /^channel_id: no such notification channel/],
      [{ ...good, period: "monthly", weekday: 2 }, /^weekday: only a weekly report has a weekday/],
      [{ ...good, selector: "env in (prod" }, /^selector: /],
      [{ ...good, recipients: [] }, /^recipients: /],
      [{ ...good, recipients: ["not-an-address"] }, /^recipients\.0: /],
      [{ ...good, time: "8:00" }, /^time: /],
    ];
    for (const [body, pattern] of refusals) {
      const res = await admin.json("POST", "/api/reports/schedules", body);
      expect([JSON.stringify(body), res.status, (await json<{ message: string }>(res)).message]).toEqual([
        JSON.stringify(body),
        400,
        expect.stringMatching(pattern),
      ]);
    }
    expect((await admin.json("POST", "/api/reports/schedules", good)).status).toBe(201);
    expect((await admin.json("POST", "/api/reports/schedules", good)).status).toBe(409);
    expect((await operator.json("POST", "/api/reports/schedules", { ...good, name: "x" })).status).toBe(403);

    const page = await read(await admin.request("/settings/notifications"));
    expect(page).toContain('data-testid="report-when-weekly prod">weekly on Monday at 08:00<');
    const csrf = csrfFrom(page);
    const form = {
      _csrf: csrf,
      name: "monthly all",
      channel_id: mail.notification_channel.id,
      recipients: "auditor@example.org\nbad address",
      period: "monthly",
      weekday: "1",
      time: "07:00",
      selector: "",
      groups: "",
    };
    const bad = await admin.form("/settings/notifications/reports", form, { "HX-Request": "true" });
    expect(bad.status).toBe(400);
    expect(bad.headers.get("HX-Trigger")).toContain("recipients");
    const made = await admin.form("/settings/notifications/reports", {
      ...form,
      recipients: "auditor@example.org cfo@example.org",
    });
    expect(made.status).toBe(303);
    const listed = await json<{
      report_schedules: Array<{ id: string; name: string; when: string; recipients: string[] }>;
    }>(await admin.request("/api/reports/schedules"));
    const monthly = listed.report_schedules.find((entry) => entry.name === "monthly all");
    // The day select is sent with the form; a monthly report ignores it.
    expect(monthly).toMatchObject({
      when: "monthly on the 1st at 07:00",
      recipients: ["auditor@example.org", "cfo@example.org"],
    });
    expect(
      (await admin.form(`/settings/notifications/reports/${monthly?.id}/delete`, { _csrf: csrf })).status,
    ).toBe(303);
    // Deleting the channel stops its reports.
    expect((await admin.json("DELETE", `${API}/${mail.notification_channel.id}`)).status).toBe(204);
    expect(
      (await json<{ report_schedules: unknown[] }>(await admin.request("/api/reports/schedules")))
        .report_schedules,
    ).toEqual([]);
  });

  it("keeps stored secrets when an update leaves them out, and deletes", async () => {
    const created = await json<ChannelBody>(
      await admin.json("POST", API, {
        name: "g",
        kind: "gotify",
        config: { server_url: receiver.url, token: CANARY },
      }),
    );
    const id = created.notification_channel.id;
    const updated = await admin.json("PUT", `${API}/${id}`, {
      name: "gotify main",
      enabled: false,
      config: { priority: 9, server_url: `${receiver.url}/g` },
    });
    expect(updated.status).toBe(200);
    expect((await json<ChannelBody>(updated)).notification_channel).toMatchObject({
      name: "gotify main",
      enabled: false,
      config: { priority: 9, server_url: `${receiver.url}/g` },
      secrets: { token: true },
    });
    expect((await admin.json("POST", `${API}/${id}/test`, {})).status).toBe(200);
    expect(receiver.requests[0]?.path).toBe("/g/message");
    expect(receiver.requests[0]?.headers["x-gotify-key"]).toBe(CANARY);
    expect(JSON.parse(receiver.requests[0]?.body ?? "{}")).toMatchObject({ priority: 9 });

    const cleared = await admin.json("PUT", `${API}/${id}`, { config: { priority: null } });
    expect((await json<ChannelBody>(cleared)).notification_channel.config).toEqual({
      server_url: `${receiver.url}/g`,
    });
    const bad = await admin.json("PUT", `${API}/${id}`, { config: { token: null } });
    expect(bad.status).toBe(400);
    expect((await json<{ message: string }>(bad)).message).toMatch(/^config\.token: is required/);

    const detail = await json<{ recent_attempts: Array<{ event: string; status: string }> }>(
      await admin.request(`${API}/${id}`),
    );
    expect(detail.recent_attempts).toMatchObject([{ event: "test", status: "sent" }]);

    expect((await admin.json("DELETE", `${API}/${id}`)).status).toBe(204);
    expect((await admin.request(`${API}/${id}`)).status).toBe(404);
    expect((await admin.json("DELETE", `${API}/${id}`)).status).toBe(404);
    expect((await admin.json("POST", `${API}/${id}/test`, {})).status).toBe(404);
    const actions = (
      await server.deps.db.select().from(auditLog).where(like(auditLog.action, "notification_channel.%"))
    ).map((entry) => entry.action);
    expect(actions).toEqual(
      expect.arrayContaining([
        "notification_channel.update",
        "notification_channel.delete",
        "notification_channel.test",
      ]),
    );
  });

  it("is for admins only", async () => {
    expect((await operator.request(API)).status).toBe(403);
    expect((await operator.json("POST", API, webhook())).status).toBe(403);
    expect((await operator.request("/settings/notifications")).status).toBe(403);
  });

  it("drives the page: create by form, test, disable, edit keeping the secret, delete", async () => {
    const page = await read(await admin.request("/settings/notifications"));
    expect(page).toContain('data-testid="no-channels"');
    expect(page).toContain('href="/settings/notifications" aria-current="page"');
    const csrf = csrfFrom(page);
    const created = await admin.form("/settings/notifications", {
      _csrf: csrf,
      kind: "webhook",
      name: "page hook",
      url: `${receiver.url}/page/${CANARY}`,
      secret: `${CANARY}-hmac`,
      enabled: "on",
    });
    expect(created.status).toBe(303);
    const [row] = await server.deps.db.select().from(notificationChannels);
    const id = row?.id ?? "";
    expect(row).toMatchObject({ name: "page hook", enabled: true, notifyResolved: false });

    const invalid = await admin.form(
      "/settings/notifications",
      {
        _csrf: csrf,
        kind: "email",
        name: "m",
        host: "smtp",
        port: "25",
        security: "none",
        from: "a@b.c",
        to: "x",
      },
      { "HX-Request": "true" },
    );
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get("HX-Trigger")).toContain("config.to.0");

    receiver.reply(500);
    const tested = await admin.form(
      `/settings/notifications/${id}/test`,
      { _csrf: csrf },
      { "HX-Request": "true" },
    );
    expect(tested.headers.get("HX-Redirect")).toBe(`/settings/notifications?tested=${id}`);
    const afterTest = await read(await admin.request(`/settings/notifications?tested=${id}`));
    expect(afterTest).toMatch(
      /data-testid="test-result">Test to page hook: <strong[^>]*>failed<\/strong> \(HTTP 500\): HTTP 500</,
    );
    const signature = receiver.requests[0]?.headers["x-fleetback-signature"];
    expect(signature).toMatch(/^sha256=[0-9a-f]{64}$/);

    expect(
      (await admin.form(`/settings/notifications/${id}/state`, { _csrf: csrf, state: "disabled" })).status,
    ).toBe(303);
    expect(await read(await admin.request("/settings/notifications"))).toContain(
      'data-testid="channel-state-page hook">disabled<',
    );

    // The edit form leaves the secret inputs empty: the stored ones stay.
    const edited = await admin.form(`/settings/notifications/${id}`, {
      _csrf: csrf,
      name: "page hook 2",
      url: "",
      secret: "",
      notify_resolved: "on",
    });
    expect(edited.status).toBe(303);
    receiver.requests.length = 0;
    await admin.form(`/settings/notifications/${id}/test`, { _csrf: csrf });
    expect(receiver.requests[0]?.path).toBe(`/page/${CANARY}`);
    const [after] = await server.deps.db.select().from(notificationChannels);
    expect(after).toMatchObject({ name: "page hook 2", notifyResolved: true, enabled: false });

    expect((await admin.form(`/settings/notifications/${id}/delete`, { _csrf: csrf })).status).toBe(303);
    expect(await server.deps.db.select().from(notificationChannels)).toEqual([]);
  });
});
