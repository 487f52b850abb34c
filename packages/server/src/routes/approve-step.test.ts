/**
 * Issue 35.2 for announced hosts: the approve step offers the same first group as a token does
 * (paths, a schedule drawn by default, the default retention, "No schedule" as an explicit box),
 * and approving creates that group and schedule. A bad cron, here or on the token form, is
 * refused at its input with what was typed kept, never as an error page.
 */
import { encodePublicKey, generateSigningKeyPair } from "@fleetback/crypto";
import { enrolmentTokens, hosts, scheduleSourceGroups, schedules, sourceGroups } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { loadScheduleSet } from "../hosts/host-push.js";
import { enrolmentAppPerTest, HOST_INFO } from "../testing/enrolment-app.js";
import { csrfFrom } from "../testing/http.js";

const app = enrolmentAppPerTest();

async function announce(hostname: string): Promise<string> {
  const res = await app.agent.json("POST", "/api/agents/announce", {
    ...HOST_INFO,
    hostname,
    public_key: encodePublicKey(generateSigningKeyPair().publicKey),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { pending_id: string }).pending_id;
}

/** A valid approve form: /etc, nightly at 02:45, a week of dailies; each test changes its subject. */
const APPROVE_FORM = { initial_paths: "/etc", initial_cron: "45 2 * * *", keep_daily: "7" };

/**
 * Announces `hostname` and posts its approve form, as the operator, with the page's CSRF token:
 * `fields` over APPROVE_FORM.
 */
async function approve(
  hostname: string,
  fields: Record<string, string>,
  headers?: Record<string, string>,
): Promise<Response> {
  const id = await announce(hostname);
  const csrf = csrfFrom(await (await app.operator.request(`/enroll/pending/${id}/approve`)).text());
  return app.operator.form(
    `/enroll/pending/${id}/approve`,
    { _csrf: csrf, ...APPROVE_FORM, ...fields },
    headers,
  );
}

async function hostNamed(name: string) {
  const [host] = await app.deps.db.select().from(hosts).where(eq(hosts.name, name));
  if (!host) {
    return undefined;
  }
  const groups = await app.deps.db.select().from(sourceGroups).where(eq(sourceGroups.hostId, host.id));
  const crons = await app.deps.db
    .select({ cron: schedules.cron, groupId: scheduleSourceGroups.sourceGroupId })
    .from(schedules)
    .innerJoin(scheduleSourceGroups, eq(scheduleSourceGroups.scheduleId, schedules.id))
    .where(eq(schedules.hostId, host.id));
  return { host, groups, crons };
}

describe("the approve step of an announced host", () => {
  it("offers the token's default schedule and retention, and 'No schedule' as a box", async () => {
    const id = await announce("web-02");
    const enrol = await (await app.operator.request("/enroll")).text();
    expect(enrol).toContain(`href="/enroll/pending/${id}/approve"`);
    const page = await (await app.operator.request(`/enroll/pending/${id}/approve`)).text();
    expect(page).toContain('data-testid="approve-fingerprint">SHA256:');
    expect(/name="initial_cron" value="([^"]+)"/.exec(page)?.[1]).toMatch(
      /^([0-9]|[1-5][0-9]) [1-4] \* \* \*$/,
    );
    expect(page).toMatch(/name="keep_daily" type="number" min="0" value="7"/);
    expect(page).toMatch(/name="keep_weekly" type="number" min="0" value="4"/);
    expect(page).toMatch(/name="keep_monthly" type="number" min="0" value="6"/);
    expect(page).toMatch(/name="no_schedule" value="on"[^>]*>\s*No schedule/);
  });

  it("creates the scheduled group with its retention when approved", async () => {
    const res = await approve("web-03", {
      initial_paths: "/etc\n /srv/www \n",
      keep_daily: "10",
      keep_weekly: "3",
      keep_monthly: "0",
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/enroll");
    const made = await hostNamed("web-03");
    expect(made?.groups).toEqual([
      expect.objectContaining({
        name: "default",
        includes: ["/etc", "/srv/www"],
        retentionPolicy: { daily: 10, weekly: 3 },
      }),
    ]);
    expect(made?.crons).toEqual([{ cron: "45 2 * * *", groupId: made?.groups[0]?.id }]);
    // The agent's first hello gets it as its first schedule.set.
    const set = await loadScheduleSet(app.deps.db, made?.host.id ?? "");
    expect(set?.version).toBe(1);
    expect(set?.schedules.map((s) => s.cron)).toEqual(["45 2 * * *"]);
  });

  it("creates the group unscheduled only when 'No schedule' is ticked", async () => {
    const res = await approve("web-04", { no_schedule: "on" });
    expect(res.status).toBe(303);
    const made = await hostNamed("web-04");
    expect(made?.groups.map((group) => [group.includes, group.retentionPolicy])).toEqual([[["/etc"], {}]]);
    expect(made?.crons).toEqual([]);
  });

  it("refuses a bad cron at its input, keeps what was typed and approves nothing", async () => {
    const res = await approve(
      "web-05",
      { initial_paths: "/etc\n/home", initial_cron: "every night", keep_daily: "9" },
      { Accept: "text/html" },
    );
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain('data-testid="approve-form"');
    expect(html).toMatch(
      /name="initial_cron" value="every night" id="field-initial_cron"[^>]* aria-invalid="true"/,
    );
    expect(html).toMatch(/<small class="field-error" id="error-initial_cron"[^>]*>[^<]+<\/small>/);
    expect(html).toMatch(/name="keep_daily" type="number" min="0" value="9"/);
    expect(html).toContain(">/etc\n/home</textarea>");
    expect(await hostNamed("web-05")).toBeUndefined();
  });

  it("refuses a path in the agent's own directories at its input, as the API does", async () => {
    const res = await approve(
      "web-06",
      { initial_paths: "/srv\n/etc/fleetback-agent/keys" },
      { Accept: "text/html" },
    );
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toMatch(
      /<small class="field-error" id="error-initial_paths"[^>]*>[^<]*agent&#39;s own directory \/etc\/fleetback-agent /,
    );
    expect(html).toContain(">/srv\n/etc/fleetback-agent/keys</textarea>");
    expect(await hostNamed("web-06")).toBeUndefined();
  });
});

describe("the token form's schedule", () => {
  it("refuses a bad cron at its input instead of an error page", async () => {
    const csrf = csrfFrom(await (await app.operator.request("/enroll")).text());
    const res = await app.operator.form(
      "/enroll",
      { _csrf: csrf, initial_paths: "/etc", initial_cron: "61 25 * * *", keep_daily: "7" },
      { Accept: "text/html" },
    );
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).not.toContain("<h1>Bad request</h1>");
    expect(html).toMatch(
      /name="initial_cron" value="61 25 \* \* \*" id="field-initial_cron"[^>]* aria-invalid="true"/,
    );
    expect(html).toMatch(
      /data-testid="form-error-summary"[\s\S]*href="#field-initial_cron">When \(cron\)<\/a>/,
    );
    expect(await app.deps.db.select().from(enrolmentTokens)).toHaveLength(0);
  });
});
