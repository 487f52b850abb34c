/**
 * A credential slot's user name and its repository server login through the API (issue 31): null
 * and "" remove a user name from every slot; a login password apart from the repository password
 * is stored, shown only as set, never echoed, and not sent to an agent too old to use it.
 */
import { auditLog, hosts, jobs } from "@fleetback/db";
import { PROTOCOL_VERSION, SNAPSHOT_OWNER_PROTOCOL_VERSION } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { enrolHost, HOST_INFO } from "../testing/enrolment-app.js";
import type { TestClient } from "../testing/http.js";
import { createRecordingConnection, type RecordingConnection } from "../testing/recording-connection.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

const REPO_CANARY = "Canary-Repo-Pw-4471";
const LOGIN_CANARY = "Canary-Login-Pw-9052";
/** A slot bound to the host's repository, and the same with a login password for its server. */
const BOUND = { url: "rest:http://127.0.0.1:8000/db-01/", username: "db-01", password: REPO_CANARY };
const BOUND_WITH_LOGIN = { ...BOUND, login_password: LOGIN_CANARY };
const OLD_PROTOCOL = SNAPSHOT_OWNER_PROTOCOL_VERSION - 1;

const SLOTS = [
  { slot: "repo", path: "repo-credentials", view: (host: HostJson) => host.repository },
  { slot: "admin", path: "admin-credentials", view: (host: HostJson) => host.admin_credentials },
  { slot: "mirror", path: "mirror-credentials", view: (host: HostJson) => host.mirror.repository },
] as const;

interface SlotJson {
  state: string;
  url?: string;
  username?: string;
  login_password_set?: boolean;
  withheld_reason?: string;
}
interface HostJson {
  repository: SlotJson;
  admin_credentials: SlotJson;
  mirror: { repository: SlotJson };
}

let deps: TestDeps;
let admin: TestClient;
let hostId: string;

beforeEach(async () => {
  ({ deps, admin } = await startSignedInApp());
  hostId = await enrolHost(admin, { ...HOST_INFO, hostname: "db-01", tool_version: "" });
});
afterEach(async () => {
  await deps.close();
});

async function hostJson(): Promise<HostJson> {
  return ((await (await admin.request(`/api/hosts/${hostId}`)).json()) as { host: HostJson }).host;
}

/** An agent of `protocolVersion` holding the host's socket, as its hello would have recorded it. */
async function connect(protocolVersion: number): Promise<RecordingConnection> {
  await deps.db.update(hosts).set({ protocolVersion }).where(eq(hosts.id, hostId));
  const connection = createRecordingConnection(hostId);
  deps.hub.register(connection);
  return connection;
}

describe("a slot's user name", () => {
  it.each(SLOTS)("is removed from the $slot slot by null and by an empty string", async ({ path, view }) => {
    expect((await admin.json("PUT", `/api/hosts/${hostId}/${path}`, BOUND)).status).toBe(200);
    expect(view(await hostJson())).toMatchObject({ state: "bound", username: "db-01" });

    for (const removal of [null, ""]) {
      const removed = await admin.json("PUT", `/api/hosts/${hostId}/${path}`, { username: removal });
      expect(removed.status).toBe(200);
      expect(view(await hostJson())).toEqual({
        state: "bound",
        url: BOUND.url,
        login_password_set: false,
      });
      await admin.json("PUT", `/api/hosts/${hostId}/${path}`, { username: "db-01" });
    }
  });
});

describe("a login password apart from the repository password", () => {
  it("is stored and pushed, shown only as set, and audited by field name only", async () => {
    const agent = await connect(PROTOCOL_VERSION);
    const res = await admin.json("PUT", `/api/hosts/${hostId}/repo-credentials`, BOUND_WITH_LOGIN);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ pushed: true });
    expect(agent.frames.map((frame) => frame.payload)).toContainEqual({
      slot: "repo",
      repository: BOUND_WITH_LOGIN,
    });
    const detail = await (await admin.request(`/api/hosts/${hostId}`)).text();
    expect(JSON.parse(detail).host.repository).toEqual({
      state: "bound",
      url: "rest:http://127.0.0.1:8000/db-01/",
      username: "db-01",
      login_password_set: true,
    });
    const page = await (await admin.request(`/hosts/${hostId}`)).text();
    expect(page).toContain('data-testid="login-password-set"');
    const audit = await deps.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.action, "host.repo_credentials.update"));
    expect(audit.map((entry) => entry.details)).toEqual([
      { fields: ["url", "username", "password", "login_password"] },
    ]);
    const surfaces = [detail, page, JSON.stringify(audit), deps.logLines.join("\n")];
    for (const surface of surfaces) {
      expect(surface).not.toContain(LOGIN_CANARY);
      expect(surface).not.toContain(REPO_CANARY);
    }
  });

  it.each(SLOTS)("is removed from the $slot slot by null and by an empty string", async ({ path, view }) => {
    for (const removal of [null, ""]) {
      await admin.json("PUT", `/api/hosts/${hostId}/${path}`, BOUND_WITH_LOGIN);
      expect(view(await hostJson())).toMatchObject({ login_password_set: true });
      const removed = await admin.json("PUT", `/api/hosts/${hostId}/${path}`, { login_password: removal });
      expect(removed.status).toBe(200);
      expect(view(await hostJson())).toMatchObject({ username: "db-01", login_password_set: false });
    }
  });

  it("goes with the user name it belongs to, and is refused without one", async () => {
    await admin.json("PUT", `/api/hosts/${hostId}/repo-credentials`, BOUND_WITH_LOGIN);
    await admin.json("PUT", `/api/hosts/${hostId}/repo-credentials`, { username: null });
    expect((await hostJson()).repository).toMatchObject({ login_password_set: false });

    const refused = await admin.json("PUT", `/api/hosts/${hostId}/repo-credentials`, {
      login_password: LOGIN_CANARY,
    });
    expect(refused.status).toBe(400);
    const body = await refused.text();
    expect(JSON.parse(body).message).toMatch(/^login_password: needs a username/);
    expect(body).not.toContain(LOGIN_CANARY);
  });

  it("is refused while an agent older than protocol 11 is connected, naming the upgrade", async () => {
    const agent = await connect(OLD_PROTOCOL);
    const res = await admin.json("PUT", `/api/hosts/${hostId}/repo-credentials`, BOUND_WITH_LOGIN);
    expect(res.status).toBe(409);
    const body = await res.text();
    expect(JSON.parse(body)).toMatchObject({
      code: "conflict",
      message: expect.stringMatching(
        new RegExp(
          `^login_password: .*protocol ${SNAPSHOT_OWNER_PROTOCOL_VERSION} or later.*speaks protocol ${OLD_PROTOCOL}: update the agent`,
        ),
      ),
    });
    expect(body).not.toContain(LOGIN_CANARY);
    expect((await hostJson()).repository).toEqual({ state: "absent" });
    expect(agent.frames).toEqual([]);

    // Without a login of its own the slot serves an older agent as before.
    const plain = await admin.json("PUT", `/api/hosts/${hostId}/repo-credentials`, BOUND);
    expect(plain.status).toBe(200);
    expect(agent.frames.map((frame) => frame.type)).toContain("config.update");
  });

  it("keeps the admin slot, and the prune that needs it, from an older agent; a newer one gets both", async () => {
    await deps.db.update(hosts).set({ protocolVersion: OLD_PROTOCOL }).where(eq(hosts.id, hostId));
    await admin.json("PUT", `/api/hosts/${hostId}/admin-credentials`, {
      ...BOUND_WITH_LOGIN,
      username: "admin",
    });
    const old = await connect(OLD_PROTOCOL);
    const refused = await admin.json("POST", `/api/hosts/${hostId}/jobs`, { kind: "prune" });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { message: string }).message).toMatch(
      new RegExp(
        `^kind: prune needs the admin credentials, .*protocol ${SNAPSHOT_OWNER_PROTOCOL_VERSION} or later`,
      ),
    );
    expect(old.frames).toEqual([]);
    expect(await deps.db.select().from(jobs).where(eq(jobs.hostId, hostId))).toEqual([]);

    const current = await connect(PROTOCOL_VERSION);
    const started = await admin.json("POST", `/api/hosts/${hostId}/jobs`, { kind: "prune" });
    expect(started.status).toBe(201);
    expect(current.frames.map((frame) => [frame.type, frame.payload])).toEqual([
      [
        "config.update",
        { slot: "admin", repository: expect.objectContaining({ login_password: LOGIN_CANARY }) },
      ],
      ["command.run", expect.objectContaining({ kind: "prune", requires_admin_creds: true })],
    ]);
  });

  it("is stored for an offline host whose agent was older, and the page says it is not sent", async () => {
    await deps.db.update(hosts).set({ protocolVersion: OLD_PROTOCOL }).where(eq(hosts.id, hostId));
    const res = await admin.json("PUT", `/api/hosts/${hostId}/admin-credentials`, {
      ...BOUND_WITH_LOGIN,
      username: "admin",
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ pushed: false });
    expect((await hostJson()).admin_credentials).toMatchObject({
      login_password_set: true,
      withheld_reason: expect.stringContaining(
        `needs an agent of protocol ${SNAPSHOT_OWNER_PROTOCOL_VERSION}`,
      ),
    });
    const page = await (await admin.request(`/hosts/${hostId}`)).text();
    expect(page).toContain('data-testid="slot-withheld"');
    expect(page).not.toContain(LOGIN_CANARY);
  });
});
