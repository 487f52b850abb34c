/**
 * Issue 38.2: a new machine enrols as the successor of a host whose machine is gone. It takes over
 * the host's row (name, labels, groups, schedules, credentials, snapshot history), the old agent's
 * token stops working, the token works once and dies with the host, and the audit says who
 * replaced what.
 */
import { hashToken } from "@fleetback/crypto";
import { auditLog, enrolmentTokens, hostCredentials, hosts, schedules, sourceGroups } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { asc, eq } from "drizzle-orm";
import { afterEach, beforeEach, expect, it } from "vitest";
import { REFUSED } from "../enrolment/enrol.js";
import { authenticateAgent } from "../hosts/agent-auth.js";
import { HOST_INFO, startEnrolmentApp } from "../testing/enrolment-app.js";
import { csrfFrom, type TestClient } from "../testing/http.js";
import type { TestDeps } from "../testing/test-deps.js";

let deps: TestDeps;
let admin: TestClient;
let agent: TestClient;

async function enrol(token: string, hostname: string) {
  return agent.json("POST", "/api/agents/enroll", { token, ...HOST_INFO, hostname });
}

/** A host enrolled the usual way, with a repository, a first group on a schedule and labels. */
async function enrolledHost() {
  const minted = await admin.json("POST", "/api/enrollment-tokens", {
    repository: { url: "rest:http://127.0.0.1:8000/db-01/", username: "db-01" },
    initial_paths: ["/srv/data"],
    labels: { env: "prod", role: "db" },
  });
  expect(minted.status).toBe(201);
  const { token } = (await minted.json()) as { token: string };
  const res = await enrol(token, "db-01");
  expect(res.status).toBe(201);
  return (await res.json()) as { host_id: string; agent_token: string };
}

async function snapshotOf(hostId: string) {
  const [host] = await deps.db.select().from(hosts).where(eq(hosts.id, hostId));
  const groups = await deps.db
    .select({ name: sourceGroups.name, includes: sourceGroups.includes })
    .from(sourceGroups)
    .where(eq(sourceGroups.hostId, hostId))
    .orderBy(asc(sourceGroups.name));
  const crons = await deps.db
    .select({ cron: schedules.cron })
    .from(schedules)
    .where(eq(schedules.hostId, hostId));
  const [credentials] = await deps.db
    .select()
    .from(hostCredentials)
    .where(eq(hostCredentials.hostId, hostId));
  return { host, groups, crons, credentials };
}

runDbSuite("a successor machine", (getDb) => {
  beforeEach(async () => {
    ({ deps, operator: admin, agent } = await startEnrolmentApp({ db: getDb() }));
  });
  afterEach(async () => {
    await deps.close();
  });

  it("takes over the host: same id, name, labels, groups, schedules and credentials; the old agent token dies", async () => {
    const old = await enrolledHost();
    const before = await snapshotOf(old.host_id);
    expect(before.groups).toHaveLength(1);

    const minted = await admin.json("POST", `/api/hosts/${old.host_id}/successor-token`, {});
    expect(minted.status).toBe(201);
    const successor = (await minted.json()) as {
      token: string;
      host_id: string;
      host_name: string;
      install_command: string;
    };
    expect(successor).toMatchObject({ host_id: old.host_id, host_name: "db-01" });
    expect(successor.install_command).toContain(successor.token);
    const listed = (await (await admin.request("/api/enrollment-tokens")).json()) as {
      enrollment_tokens: Array<{ successor_of: string | null }>;
    };
    expect(listed.enrollment_tokens.map((t) => t.successor_of)).toEqual([old.host_id]);

    const res = await enrol(successor.token, "db-01-rebuilt");
    expect(res.status).toBe(201);
    const enrolled = (await res.json()) as { host_id: string; agent_token: string };
    expect(enrolled.host_id).toBe(old.host_id);
    expect(enrolled.agent_token).not.toBe(old.agent_token);

    const after = await snapshotOf(old.host_id);
    expect(await deps.db.select({ id: hosts.id }).from(hosts)).toHaveLength(1);
    expect(after.host).toMatchObject({
      name: "db-01",
      reportedHostname: "db-01-rebuilt",
      labels: { env: "prod", role: "db" },
      resticHost: before.host?.resticHost,
      agentTokenHash: hashToken(enrolled.agent_token),
      scheduleAckedVersion: 0,
    });
    expect(after.groups).toEqual(before.groups);
    expect(after.crons).toEqual(before.crons);
    expect(after.credentials?.repoSealed).toEqual(before.credentials?.repoSealed);

    expect((await authenticateAgent(deps.db, `Bearer ${old.agent_token}`)).ok).toBe(false);
    const now = await authenticateAgent(deps.db, `Bearer ${enrolled.agent_token}`);
    expect(now.ok && now.identity.hostId).toBe(old.host_id);

    // Once only.
    const again = await enrol(successor.token, "db-01-third");
    expect(again.status).toBe(401);
    expect(await again.text()).toContain(REFUSED);

    const created = (
      await deps.db.select().from(auditLog).where(eq(auditLog.action, "enrolment_token.create"))
    ).find((entry) => (entry.details as { successor_of?: string }).successor_of !== undefined);
    expect(created?.details).toMatchObject({ successor_of: old.host_id, host_name: "db-01" });
    const [replaced] = await deps.db.select().from(auditLog).where(eq(auditLog.action, "host.replace"));
    expect(replaced).toMatchObject({ actorKind: "agent", targetKind: "host", targetId: old.host_id });
    expect(replaced?.details).toMatchObject({
      name: "db-01",
      minted_by: created?.actorUserId,
      // The old agent never said hello here, so it never reported a hostname.
      predecessor: { hostname: null, agent_version: HOST_INFO.agent_version },
      successor: { hostname: "db-01-rebuilt" },
    });
  });

  it("dies with its host, is refused for a host that is not there, and is for admins only", async () => {
    const old = await enrolledHost();
    const minted = await admin.json("POST", `/api/hosts/${old.host_id}/successor-token`, {});
    const { token } = (await minted.json()) as { token: string };
    expect((await admin.json("DELETE", `/api/hosts/${old.host_id}`)).status).toBe(204);
    expect(
      await deps.db.select().from(enrolmentTokens).where(eq(enrolmentTokens.successorOf, old.host_id)),
    ).toEqual([]);
    expect((await enrol(token, "stranger")).status).toBe(401);
    expect(await deps.db.select().from(hosts)).toEqual([]);

    expect(
      (await admin.json("POST", "/api/hosts/01JNOSUCHHOST0000000000000/successor-token", {})).status,
    ).toBe(404);
    const other = await enrolledHost();
    expect(
      (
        await admin.json("POST", "/api/users", {
          username: "ops",
          password: "correct horse battery",
          role: "operator",
        })
      ).status,
    ).toBe(201);
    const operator = agent;
    await operator.json("POST", "/api/auth/login", { username: "ops", password: "correct horse battery" });
    expect((await operator.json("POST", `/api/hosts/${other.host_id}/successor-token`, {})).status).toBe(403);
  });

  it("is minted from the host page, shown once and not cached", async () => {
    const old = await enrolledHost();
    const page = await (await admin.request(`/hosts/${old.host_id}`)).text();
    expect(page).toContain('data-testid="successor-token"');
    const res = await admin.form(
      `/hosts/${old.host_id}/successor-token`,
      { _csrf: csrfFrom(page) },
      { Accept: "text/html", Referer: `${deps.config.baseUrl}/hosts/${old.host_id}` },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    const html = await res.text();
    const command = /data-testid="install-command">([^<]*)</.exec(html)?.[1] ?? "";
    const token = /--token &#39;(fbe_[^&]+)&#39;/.exec(command)?.[1] ?? "";
    expect(token).toMatch(/^fbe_/);
    expect((await enrol(token, "db-01-new")).status).toBe(201);
    const enrolPage = await (await admin.request("/enroll")).text();
    expect(enrolPage).not.toContain(token);
  });
});
