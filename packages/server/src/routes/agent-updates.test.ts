/**
 * POST /api/agent-updates and the fleet page's rollout form, in-process on both engines: field
 * validation names the field; online hosts are sent command.update at once, offline ones wait
 * (pending); hosts already on the version are skipped; a SEA host gets its platform's artefact
 * or fails with the missing artefact named; the rollout is audited without secrets.
 */
import type { Database } from "@fleetback/db";
import { auditLog } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { sha256Hex } from "../agent-artifacts/signed-file.js";
import { closingAfter } from "../testing/closing-after.js";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { createRecordingConnection } from "../testing/recording-connection.js";
import { readHost, seedHost } from "../testing/seed.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

const BUNDLE = new TextEncoder().encode("// fleetback-agent 2.0.0\nconsole.log('agent 2');\n");
const SEA = new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 9, 9, 9]);

async function setup(db: Database): Promise<{ deps: TestDeps; admin: TestClient; operator: TestClient }> {
  const { deps, admin, users } = await startSignedInApp({
    deps: { db },
    adminName: "root",
    users: [{ username: "olga", role: "operator" }],
  });
  await deps.agentBundles.add("2.0.0", BUNDLE);
  await deps.agentBundles.addSea("2.0.0", "linux", "x64", SEA);
  return { deps, admin, operator: users.olga };
}

runDbSuite("agent rollout", (getDb) => {
  it("refuses bad bodies, naming the field", async () => {
    await closingAfter(setup(getDb()), async ({ deps, admin, operator }) => {
      const { host } = await seedHost(deps);
      const rows: Array<[unknown, string]> = [
        [{ host_ids: [host.id] }, "version: is required"],
        [{ version: "", host_ids: [host.id] }, "version:"],
        [{ version: "2.0.0" }, "host_ids: name at least one host, or set all to true"],
        [{ version: "2.0.0", host_ids: [] }, "host_ids:"],
        [{ version: "2.0.0", all: false }, "all:"],
        [{ version: "2.0.0", all: true, host_ids: [host.id] }, "host_ids: give host_ids or all, not both"],
        [{ version: "2.0.0", all: true, extra: 1 }, "extra: is not a known field"],
        [{ version: "7.7.7", all: true }, "version: this server holds no agent 7.7.7"],
        [
          { version: "2.0.0", host_ids: [host.id, "01JDNOSUCHHOST0000000000000", "nope"] },
          "host_ids: no such host: 01JDNOSUCHHOST0000000000000, nope",
        ],
      ];
      for (const [body, message] of rows) {
        const res = await admin.json("POST", "/api/agent-updates", body);
        const json = (await res.json()) as { code: string; message: string };
        expect([body, res.status, json.code]).toEqual([body, 400, "invalid"]);
        expect(json.message).toContain(message);
      }
      expect((await readHost(deps, host.id))?.updateState).toBeNull();
      const refused = await operator.json("POST", "/api/agent-updates", { version: "2.0.0", all: true });
      expect(refused.status).toBe(403);
    });
  });

  it("rolls out to the hosts a label selector matches", async () => {
    await closingAfter(setup(getDb()), async ({ deps, admin }) => {
      const { host: prod } = await seedHost(deps, {
        name: "p",
        agentVersion: "1.0.0",
        labels: { env: "prod" },
      });
      const { host: dev } = await seedHost(deps, {
        name: "d",
        agentVersion: "1.0.0",
        labels: { env: "dev" },
      });
      const res = await admin.json("POST", "/api/agent-updates", { version: "2.0.0", selector: "env=prod" });
      expect(res.status).toBe(200);
      expect(
        ((await res.json()) as { targets: Array<{ host_id: string }> }).targets.map((t) => t.host_id),
      ).toEqual([prod.id]);
      expect((await readHost(deps, dev.id))?.updateState).toBeNull();
      const both = await admin.json("POST", "/api/agent-updates", {
        version: "2.0.0",
        selector: "env=prod",
        all: true,
      });
      expect(((await both.json()) as { message: string }).message).toBe(
        "selector: give host_ids, all or selector, one of them",
      );
    });
  });

  it("sends command.update to online hosts, leaves offline ones pending, skips hosts on the version", async () => {
    await closingAfter(setup(getDb()), async ({ deps, admin }) => {
      const { host: online } = await seedHost(deps, { name: "a-online", agentVersion: "1.0.0" });
      const { host: offline } = await seedHost(deps, { name: "b-offline", agentVersion: "1.0.0" });
      const { host: current } = await seedHost(deps, { name: "c-current", agentVersion: "2.0.0" });
      const connection = createRecordingConnection(online.id);
      deps.hub.register(connection);

      const res = await admin.json("POST", "/api/agent-updates", { version: "2.0.0", all: true });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        version: "2.0.0",
        targets: [
          { host_id: online.id, hostname: "a-online", state: "sent" },
          { host_id: offline.id, hostname: "b-offline", state: "pending" },
        ],
        skipped: [{ host_id: current.id, hostname: "c-current", reason: "already runs 2.0.0" }],
      });
      const [frame] = connection.frames;
      expect(connection.frames).toHaveLength(1);
      expect(frame?.type).toBe("command.update");
      const stored = await deps.agentBundles.read("2.0.0");
      expect(frame?.payload).toEqual({
        version: "2.0.0",
        url: `${deps.config.baseUrl}/install/agent/2.0.0`,
        sha256: sha256Hex(BUNDLE),
        signature: stored.ok ? stored.info.signature : "?",
      });
      expect(await readHost(deps, online.id)).toMatchObject({
        updateVersion: "2.0.0",
        updateState: "sent",
        updateError: null,
        updateRequestedAt: deps.clock.now(),
      });
      expect(await readHost(deps, offline.id)).toMatchObject({
        updateVersion: "2.0.0",
        updateState: "pending",
      });
      expect(await readHost(deps, current.id)).toMatchObject({ updateVersion: null, updateState: null });

      const [entry] = await deps.db.select().from(auditLog).where(eq(auditLog.action, "agent.update"));
      expect(entry).toMatchObject({
        targetKind: "agent_version",
        targetId: "2.0.0",
        details: { all: true, host_ids: [online.id, offline.id], skipped: 1 },
      });
    });
  });

  it("points SEA hosts at their platform's artefact and fails those whose platform has none", async () => {
    await closingAfter(setup(getDb()), async ({ deps, admin }) => {
      const { host: x64 } = await seedHost(deps, {
        name: "sea-x64",
        agentKind: "sea",
        os: "linux",
        arch: "x64",
      });
      const { host: arm } = await seedHost(deps, {
        name: "sea-arm",
        agentKind: "sea",
        os: "linux",
        arch: "arm64",
      });
      const connection = createRecordingConnection(x64.id);
      deps.hub.register(connection);
      const res = await admin.json("POST", "/api/agent-updates", {
        version: "2.0.0",
        host_ids: [x64.id, arm.id],
      });
      const body = (await res.json()) as {
        targets: Array<{ hostname: string; state: string; error?: string }>;
      };
      expect(body.targets).toEqual([
        {
          host_id: arm.id,
          hostname: "sea-arm",
          state: "failed",
          error: expect.stringContaining("no single-executable agent 2.0.0 for linux-arm64"),
        },
        { host_id: x64.id, hostname: "sea-x64", state: "sent" },
      ]);
      expect(connection.frames[0]?.payload).toMatchObject({
        url: `${deps.config.baseUrl}/install/agent/2.0.0/linux-x64`,
        sha256: sha256Hex(SEA),
      });
      expect(await readHost(deps, arm.id)).toMatchObject({
        updateState: "failed",
        updateError: expect.stringContaining("sea-linux-arm64"),
      });
    });
  });

  it("rolls out from the host list's form (CSRF checked) and shows versions and states", async () => {
    await closingAfter(setup(getDb()), async ({ deps, admin }) => {
      const { host: one } = await seedHost(deps, { name: "one", agentVersion: "1.0.0" });
      const { host: two } = await seedHost(deps, { name: "two", agentVersion: "1.0.0" });
      const page = await (await admin.request("/hosts")).text();
      expect(page).toContain('data-testid="rollout-form"');
      expect(page).toContain('<option value="2.0.0">2.0.0 (also single executable for linux-x64)</option>');
      const csrf = csrfFrom(page);

      const noToken = await admin.form("/agent-updates", { version: "2.0.0", host_ids: one.id });
      expect(noToken.status).toBe(403);
      const posted = await admin.form("/agent-updates", { _csrf: csrf, version: "2.0.0", host_ids: one.id });
      expect(posted.status).toBe(303);
      expect(posted.headers.get("Location")).toBe("/hosts?rollout=2.0.0&requested=1&already=0");
      expect((await readHost(deps, one.id))?.updateState).toBe("pending");
      expect((await readHost(deps, two.id))?.updateState).toBeNull();

      const all = await admin.form("/agent-updates", {
        _csrf: csrf,
        version: "2.0.0",
        all: "1",
        host_ids: one.id,
      });
      expect(all.status).toBe(303);
      expect((await readHost(deps, two.id))?.updateState).toBe("pending");
      const none = await admin.form("/agent-updates", { _csrf: csrf, version: "2.0.0" });
      expect(none.status).toBe(400);

      const after = await (await admin.request("/hosts")).text();
      expect(after).toContain('data-update-state="pending"');
      expect(after).toContain("→ 2.0.0: pending");
    });
  });

  it("says so when the chosen hosts already run the version, instead of seeming to send (issue 35)", async () => {
    await closingAfter(setup(getDb()), async ({ deps, admin }) => {
      const { host: current } = await seedHost(deps, { name: "current", agentVersion: "2.0.0" });
      const { host: old } = await seedHost(deps, { name: "old", agentVersion: "1.0.0" });
      const csrf = csrfFrom(await (await admin.request("/hosts")).text());
      const only = await admin.form("/agent-updates", {
        _csrf: csrf,
        version: "2.0.0",
        host_ids: current.id,
      });
      expect(only.status).toBe(303);
      const skipped = await (await admin.request(only.headers.get("Location") ?? "")).text();
      expect(skipped).toMatch(
        /data-testid="rollout-outcome">Nothing sent: the chosen host already runs agent 2\.0\.0\./,
      );
      expect((await readHost(deps, current.id))?.updateState).toBeNull();

      const both = await admin.form("/agent-updates", { _csrf: csrf, version: "2.0.0", all: "1" });
      const mixed = await (await admin.request(both.headers.get("Location") ?? "")).text();
      expect(mixed).toContain("Agent 2.0.0 requested for 1 host");
      expect(mixed).toContain("1 host already runs it; nothing was sent to it.");
      expect((await readHost(deps, old.id))?.updateState).toBe("pending");

      expect((await admin.request("/hosts?rollout=2.0.0&requested=x&already=0")).status).toBe(400);
      expect(await (await admin.request("/hosts")).text()).not.toContain("rollout-outcome");
    });
  });

  it("hides the rollout form from operators", async () => {
    await closingAfter(setup(getDb()), async ({ deps, operator }) => {
      await seedHost(deps, { name: "one" });
      const page = await (await operator.request("/hosts")).text();
      expect(page).toContain('data-testid="host-row"');
      expect(page).not.toContain("rollout-form");
    });
  });

  it("shows agent version, kind, tool and protocol versions, update state and the too-old help on the host page", async () => {
    await closingAfter(setup(getDb()), async ({ deps, operator }) => {
      const at = deps.clock.now();
      const { host } = await seedHost(deps, {
        name: "old-one",
        agentVersion: "1.0.0",
        toolVersion: "0.18.1",
        protocolVersion: 3,
        agentKind: "sea",
        os: "win32",
        arch: "x64",
        updateVersion: "2.0.0",
        updateState: "rolled_back",
        updateError: "2.0.0 <did not> connect within 120 s",
        updateRequestedAt: at,
        updateStateAt: at,
        refusedProtocolVersion: 0,
        refusedAt: at,
      });
      const page = await (await operator.request(`/hosts/${host.id}`)).text();
      expect(page).toContain('data-testid="agent-version">1.0.0<');
      expect(page).toContain("single executable (win32-x64)");
      expect(page).toContain('data-testid="tool-version">0.18.1<');
      expect(page).toContain('data-testid="protocol-version">3<');
      expect(page).toContain('data-update-state="rolled_back"');
      expect(page).toContain("2.0.0 &lt;did not&gt; connect within 120 s");
      expect(page).toContain(`href="${deps.config.baseUrl}/docs/agent-upgrade"`);
      expect(page).toContain("protocol version 0");

      const fleet = await (await operator.request("/hosts")).text();
      expect(fleet).toContain("→ 2.0.0: rolled back");
      expect(fleet).toContain('data-testid="host-update-error">2.0.0 &lt;did not&gt; connect within 120 s<');

      const json = (await (await operator.request(`/api/hosts/${host.id}`)).json()) as { host: unknown };
      expect(json.host).toMatchObject({
        agent_kind: "sea",
        protocol_version: 3,
        update: { version: "2.0.0", state: "rolled_back", error: "2.0.0 <did not> connect within 120 s" },
        refused_hello: { protocol_version: 0 },
      });
      const list = (await (await operator.request("/api/hosts")).json()) as { hosts: unknown[] };
      expect(list.hosts).toContainEqual(
        expect.objectContaining({
          id: host.id,
          agent_kind: "sea",
          update: expect.objectContaining({ state: "rolled_back" }),
        }),
      );

      const { host: fresh } = await seedHost(deps, { name: "fresh" });
      const freshPage = await (await operator.request(`/hosts/${fresh.id}`)).text();
      expect(freshPage).toContain("none requested");
      expect(freshPage).toContain("not connected yet");
      expect(freshPage).not.toContain("protocol-too-old");
    });
  });
});
