/**
 * A folder too large for one tree.list reply, browsed in pages (protocol 4) against a real server
 * and a raw test agent that answers by hand: "Show more" only when the agent sent `next_after`,
 * following it asks for `after` and answers rows that replace it, each page cached under its own
 * cursor, an appended row's checkbox posts like a first-page one, and the JSON twin pages too.
 */
import { testEngines } from "@fleetback/db/testing";
import type { ServerEnvelope, TreeEntry } from "@fleetback/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { seedEmptySnapshot, seedHost } from "../testing/seed.js";
import { type ServedSnapshotHost, serveSnapshotHost } from "../testing/served-snapshot-host.js";
import { signInOn } from "../testing/signed-in-app.js";
import { connectAgent } from "../testing/test-agent.js";
import { createTestDeps, type TestDeps } from "../testing/test-deps.js";

const SNAP = "b6926cf4b56e08d52e23b47ed13dc7c0f3ade7f8eabe18b3dd6ca809e77d963a";
const SESSION = "wizard-session-paging-0123";
const DIR = "/var/mail/cur";

const entryNamed = (name: string, type: TreeEntry["type"] = "file"): TreeEntry => ({
  name,
  path: `${DIR}/${name}`,
  type,
  size: type === "file" ? 2048 : 0,
  mtime: "2026-11-20T09:00:00Z",
});
// A paged folder keeps the agent's name order: the folder "b-dir" stays between its neighbours.
const PAGE_ONE = [entryNamed("a-1.eml"), entryNamed("b-dir", "dir"), entryNamed("c & d.eml")];
const PAGE_TWO = [entryNamed("e-1.eml"), entryNamed("needle.eml")];

/** The hx-get of the "Show more" button, as the browser would request it. */
function moreUrlOf(html: string): string | undefined {
  const match = /<button[^>]*hx-get="([^"]+)"[^>]*data-testid="tree-more"/.exec(html);
  return match?.[1]?.replaceAll("&amp;", "&");
}

const entryPaths = (html: string) =>
  [...html.matchAll(/data-testid="tree-entry" data-path="([^"]+)"/g)].map((match) =>
    match[1]?.replaceAll("&amp;", "&"),
  );

for (const engine of testEngines()) {
  describe(`restore tree in pages (${engine})`, () => {
    let deps: TestDeps;
    let olga: TestClient;
    let served: ServedSnapshotHost;

    beforeAll(async () => {
      deps = Object.assign(await createTestDeps({ engine }), { treeListing: { timeoutMs: 2_000 } });
      ({ admin: olga } = await signInOn(deps, { adminName: "olga" }));
      served = await serveSnapshotHost(deps, { name: "mail-1", snapshotId: SNAP, paths: ["/var/mail"] });
    }, 180_000);
    afterAll(async () => {
      await served?.close();
    });

    const treeUrl = (path: string) =>
      `/hosts/${served.hostId}/restore/tree?session=${SESSION}&snapshot_id=${SNAP}&path=${encodeURIComponent(path)}`;
    const treeRequests = () => served.agent.frames.filter((frame) => frame.type === "tree.list");

    /** Starts the request and, when `answer` is given, hands the agent's reply over. */
    async function ask(url: string, answer?: (frame: ServerEnvelope) => void) {
      const { res, frame } = await served.askTree(olga, url, answer);
      return { html: await res.text(), status: res.status, frame };
    }

    it("shows 'Show more' only when the agent says more follow, and following it appends the next page", async () => {
      const first = await ask(treeUrl(DIR), (f) =>
        served.agent.send("tree.list.result", { entries: PAGE_ONE, next_after: "c & d.eml" }, f.id),
      );
      expect(first.frame?.payload).toEqual({ snapshot_id: SNAP, path: DIR });
      expect(entryPaths(first.html)).toEqual(PAGE_ONE.map((entry) => entry.path));
      expect(first.html).toContain('data-testid="tree-more"');
      expect(first.html).toContain('type="button"');
      const more = moreUrlOf(first.html);
      expect(more).toBe(`${treeUrl(DIR)}&after=${encodeURIComponent("c & d.eml").replaceAll("%20", "+")}`);

      const second = await ask(more ?? "", (f) =>
        served.agent.send("tree.list.result", { entries: PAGE_TWO }, f.id),
      );
      expect(second.status).toBe(200);
      expect(second.frame?.payload).toEqual({ snapshot_id: SNAP, path: DIR, after: "c & d.eml" });
      // Rows only, to replace the "Show more" row: no second listing, no breadcrumbs.
      expect(second.html.trimStart().startsWith("<li")).toBe(true);
      expect(second.html).not.toContain('data-testid="tree-listing"');
      expect(second.html).not.toContain('data-testid="tree-breadcrumbs"');
      expect(entryPaths(second.html)).toEqual(PAGE_TWO.map((entry) => entry.path));
      expect(second.html).toContain(`<input type="checkbox" name="paths" value="${DIR}/e-1.eml" autofocus>`);
      expect(second.html).toContain(`<input type="checkbox" name="paths" value="${DIR}/needle.eml">`);
      // The last page: nothing more to show.
      expect(second.html).not.toContain('data-testid="tree-more"');
    });

    it("keeps each page in the session cache under its own cursor", async () => {
      const path = `${DIR}/cached`;
      const first = await ask(treeUrl(path), (f) =>
        served.agent.send("tree.list.result", { entries: PAGE_ONE, next_after: "c & d.eml" }, f.id),
      );
      const more = moreUrlOf(first.html) ?? "";
      await ask(more, (f) =>
        served.agent.send("tree.list.result", { entries: PAGE_TWO, next_after: "needle.eml" }, f.id),
      );
      const before = treeRequests().length;
      const again = await ask(treeUrl(path));
      expect(again.html).toContain('data-cached="true"');
      expect(moreUrlOf(again.html)).toBe(more);
      const secondAgain = await ask(more);
      expect(entryPaths(secondAgain.html)).toEqual(PAGE_TWO.map((entry) => entry.path));
      expect(moreUrlOf(secondAgain.html)).toContain("after=needle.eml");
      expect(treeRequests().length).toBe(before);
      // A cursor not seen before is a new page: the agent is asked.
      const third = await ask(moreUrlOf(secondAgain.html) ?? "", (f) =>
        served.agent.send("tree.list.result", { entries: [entryNamed("z.eml")] }, f.id),
      );
      expect(third.frame?.payload).toMatchObject({ after: "needle.eml" });
      expect(treeRequests().length).toBe(before + 1);
    });

    it("a whole folder has no 'Show more' and keeps folders first", async () => {
      const { html } = await ask(treeUrl(`${DIR}/small`), (f) =>
        served.agent.send("tree.list.result", { entries: PAGE_ONE }, f.id),
      );
      expect(html).not.toContain('data-testid="tree-more"');
      expect(entryPaths(html)[0]).toBe(`${DIR}/b-dir`);
    });

    it("a failed later page takes the place of 'Show more' with a retry of the same page", async () => {
      const path = `${DIR}/flaky`;
      const first = await ask(treeUrl(path), (f) =>
        served.agent.send("tree.list.result", { entries: PAGE_ONE, next_after: "c & d.eml" }, f.id),
      );
      const more = moreUrlOf(first.html) ?? "";
      const failed = await ask(more, (f) =>
        served.agent.send("tree.list.result", { error: "restic crashed" }, f.id),
      );
      expect(failed.html).toContain('data-testid="tree-error"');
      expect(failed.html).toContain("restic crashed");
      expect(failed.html).toContain(`hx-get="${more.replaceAll("&", "&amp;")}"`);
      expect(failed.html).toContain('hx-target="closest li"');
      // Not cached: the retry asks the agent again.
      const retried = await ask(more, (f) =>
        served.agent.send("tree.list.result", { entries: PAGE_TWO }, f.id),
      );
      expect(entryPaths(retried.html)).toEqual(PAGE_TWO.map((entry) => entry.path));
    });

    it("an appended row's checkbox posts its path like a first-page one", async () => {
      const wizard = await olga.request(
        `/hosts/${served.hostId}/snapshots/${SNAP}/restore?session=${SESSION}`,
      );
      const body = new URLSearchParams([
        ["_csrf", csrfFrom(await wizard.text())],
        ["session", SESSION],
        ["snapshot_id", SNAP],
        ["paths", `${DIR}/a-1.eml`],
        ["paths", `${DIR}/needle.eml`],
        ["paths", ""],
        ["in_place", "false"],
        ["action", "review"],
      ]);
      const res = await olga.request(`/hosts/${served.hostId}/restore`, {
        method: "POST",
        headers: {
          "Content-Type": "application/x-www-form-urlencoded",
          Origin: new URL(deps.config.baseUrl).origin,
        },
        body: body.toString(),
      });
      expect(res.status).toBe(200);
      const html = await res.text();
      expect(html).toContain(`<input type="hidden" name="paths" value="${DIR}/needle.eml">`);
      expect(html).toContain(`<input type="hidden" name="paths" value="${DIR}/a-1.eml">`);
    });

    it("refuses a cursor that is a path, too long, or empty, naming the field, and asks nothing", async () => {
      const before = treeRequests().length;
      for (const after of ["../etc", "a/b", "..", "x".repeat(1025), ""]) {
        const partial = await olga.request(`${treeUrl(DIR)}&after=${encodeURIComponent(after)}`);
        expect(partial.status, after).toBe(400);
        const api = await olga.request(
          `/api/hosts/${served.hostId}/tree?snapshot_id=${SNAP}&path=${encodeURIComponent(DIR)}&after=${encodeURIComponent(after)}`,
        );
        expect(api.status).toBe(400);
        expect(((await api.json()) as { message: string }).message).toMatch(/^after: /);
      }
      expect(treeRequests().length).toBe(before);
    });

    it("JSON twin: `after` in, `next_after` out, each page cached under its cursor", async () => {
      const api = (after?: string) =>
        `/api/hosts/${served.hostId}/tree?snapshot_id=${SNAP}&path=${encodeURIComponent(`${DIR}/api`)}${after ? `&after=${encodeURIComponent(after)}` : ""}`;
      const first = await ask(api(), (f) =>
        served.agent.send("tree.list.result", { entries: PAGE_ONE, next_after: "c & d.eml" }, f.id),
      );
      expect(JSON.parse(first.html)).toMatchObject({ cached: false, next_after: "c & d.eml" });
      const second = await ask(api("c & d.eml"), (f) =>
        served.agent.send("tree.list.result", { entries: PAGE_TWO }, f.id),
      );
      expect(second.frame?.payload).toMatchObject({ after: "c & d.eml" });
      const body = JSON.parse(second.html) as { entries: TreeEntry[]; next_after?: string };
      expect(body.entries.map((entry) => entry.name)).toEqual(["e-1.eml", "needle.eml"]);
      expect(body.next_after).toBeUndefined();
      const cached = await ask(api("c & d.eml"));
      expect(JSON.parse(cached.html)).toMatchObject({ cached: true });
    });

    it("does not ask an agent older than protocol 4 for a later page", async () => {
      const old = await seedHost(deps, { name: "legacy-1" });
      await seedEmptySnapshot(deps, old.host.id, { id: SNAP, hostname: "legacy-1", paths: ["/var/mail"] });
      const legacy = await connectAgent(served.server.wsUrl, old.token);
      try {
        legacy.hello({ protocol_version: 3, hostname: "legacy-1" });
        await legacy.waitFor((frame) => frame.type === "schedule.set");
        const url = `/hosts/${old.host.id}/restore/tree?session=${SESSION}&snapshot_id=${SNAP}&path=%2Fvar&after=x`;
        const res = await olga.request(url);
        const html = await res.text();
        expect(html).toContain('data-testid="tree-error"');
        expect(html).toContain("too old to list a folder in pages");
        const api = await olga.request(
          `/api/hosts/${old.host.id}/tree?snapshot_id=${SNAP}&path=%2Fvar&after=x`,
        );
        expect(api.status).toBe(400);
        expect(legacy.frames.some((frame) => frame.type === "tree.list")).toBe(false);
      } finally {
        await legacy.close();
      }
    });
  });
}
