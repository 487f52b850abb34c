/**
 * The notification channel routes and settings page over a real server, on both engines: every
 * kind created, bad config refused by field, stored secrets kept when an update leaves them out,
 * admins only, the page driven by form; and no answer, log or audit entry ever shows a secret.
 * A channel's digest and evidence report schedules are in notification-channels-schedules.test.ts.
 */
import { auditLog, notificationChannels } from "@fleetback/db";
import { asc, like } from "drizzle-orm";
import { expect, it } from "vitest";
import { csrfFrom } from "../testing/http.js";
import { CANARY, type ChannelBody, useChannelRoutes } from "../testing/notifier-harness.js";
import { runServerSuite } from "../testing/server-suite.js";

const API = "/api/notification-channels";

runServerSuite("notification channel routes", (server) => {
  const h = useChannelRoutes(server);

  it("creates every kind, and no response shows a secret", async () => {
    const bodies = [
      h.webhook(),
      { name: "slack", kind: "slack", config: { url: `${h.receiver.url}/services/T0/B0/${CANARY}` } },
      { name: "discord", kind: "discord", config: { url: `${h.receiver.url}/api/webhooks/1/${CANARY}` } },
      {
        name: "ntfy",
        kind: "ntfy",
        config: { server_url: h.receiver.url, topic: CANARY, token: CANARY, priority: 5 },
      },
      { name: "gotify", kind: "gotify", config: { server_url: h.receiver.url, token: CANARY } },
      {
        name: "mail",
        kind: "email",
        config: {
          host: h.smtp.host,
          port: h.smtp.port,
          security: "none",
          username: "mailer",
          password: CANARY,
          from: "fleetback@example.com",
          to: ["ops@example.com"],
        },
      },
    ];
    for (const body of bodies) {
      const res = await h.admin.json("POST", API, body);
      expect([body.kind, res.status]).toEqual([body.kind, 201]);
      await h.read(res);
    }
    const list = await h.json<{ notification_channels: ChannelBody["notification_channel"][] }>(
      await h.admin.request(API),
    );
    const byKind = Object.fromEntries(list.notification_channels.map((channel) => [channel.kind, channel]));
    expect(byKind.webhook).toMatchObject({
      name: "ops hook",
      enabled: true,
      notify_resolved: true,
      target: new URL(h.receiver.url).host,
      config: {},
      secrets: { url: true, secret: true },
    });
    expect(byKind.ntfy).toMatchObject({
      config: { server_url: h.receiver.url, priority: 5 },
      secrets: { topic: true, token: true },
    });
    expect(byKind.gotify).toMatchObject({ secrets: { token: true } });
    expect(byKind.email).toMatchObject({
      target: `${h.smtp.host}:${h.smtp.port}`,
      config: { host: h.smtp.host, username: "mailer", to: ["ops@example.com"], security: "none" },
      secrets: { password: true },
    });

    // Every channel answers "Send test" through its real endpoint.
    for (const channel of list.notification_channels) {
      const res = await h.admin.json("POST", `${API}/${channel.id}/test`, {});
      expect([channel.kind, res.status]).toEqual([channel.kind, 200]);
      expect([channel.kind, (await h.json<{ result: unknown }>(res)).result]).toEqual([
        channel.kind,
        { status: "sent", status_code: channel.kind === "email" ? null : 200, error: null },
      ]);
    }
    expect(h.receiver.requests).toHaveLength(5);
    expect(h.smtp.messages).toHaveLength(1);

    const page = await h.read(await h.admin.request("/settings/notifications"));
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
      const res = await h.admin.json("POST", API, body);
      const answer = await h.json<{ message: string }>(res);
      expect([JSON.stringify(body), res.status, answer.message]).toEqual([
        JSON.stringify(body),
        400,
        expect.stringMatching(pattern),
      ]);
    }
    expect(await server.deps.db.select().from(notificationChannels)).toEqual([]);
    expect((await h.admin.json("POST", API, h.webhook())).status).toBe(201);
    const dup = await h.admin.json("POST", API, h.webhook());
    expect(dup.status).toBe(409);
    expect((await h.json<{ message: string }>(dup)).message).toMatch(/^name: /);
  });

  it("keeps stored secrets when an update leaves them out, and deletes", async () => {
    const created = await h.json<ChannelBody>(
      await h.admin.json("POST", API, {
        name: "g",
        kind: "gotify",
        config: { server_url: h.receiver.url, token: CANARY },
      }),
    );
    const id = created.notification_channel.id;
    const updated = await h.admin.json("PUT", `${API}/${id}`, {
      name: "gotify main",
      enabled: false,
      config: { priority: 9, server_url: `${h.receiver.url}/g` },
    });
    expect(updated.status).toBe(200);
    expect((await h.json<ChannelBody>(updated)).notification_channel).toMatchObject({
      name: "gotify main",
      enabled: false,
      config: { priority: 9, server_url: `${h.receiver.url}/g` },
      secrets: { token: true },
    });
    expect((await h.admin.json("POST", `${API}/${id}/test`, {})).status).toBe(200);
    expect(h.receiver.requests[0]?.path).toBe("/g/message");
    expect(h.receiver.requests[0]?.headers["x-gotify-key"]).toBe(CANARY);
    expect(JSON.parse(h.receiver.requests[0]?.body ?? "{}")).toMatchObject({ priority: 9 });

    const cleared = await h.admin.json("PUT", `${API}/${id}`, { config: { priority: null } });
    expect((await h.json<ChannelBody>(cleared)).notification_channel.config).toEqual({
      server_url: `${h.receiver.url}/g`,
    });
    const bad = await h.admin.json("PUT", `${API}/${id}`, { config: { token: null } });
    expect(bad.status).toBe(400);
    expect((await h.json<{ message: string }>(bad)).message).toMatch(/^config\.token: is required/);

    const detail = await h.json<{ recent_attempts: Array<{ event: string; status: string }> }>(
      await h.admin.request(`${API}/${id}`),
    );
    expect(detail.recent_attempts).toMatchObject([{ event: "test", status: "sent" }]);

    expect((await h.admin.json("DELETE", `${API}/${id}`)).status).toBe(204);
    expect((await h.admin.request(`${API}/${id}`)).status).toBe(404);
    expect((await h.admin.json("DELETE", `${API}/${id}`)).status).toBe(404);
    expect((await h.admin.json("POST", `${API}/${id}/test`, {})).status).toBe(404);
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
    expect((await h.operator.request(API)).status).toBe(403);
    expect((await h.operator.json("POST", API, h.webhook())).status).toBe(403);
    expect((await h.operator.request("/settings/notifications")).status).toBe(403);
  });

  it("drives the page: create by form, test, disable, edit keeping the secret, delete", async () => {
    const page = await h.read(await h.admin.request("/settings/notifications"));
    expect(page).toContain('data-testid="no-channels"');
    expect(page).toContain('href="/settings/notifications" aria-current="page"');
    const csrf = csrfFrom(page);
    const created = await h.admin.form("/settings/notifications", {
      _csrf: csrf,
      kind: "webhook",
      name: "page hook",
      url: `${h.receiver.url}/page/${CANARY}`,
      secret: `${CANARY}-hmac`,
      enabled: "on",
    });
    expect(created.status).toBe(303);
    const [row] = await server.deps.db.select().from(notificationChannels);
    const id = row?.id ?? "";
    expect(row).toMatchObject({ name: "page hook", enabled: true, notifyResolved: false });

    const invalid = await h.admin.form(
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

    h.receiver.reply(500);
    const tested = await h.admin.form(
      `/settings/notifications/${id}/test`,
      { _csrf: csrf },
      { "HX-Request": "true" },
    );
    expect(tested.headers.get("HX-Redirect")).toBe(`/settings/notifications?tested=${id}`);
    const afterTest = await h.read(await h.admin.request(`/settings/notifications?tested=${id}`));
    expect(afterTest).toMatch(
      /data-testid="test-result">Test to page hook: <strong[^>]*>failed<\/strong> \(HTTP 500\): HTTP 500</,
    );
    const signature = h.receiver.requests[0]?.headers["x-fleetback-signature"];
    expect(signature).toMatch(/^sha256=[0-9a-f]{64}$/);

    expect(
      (await h.admin.form(`/settings/notifications/${id}/state`, { _csrf: csrf, state: "disabled" })).status,
    ).toBe(303);
    expect(await h.read(await h.admin.request("/settings/notifications"))).toContain(
      'data-testid="channel-state-page hook">disabled<',
    );

    // The edit form leaves the secret inputs empty: the stored ones stay.
    const edited = await h.admin.form(`/settings/notifications/${id}`, {
      _csrf: csrf,
      name: "page hook 2",
      url: "",
      secret: "",
      notify_resolved: "on",
    });
    expect(edited.status).toBe(303);
    h.receiver.requests.length = 0;
    await h.admin.form(`/settings/notifications/${id}/test`, { _csrf: csrf });
    expect(h.receiver.requests[0]?.path).toBe(`/page/${CANARY}`);
    const [after] = await server.deps.db.select().from(notificationChannels);
    expect(after).toMatchObject({ name: "page hook 2", notifyResolved: true, enabled: false });

    expect((await h.admin.form(`/settings/notifications/${id}/delete`, { _csrf: csrf })).status).toBe(303);
    expect(await server.deps.db.select().from(notificationChannels)).toEqual([]);
  });
});
