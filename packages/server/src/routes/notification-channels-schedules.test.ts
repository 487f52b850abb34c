/**
 * What a notification channel sends on a schedule, over a real server, on both engines: a digest
 * set, changed and removed, and evidence reports through an email channel only, by API and by
 * form; and no answer, log or audit entry ever shows a secret.
 */
import { auditLog, notificationChannels } from "@fleetback/db";
import { expect, it } from "vitest";
import { csrfFrom } from "../testing/http.js";
import { type ChannelBody, useChannelRoutes } from "../testing/notifier-harness.js";
import { runServerSuite } from "../testing/server-suite.js";

const API = "/api/notification-channels";

runServerSuite("notification channel schedules", (server) => {
  const h = useChannelRoutes(server);

  it("sets, changes and removes a channel's digest by API and by form, naming a wrong field", async () => {
    const created = await h.admin.json("POST", API, {
      ...h.webhook(),
      digest: { period: "weekly", time: "07:30" },
    });
    expect(created.status).toBe(201);
    const channel = (await h.json<ChannelBody & { notification_channel: { digest: unknown } }>(created))
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
      const res = await h.admin.json("PUT", `${API}/${channel.id}`, { digest });
      expect([JSON.stringify(digest), res.status, (await h.json<{ message: string }>(res)).message]).toEqual([
        JSON.stringify(digest),
        400,
        expect.stringMatching(pattern),
      ]);
    }
    const daily = await h.admin.json("PUT", `${API}/${channel.id}`, {
      digest: { period: "daily", time: "06:00" },
    });
    expect(
      (await h.json<{ notification_channel: { digest: unknown } }>(daily)).notification_channel.digest,
    ).toEqual({
      period: "daily",
      time: "06:00",
    });

    const page = await h.read(await h.admin.request("/settings/notifications"));
    expect(page).toContain('data-testid="channel-digest-ops hook">digest daily at 06:00<');
    const csrf = csrfFrom(page);
    const bad = await h.admin.form(
      `/settings/notifications/${channel.id}`,
      { _csrf: csrf, name: "ops hook", digest_period: "weekly", digest_time: "25:00", digest_weekday: "5" },
      { "HX-Request": "true" },
    );
    expect(bad.status).toBe(400);
    expect(bad.headers.get("HX-Trigger")).toContain("digest_time");
    const weekly = await h.admin.form(`/settings/notifications/${channel.id}`, {
      _csrf: csrf,
      name: "ops hook",
      digest_period: "weekly",
      digest_time: "18:15",
      digest_weekday: "5",
    });
    expect(weekly.status).toBe(303);
    expect(await h.read(await h.admin.request("/settings/notifications"))).toContain(
      'data-testid="channel-digest-ops hook">digest weekly on Friday at 18:15<',
    );
    await h.admin.form(`/settings/notifications/${channel.id}`, {
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
    const hook = await h.json<ChannelBody>(await h.admin.json("POST", API, h.webhook()));
    const mail = await h.json<ChannelBody>(
      await h.admin.json("POST", API, {
        name: "mail",
        kind: "email",
        config: {
          host: h.smtp.host,
          port: h.smtp.port,
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
      const res = await h.admin.json("POST", "/api/reports/schedules", body);
      expect([JSON.stringify(body), res.status, (await h.json<{ message: string }>(res)).message]).toEqual([
        JSON.stringify(body),
        400,
        expect.stringMatching(pattern),
      ]);
    }
    expect((await h.admin.json("POST", "/api/reports/schedules", good)).status).toBe(201);
    expect((await h.admin.json("POST", "/api/reports/schedules", good)).status).toBe(409);
    expect((await h.operator.json("POST", "/api/reports/schedules", { ...good, name: "x" })).status).toBe(
      403,
    );

    const page = await h.read(await h.admin.request("/settings/notifications"));
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
    const bad = await h.admin.form("/settings/notifications/reports", form, { "HX-Request": "true" });
    expect(bad.status).toBe(400);
    expect(bad.headers.get("HX-Trigger")).toContain("recipients");
    const made = await h.admin.form("/settings/notifications/reports", {
      ...form,
      recipients: "auditor@example.org cfo@example.org",
    });
    expect(made.status).toBe(303);
    const listed = await h.json<{
      report_schedules: Array<{ id: string; name: string; when: string; recipients: string[] }>;
    }>(await h.admin.request("/api/reports/schedules"));
    const monthly = listed.report_schedules.find((entry) => entry.name === "monthly all");
    // The day select is sent with the form; a monthly report ignores it.
    expect(monthly).toMatchObject({
      when: "monthly on the 1st at 07:00",
      recipients: ["auditor@example.org", "cfo@example.org"],
    });
    expect(
      (await h.admin.form(`/settings/notifications/reports/${monthly?.id}/delete`, { _csrf: csrf })).status,
    ).toBe(303);
    // Deleting the channel stops its reports.
    expect((await h.admin.json("DELETE", `${API}/${mail.notification_channel.id}`)).status).toBe(204);
    expect(
      (await h.json<{ report_schedules: unknown[] }>(await h.admin.request("/api/reports/schedules")))
        .report_schedules,
    ).toEqual([]);
  });
});
