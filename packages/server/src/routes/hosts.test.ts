import { auditLog, hostCredentials, hosts } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../app.js";
import { enrolHost, HOST_INFO } from "../testing/enrolment-app.js";
import { createTestClient, csrfFrom } from "../testing/http.js";
import { signedInPerTest } from "../testing/signed-in-app.js";

const CANARY = "Canary-Host-Pw-7731";

const s = signedInPerTest({ users: [{ username: "looker", role: "viewer" }] });
let hostId: string;

beforeEach(async () => {
  hostId = await enrolHost(s.admin, { ...HOST_INFO, hostname: "db-01", arch: "arm64", tool_version: "" });
});

describe("host credentials", () => {
  it("merges supplied fields, shows the URL and username but never the password, and audits field names only", async () => {
    const first = await s.admin.json("PUT", `/api/hosts/${hostId}/repo-credentials`, {
      url: "rest:http://127.0.0.1:8000/db-01/",
      username: "db-01",
      password: CANARY,
    });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ pushed: false });
    const second = await s.admin.json("PUT", `/api/hosts/${hostId}/repo-credentials`, { username: "db-01b" });
    expect(second.status).toBe(200);
    const detail = await (await s.users.looker.request(`/api/hosts/${hostId}`)).text();
    expect(JSON.parse(detail)).toMatchObject({
      host: { repository: { state: "bound", url: "rest:http://127.0.0.1:8000/db-01/", username: "db-01b" } },
    });
    const page = await (await s.admin.request(`/hosts/${hostId}`)).text();
    const audit = JSON.stringify(await s.deps.db.select().from(auditLog));
    for (const surface of [detail, page, audit]) {
      expect(surface).not.toContain(CANARY);
    }
    expect(audit).toContain("host.repo_credentials.update");
    const [row] = await s.deps.db.select().from(hostCredentials).where(eq(hostCredentials.hostId, hostId));
    expect(Buffer.from(row?.repoSealed ?? []).toString("latin1")).not.toContain(CANARY);
  });

  it("needs a URL and password for a first binding, naming the missing field", async () => {
    const res = await s.admin.json("PUT", `/api/hosts/${hostId}/admin-credentials`, { username: "x" });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/url|password/);
  });

  it("is refused to a viewer", async () => {
    const res = await s.users.looker.json("PUT", `/api/hosts/${hostId}/repo-credentials`, {
      password: CANARY,
    });
    expect(res.status).toBe(403);
  });

  it("is saved from the host page form", async () => {
    const csrf = csrfFrom(await (await s.admin.request(`/hosts/${hostId}`)).text());
    const res = await s.admin.form(`/hosts/${hostId}/credentials/repo`, {
      _csrf: csrf,
      url: "/srv/restic/db-01",
      username: "",
      password: CANARY,
    });
    expect(res.status).toBe(303);
    const page = await (await s.admin.request(`/hosts/${hostId}`)).text();
    expect(page).toContain("<code>/srv/restic/db-01</code>");
    expect(page).not.toContain(CANARY);
  });
});

describe("bandwidth", () => {
  it("stores caps, treats null as no cap, and names a bad field", async () => {
    const ok = await s.admin.json("PUT", `/api/hosts/${hostId}/bandwidth`, { up_kbps: 512, down_kbps: null });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({
      caps: { bandwidth_up_kbps: 512, bandwidth_down_kbps: null },
      pushed: false,
    });
    const [host] = await s.deps.db.select().from(hosts).where(eq(hosts.id, hostId));
    expect(host).toMatchObject({ bandwidthUpKbps: 512, bandwidthDownKbps: null });
    const bad = await s.admin.json("PUT", `/api/hosts/${hostId}/bandwidth`, { up_kbps: 0, down_kbps: null });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toMatch(/^up_kbps: /);
  });
});

describe("jobs and removed endpoints", () => {
  it("answers 503 for a manual init on an offline host and creates nothing", async () => {
    const res = await s.admin.json("POST", `/api/hosts/${hostId}/jobs`, { kind: "init" });
    expect(res.status).toBe(503);
  });

  it.each(["backup", "restore", "diff"])(
    "refuses %s, which has its own endpoint, naming the field",
    async (kind) => {
      const res = await s.admin.json("POST", `/api/hosts/${hostId}/jobs`, { kind });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { message: string }).message).toMatch(/^kind: /);
    },
  );

  it.each(["run-backup", "init-repo"])(
    "answers 410 Gone for /hosts/{id}/%s with the replacement",
    async (path) => {
      const script = createTestClient(createApp(s.deps), s.deps.config.baseUrl);
      const res = await script.request(`/hosts/${hostId}/${path}`, { method: "POST" });
      expect(res.status).toBe(410);
      expect(await res.text()).toMatch(/^Gone: .+(source group|init)/);
    },
  );
});

describe("host deletion", () => {
  it("removes the host and its credentials and revokes its token", async () => {
    await s.admin.json("PUT", `/api/hosts/${hostId}/repo-credentials`, { url: "/srv/r", password: CANARY });
    expect((await s.users.looker.json("DELETE", `/api/hosts/${hostId}`)).status).toBe(403);
    expect((await s.admin.json("DELETE", `/api/hosts/${hostId}`)).status).toBe(204);
    expect(await s.deps.db.select().from(hosts)).toHaveLength(0);
    expect(await s.deps.db.select().from(hostCredentials)).toHaveLength(0);
    expect((await s.admin.request(`/api/hosts/${hostId}`)).status).toBe(404);
  });
});
