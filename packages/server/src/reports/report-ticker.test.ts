/**
 * Issue 39.3: a scheduled evidence report is mailed at its local time, once per slot, through its
 * email channel's real SMTP server to its own recipients, naming the hosts with gaps, with the
 * same CSV the API serves attached; a monthly one covers the previous month; a report that cannot
 * be built is mailed saying why; a disabled channel sends none.
 */
import { executeRows, notificationLog } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { evidenceCsv, evidenceReport } from "../evidence/evidence-report.js";
import { parseSelector } from "../labels/selector.js";
import { createChannel, updateChannel } from "../notifications/channels.js";
import { seedEvidenceFleet, snapshotHistory } from "../testing/evidence-fleet.js";
import { seedAuditContext } from "../testing/seed.js";
import {
  mailChannelConfig,
  mailParts,
  type SmtpReceiver,
  startSmtpReceiver,
} from "../testing/smtp-receiver.js";
import { createTestDeps, type TestDeps } from "../testing/test-deps.js";
import { createReportSchedule } from "./report-schedules.js";
import { reportTick } from "./report-ticker.js";

const DAY = 86_400_000;

runDbSuite("scheduled evidence report", (getDb) => {
  let smtp: SmtpReceiver;
  beforeAll(async () => {
    smtp = await startSmtpReceiver();
  });
  afterAll(async () => {
    await smtp.close();
  });

  async function mailChannel(deps: TestDeps, name: string) {
    return createChannel(deps, await seedAuditContext(deps), {
      name,
      kind: "email",
      config: mailChannelConfig(smtp, ["alerts@example.org"]),
    });
  }

  async function tick(deps: TestDeps) {
    const report = await reportTick(deps, deps.clock.now());
    await deps.notifier.idle();
    return report.queued;
  }

  it("mails last week's report on Monday at 08:00 with the API's CSV attached, once", async () => {
    const deps = await createTestDeps({ db: getDb() });
    smtp.messages.length = 0;
    const audit = await seedAuditContext(deps);
    const channel = await mailChannel(deps, "mail");
    // The clock starts at 2026-11-21 12:00 UTC, a Saturday.
    const { web, db, dev } = await seedEvidenceFleet(deps, { web: ["etc"], db: ["pg"], dev: ["etc"] });
    // Daily snapshots from Saturday 21st to Sunday 29th; db misses Wednesday 25th.
    const record = snapshotHistory(deps);
    for (let day = 0; day < 9; day++) {
      for (const host of [web, db, dev]) {
        const tag = host.id === db.id ? "pg" : "etc";
        if (host.id === db.id && day === 4) {
          continue;
        }
        await record(host, [tag]);
      }
      deps.clock.advance(DAY);
    }

    // Set on Sunday evening: the first slot is Monday 08:00.
    deps.clock.set(new Date("2026-11-29T20:00:00Z"));
    const schedule = await createReportSchedule(deps, audit, {
      name: "prod weekly",
      channel_id: channel.row.id,
      recipients: ["auditor@example.org", "cto@example.org"],
      period: "weekly",
      time: "08:00",
      weekday: 1,
      selector: "env=prod",
    });
    deps.clock.set(new Date("2026-11-30T07:59:00Z"));
    expect(await tick(deps)).toEqual([]);
    deps.clock.set(new Date("2026-11-30T08:00:00Z"));
    expect(await tick(deps)).toEqual([schedule.id]);
    expect(await tick(deps)).toEqual([]);

    const [mail] = await smtp.waitFor(1);
    expect(mail?.to.sort()).toEqual(["auditor@example.org", "cto@example.org"]);
    const raw = mail?.raw.replace(/\r?\n[ \t]+/g, " ") ?? "";
    expect(raw).toMatch(
      /^Subject: \[Fleetback\] Evidence 2026-11-23 to 2026-11-29: 2 hosts, 1 host with gaps or failures$/m,
    );
    const parts = mailParts(mail?.raw ?? "");
    const text = parts.find((part) => /Content-Type: text\/plain/i.test(part.headers))?.body ?? "";
    expect(text).toContain("2 hosts; 13 of 14 group-days had a snapshot; 1 gap.");
    expect(text).toContain("db: gaps: pg 2026-11-25");
    expect(text).not.toContain("dev");
    const attached = parts.find((part) =>
      /filename="?fleetback-evidence-2026-11-23-to-2026-11-29\.csv/.test(part.headers),
    );
    const expected = evidenceCsv(
      await evidenceReport(deps.db, {
        from: "2026-11-23",
        to: "2026-11-29",
        selector: parseSelector("env=prod"),
      }),
    );
    expect(attached?.body).toBe(expected);
    expect(expected.split("\r\n")).toHaveLength(1 + 2 * 7 + 1);
    const logged = await deps.db.select().from(notificationLog).where(eq(notificationLog.event, "report"));
    expect(logged.map((row) => row.status)).toEqual(["sent"]);
    await deps.close();
  });

  it("covers the previous month on the 1st, says why when it cannot, and a disabled channel sends nothing", async () => {
    const deps = await createTestDeps({ db: getDb() });
    smtp.messages.length = 0;
    const audit = await seedAuditContext(deps);
    const channel = await mailChannel(deps, "monthly mail");
    const monthly = await createReportSchedule(deps, audit, {
      name: "monthly",
      channel_id: channel.row.id,
      recipients: ["auditor@example.org"],
      period: "monthly",
      time: "06:00",
      selector: "env=prod",
    });
    // More hosts than one report takes (2,000), recorded as evidence only.
    await executeRows(
      deps.db,
      `insert into evidence_hosts (host_id, name, labels, first_day, updated_at)
       select 'big-' || n, 'big-' || n, '{"team":"big"}'::jsonb, '2026-11-01', now() from generate_series(1, 2001) n`,
    );
    const tooBig = await createReportSchedule(deps, audit, {
      name: "too big",
      channel_id: channel.row.id,
      recipients: ["auditor@example.org"],
      period: "monthly",
      time: "06:00",
      selector: "team=big",
    });
    deps.clock.set(new Date("2026-12-01T06:00:00Z"));
    expect((await tick(deps)).sort()).toEqual([monthly.id, tooBig.id].sort());
    const mails = await smtp.waitFor(2);
    const subjects = mails
      .map((mail) => /^Subject: (.*)$/m.exec(mail.raw.replace(/\r?\n[ \t]+/g, " "))?.[1])
      .sort();
    expect(subjects).toEqual([
      "[Fleetback] Evidence 2026-11-01 to 2026-11-30: 0 hosts, every host covered every day",
      "[Fleetback] Evidence 2026-11-01 to 2026-11-30: the report could not be built",
    ]);
    const failure = mails.find((mail) => mail.raw.includes("could not be built: selector"));
    expect(failure?.raw).toContain("matches more than 2000 hosts");

    await updateChannel(deps, audit, channel.row.id, { enabled: false });
    deps.clock.set(new Date("2027-01-01T06:00:00Z"));
    expect(await tick(deps)).toEqual([]);
    await deps.close();
  });
});
