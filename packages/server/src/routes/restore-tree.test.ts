/**
 * The wizard's tree partial and its JSON twin against a real server and a raw test agent that
 * answers tree.list by hand: entries rendered, a second look served from the session cache
 * without a frame, agent errors shown and never cached, a silent agent ending at the timeout.
 */
import { hosts } from "@fleetback/db";
import { testEngines } from "@fleetback/db/testing";
import type { TreeEntry } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestClient } from "../testing/http.js";
import { seedEmptySnapshot, seedHost } from "../testing/seed.js";
import { type ServedSnapshotHost, serveSnapshotHost } from "../testing/served-snapshot-host.js";
import { signInOn } from "../testing/signed-in-app.js";
import { connectAgent } from "../testing/test-agent.js";
import { createTestDeps, type TestDeps } from "../testing/test-deps.js";

const SNAP = "b6926cf4b56e08d52e23b47ed13dc7c0f3ade7f8eabe18b3dd6ca809e77d963a";
const SESSION = "wizard-session-0123456789";
// Long enough for an answered request on a loaded machine, short enough for the silent agent's wait.
const TIMEOUT_MS = 3_000;

const ENTRIES: TreeEntry[] = [
  {
    name: "readme.txt",
    path: "/srv/docs/readme.txt",
    type: "file",
    size: 2048,
    mtime: "2026-11-20T09:00:00Z",
  },
  { name: "sub", path: "/srv/docs/sub", type: "dir", size: 0, mtime: "2026-11-20T09:00:00Z" },
  { name: "link <b>", path: "/srv/docs/link <b>", type: "symlink", size: 0, mtime: "2026-11-20T09:00:00Z" },
];

for (const engine of testEngines()) {
  describe(`restore tree partial (${engine})`, () => {
    let deps: TestDeps;
    let olga: TestClient;
    let otto: TestClient;
    let served: ServedSnapshotHost;

    beforeAll(async () => {
      const base = await createTestDeps({ engine });
      deps = Object.assign(base, { treeListing: { timeoutMs: TIMEOUT_MS } });
      // Both users' clients talk to one app, so they share its tree cache as browsers share a server's.
      const { users } = await signInOn(deps, {
        users: [
          { username: "olga", role: "operator" },
          { username: "otto", role: "operator" },
        ],
      });
      ({ olga, otto } = users);
      served = await serveSnapshotHost(deps, { name: "web-1", snapshotId: SNAP, paths: ["/srv/docs"] });
    }, 180_000);
    afterAll(async () => {
      await served?.close();
    });

    const treeUrl = (path: string, session = SESSION) =>
      `/hosts/${served.hostId}/restore/tree?session=${session}&snapshot_id=${SNAP}&path=${encodeURIComponent(path)}`;
    const treeRequests = () => served.agent.frames.filter((frame) => frame.type === "tree.list").length;

    it("lists the agent's entries, then serves the same folder from the session cache", async () => {
      const { res, frame } = await served.askTree(olga, treeUrl("/srv/docs"), (f) =>
        served.agent.send("tree.list.result", { entries: ENTRIES }, f.id),
      );
      expect(frame?.payload).toEqual({ snapshot_id: SNAP, path: "/srv/docs" });
      expect(res.status).toBe(200);
      const html = await res.text();
      expect(html.match(/data-testid="tree-entry"/g)).toHaveLength(3);
      // Folders first, each opening its own listing in place.
      expect(html.indexOf('data-path="/srv/docs/sub"')).toBeLessThan(
        html.indexOf('data-path="/srv/docs/readme.txt"'),
      );
      expect(html).toContain(
        `hx-get="/hosts/${served.hostId}/restore/tree?session=${SESSION}&amp;snapshot_id=${SNAP}&amp;path=%2Fsrv%2Fdocs%2Fsub&amp;nested=1"`,
      );
      expect(html).toContain('name="paths" value="/srv/docs/readme.txt"');
      expect(html).toContain("2.00 KiB");
      // The one time format of every page (issue 35), not restic's raw string.
      expect(html).toContain(
        '<time datetime="2026-11-20T09:00:00Z" title="2026-11-20T09:00:00Z">20 Nov, 09:00 UTC</time>',
      );
      expect(html).toContain("link &lt;b&gt;");
      expect(html).toContain('data-testid="tree-crumb">docs</button>');

      const before = treeRequests();
      const again = await served.askTree(olga, treeUrl("/srv/docs"));
      expect(await again.res.text()).toContain('data-cached="true"');
      expect(treeRequests()).toBe(before);

      // Another operator with the same session id is not served olga's listing.
      const other = await served.askTree(otto, treeUrl("/srv/docs"), (f) =>
        served.agent.send("tree.list.result", { entries: [] }, f.id),
      );
      expect(await other.res.text()).toContain('data-testid="tree-empty"');
      expect(treeRequests()).toBe(before + 1);
    });

    it("shows the agent's error and does not cache it", async () => {
      const first = await served.askTree(olga, treeUrl("/nope"), (f) =>
        served.agent.send("tree.list.result", { error: 'path "/nope" not found in snapshot' }, f.id),
      );
      const html = await first.res.text();
      expect(first.res.status).toBe(200);
      expect(html).toContain('data-testid="tree-error"');
      expect(html).toContain("path &quot;/nope&quot; not found in snapshot");
      const second = await served.askTree(olga, treeUrl("/nope"), (f) =>
        served.agent.send("tree.list.result", { entries: ENTRIES.slice(0, 1) }, f.id),
      );
      expect(second.frame).toBeDefined();
      expect(await second.res.text()).toContain('data-path="/srv/docs/readme.txt"');
    });

    it("ends at the timeout when the agent stays silent; a late reply is dropped", async () => {
      const started = Date.now();
      const { res } = await served.askTree(olga, treeUrl("/slow"));
      const html = await res.text();
      expect(html).toContain("did not answer within 3 s");
      expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
      const late = served.agent.frames.filter((frame) => frame.type === "tree.list").at(-1);
      expect(late?.payload).toMatchObject({ path: "/slow" });
      served.agent.send("tree.list.result", { entries: ENTRIES }, late?.id);
      // Not cached: the next look asks the agent again.
      const retry = await served.askTree(olga, treeUrl("/slow"), (f) =>
        served.agent.send("tree.list.result", { entries: [] }, f.id),
      );
      expect(retry.frame).toBeDefined();
    });

    it("JSON twin: entries, 502 for an agent error, 400 for a snapshot of another host", async () => {
      const api = (path: string, snapshot = SNAP) =>
        `/api/hosts/${served.hostId}/tree?snapshot_id=${snapshot}&path=${encodeURIComponent(path)}`;
      const ok = await served.askTree(olga, api("/srv"), (f) =>
        served.agent.send("tree.list.result", { entries: ENTRIES }, f.id),
      );
      expect(ok.res.status).toBe(200);
      expect(await ok.res.json()).toMatchObject({ path: "/srv", cached: false, entries: expect.any(Array) });
      const failed = await served.askTree(olga, api("/gone"), (f) =>
        served.agent.send("tree.list.result", { error: "boom" }, f.id),
      );
      expect(failed.res.status).toBe(502);
      expect(await failed.res.json()).toMatchObject({ code: "agent_error", message: "boom" });
      const foreign = await olga.request(api("/", "0123abcd"));
      expect(foreign.status).toBe(400);
      const relative = await olga.request(api("srv"));
      expect(relative.status).toBe(400);
    });

    it("refuses a path in the agent's own directories, the defaults and those its hello named, without asking (issue 33)", async () => {
      const { host, token } = await seedHost(deps, { name: "app-1" });
      await seedEmptySnapshot(deps, host.id, { id: SNAP, hostname: "app-1", paths: ["/"] });
      const own = await connectAgent(served.server.wsUrl, token);
      try {
        own.hello({ hostname: "app-1", agent_dirs: ["/srv/app/agent-state", "/etc/fleetback-agent"] });
        await own.waitFor((frame) => frame.type === "schedule.set");
        const [stored] = await deps.db.select().from(hosts).where(eq(hosts.id, host.id));
        expect(stored?.agentDirs).toEqual(["/srv/app/agent-state", "/etc/fleetback-agent"]);
        for (const [path, dir] of [
          ["/srv/app/agent-state", "/srv/app/agent-state"],
          ["/srv/app/agent-state/tree-index", "/srv/app/agent-state"],
          ["/etc/fleetback-agent", "/etc/fleetback-agent"],
          ["/var/lib/fleetback-agent/update", "/var/lib/fleetback-agent"],
        ] as const) {
          const message = `path: ${path} is the agent's own directory ${dir} or lies inside it, which holds the host's agent token and is never backed up, restored, listed or downloaded`;
          const api = await olga.request(
            `/api/hosts/${host.id}/tree?snapshot_id=${SNAP}&path=${encodeURIComponent(path)}`,
          );
          expect(api.status, path).toBe(400);
          expect(await api.json(), path).toMatchObject({ code: "invalid", message });
          const page = await olga.request(
            `/hosts/${host.id}/restore/tree?session=${SESSION}&snapshot_id=${SNAP}&path=${encodeURIComponent(path)}`,
            { headers: { "HX-Request": "true" } },
          );
          expect(page.status, path).toBe(400);
          expect(page.headers.get("HX-Trigger"), path).toContain(JSON.stringify(message).slice(1, -1));
        }
        expect(own.frames.filter((frame) => frame.type === "tree.list")).toEqual([]);
      } finally {
        await own.close();
      }
    });

    it("says the host is offline without waiting", async () => {
      const { host } = await seedHost(deps, { name: "db-1" });
      await seedEmptySnapshot(deps, host.id, { id: SNAP, hostname: "db-1", paths: ["/"] });
      const res = await olga.request(
        `/hosts/${host.id}/restore/tree?session=${SESSION}&snapshot_id=${SNAP}&path=%2F`,
      );
      expect(await res.text()).toContain("offline");
      const api = await olga.request(`/api/hosts/${host.id}/tree?snapshot_id=${SNAP}&path=%2F`);
      expect(api.status).toBe(503);
    });
  });
}
