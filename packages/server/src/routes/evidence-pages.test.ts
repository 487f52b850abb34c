/**
 * Issue 39.2 in the browser's terms: the evidence page draws what was recorded for the range and
 * selector, says a bad query at its input, links its CSV and a printable view without the menu.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { utcDay } from "../clock.js";
import { recordSnapshotEvidence } from "../evidence/evidence-record.js";
import { addReportMailChannel } from "../testing/report-mail-channel.js";
import { seedHost } from "../testing/seed.js";
import { type SignedInApp, startSignedInApp } from "../testing/signed-in-app.js";

let signed: SignedInApp;

beforeEach(async () => {
  signed = await startSignedInApp({ users: [{ username: "looker", role: "viewer" }] });
  const { deps } = signed;
  const now = deps.clock.now();
  const web = (await seedHost(deps, { name: "web", labels: { env: "prod" } })).host;
  await seedHost(deps, { name: "dev", labels: { env: "dev" } });
  const snapshot = (daysAgo: number) => ({
    id: `${"a".repeat(63)}${daysAgo}`,
    short_id: "aaaaaaaa",
    time: new Date(now.getTime() - daysAgo * 86_400_000).toISOString(),
    hostname: web.resticHost,
    paths: ["/etc"],
    tags: ["etc"],
    size_bytes: 1,
    file_count: 1,
  });
  // A snapshot today and two days ago: yesterday is the gap.
  await recordSnapshotEvidence(deps.db, web.id, [snapshot(0), snapshot(2)], now);
});
afterEach(async () => {
  await signed.deps.close();
});

describe("evidence pages", () => {
  it("shows a viewer the recorded days of the selected hosts, with the gap and links to CSV and print", async () => {
    const now = signed.deps.clock.now();
    const from = utcDay(new Date(now.getTime() - 2 * 86_400_000));
    const viewer = signed.users.looker;
    const res = await viewer?.request(`/reports/evidence?from=${from}&selector=env%3Dprod`);
    expect(res?.status).toBe(200);
    const html = (await res?.text()) ?? "";
    expect(html.match(/data-testid="evidence-host"/g)).toHaveLength(1);
    expect(html).toContain(">web</a>");
    expect(html).toMatch(/data-testid="evidence-covered">2 of 3</);
    const yesterday = utcDay(new Date(now.getTime() - 86_400_000));
    expect(html).toContain(`${yesterday} (1 day)`);
    expect(html).toContain(
      `href="/api/reports/evidence.csv?from=${from}&amp;to=${utcDay(now)}&amp;selector=env%3Dprod"`,
    );

    const print =
      (await (await viewer?.request(`/reports/evidence/print?from=${from}&selector=env%3Dprod`))?.text()) ??
      "";
    expect(print).toContain('data-testid="evidence-print-view"');
    expect(print).not.toContain('data-testid="logout"');
    expect(print).toMatch(/data-testid="evidence-covered">2 of 3</);

    const csv = await viewer?.request(`/api/reports/evidence.csv?from=${from}&selector=env%3Dprod`);
    expect(csv?.headers.get("content-type")).toContain("text/csv");
    expect(csv?.headers.get("content-disposition")).toBe(
      `attachment; filename="fleetback-evidence-${from}-to-${utcDay(now)}.csv"`,
    );
    expect(((await csv?.text()) ?? "").trimEnd().split("\r\n")).toHaveLength(1 + 3);
    // Mailing it on a schedule is an admin's: the viewer gets no link.
    expect(html).not.toContain('data-testid="evidence-schedule"');
  });

  it("leads an admin to schedule the same report by mail, the selector and groups filled in", async () => {
    const { admin } = signed;
    await addReportMailChannel(admin);
    const html = await (await admin.request("/reports/evidence?selector=env%3Dprod&groups=etc")).text();
    const link = /data-testid="evidence-schedule"/.test(html)
      ? (/href="([^"]+)" data-testid="evidence-schedule"/.exec(html)?.[1] ?? "").replaceAll("&amp;", "&")
      : "";
    expect(link).toBe("/settings/notifications?report_selector=env%3Dprod&report_groups=etc#reports-heading");
    const settings = await (await admin.request(link.replace(/#.*$/, ""))).text();
    expect(settings).toMatch(/<input name="selector"[^>]*value="env=prod"/);
    expect(settings).toMatch(/<input name="groups"[^>]*value="etc"/);
  });

  it("shows what the fleet digest would say now, daily or weekly, and refuses another period by name", async () => {
    const viewer = signed.users.looker;
    const daily = (await (await viewer?.request("/reports/digest"))?.text()) ?? "";
    // Neither host has a group: both are counted, nothing is overdue.
    expect(daily).toMatch(/data-testid="digest-verdict">Fleetback: /);
    expect(daily).toContain("Hosts: 2; online 0, offline 2");
    expect(daily).toContain('data-testid="digest-weekly"');
    const weekly = (await (await viewer?.request("/reports/digest?period=weekly"))?.text()) ?? "";
    expect(weekly).toContain("What a weekly digest would say now");
    const bad = await viewer?.request("/reports/digest?period=monthly");
    expect(bad?.status).toBe(400);
    expect(await bad?.text()).toContain("period");
  });

  it("says a bad query at its input and draws no report", async () => {
    const res = await signed.admin.request("/reports/evidence?from=2026-11-21&to=2026-11-01&selector=env%3D");
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toMatch(/data-testid="field-error-to">before from</);
    expect(html).not.toContain('data-testid="evidence-host"');
    const bad = await signed.admin.request("/reports/evidence?selector=%3D%3D");
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('data-testid="field-error-selector"');
  });
});
