/**
 * Issue 38.3 end to end with real processes (restic 0.18 and 0.14, rest-server, three real
 * agents): after each backup the agent sends what changed to the server's catalogue. A file
 * planted on two of three hosts is found on those two, in the right snapshots; a backup that
 * changed nothing folds into the version before it; an older version restores byte-identical
 * from the snapshot the search names; a name that exists nowhere answers empty; and a host whose
 * agent is stopped is still searched, from the server's side.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { startAgent } from "./support/agent-process.js";
import { ADMIN, type Api } from "./support/api.js";
import { chromiumPath, launchBrowser } from "./support/browser.js";
import { enrolHost, waitHostReady } from "./support/enrol.js";
import { eventually } from "./support/eventually.js";
import { overflowCulprits } from "./support/page-fit.js";
import { useStack, waitJob } from "./support/stack.js";
import { FETCHED_TOOLS, missingNote, toolsPresent } from "./support/tools.js";

interface Hit {
  host_id: string;
  path: string;
  size: number;
  snapshot_count: number;
  first_snapshot: { id: string };
  last_snapshot: { id: string };
  current: boolean;
}

interface Search {
  hits: Hit[];
  not_catalogued: { id: string }[];
}

async function search(api: Api, query: string): Promise<Search> {
  return api.get<Search>(`/api/search/files?${new URLSearchParams({ q: query }).toString()}`);
}

/** Runs the group's backup and waits until the catalogue holds its snapshot. */
async function backUp(api: Api, hostId: string, groupId: string, probe: string): Promise<string> {
  const list = async () =>
    (await api.get<{ snapshots: { id: string }[] }>(`/api/hosts/${hostId}/snapshots`)).snapshots.map(
      (s) => s.id,
    );
  const before = new Set(await list());
  const run = await api.send<{ job_id: string }>("POST", `/api/hosts/${hostId}/source-groups/${groupId}/run`);
  expect(run.status, JSON.stringify(run.body)).toBe(201);
  const job = await waitJob<{ status: string; error: string | null }>(api, run.body.job_id);
  expect(job.status, job.error ?? "").toBe("succeeded");
  const newest = await eventually(async () => (await list()).find((id) => !before.has(id)), {
    what: "the new snapshot in the list",
  });
  await eventually(
    async () =>
      (await search(api, probe)).hits.some(
        (hit) => hit.host_id === hostId && hit.last_snapshot.id === newest,
      ),
    { what: `the catalogue of ${hostId} at its snapshot ${newest.slice(0, 8)}` },
  );
  return newest;
}

const missing = missingNote({ Chromium: chromiumPath !== undefined, [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(`search across the fleet's backups${missing}`, () => {
  const stack = useStack();
  let browser: Browser | undefined;
  afterAll(async () => {
    await browser?.close();
  });

  /** The search page, the version history and "Restore this version" at one width. */
  async function inBrowser(width: number, hostId: string, path: string, older: string): Promise<void> {
    browser ??= await launchBrowser();
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    const fits = async () => {
      const scroll = await page.locator("html").evaluate((root) => root.scrollWidth);
      expect(
        scroll,
        `${width}px ${page.url()}: ${(await overflowCulprits(page)).join(", ")}`,
      ).toBeLessThanOrEqual(width);
    };
    try {
      await page.goto(`${stack.server.url}/login`);
      await page.getByLabel("Username").fill(ADMIN.username);
      await page.getByLabel("Password").fill(ADMIN.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL(`${stack.server.url}/`);
      await page.getByRole("link", { name: "Search", exact: true }).click();
      await page.getByTestId("search-q").fill("deploy_key.pem");
      await page.getByTestId("search-submit").click();
      await page.waitForURL(/\/search\?q=/);
      await expect.poll(() => page.getByTestId("search-hit").count()).toBe(3);
      await fits();
      const history = `/hosts/${hostId}/versions?${new URLSearchParams({ path }).toString()}`;
      await page.locator(`[data-testid="search-hit-path"][href="${history}"]`).first().click();
      await page.waitForURL(`${stack.server.url}${history}`);
      await expect.poll(() => page.getByTestId("version").count()).toBe(2);
      await fits();
      const restore = `/hosts/${hostId}/restore?${new URLSearchParams({ snapshot_id: older, path }).toString()}`;
      await page.locator(`[data-testid="version-restore"][href="${restore}"]`).click();
      await page.waitForURL(`${stack.server.url}${restore}`);
      await expect(
        page.locator('[data-testid="restore-selected"] input[name="paths"]').getAttribute("value"),
      ).resolves.toBe(path);
      await fits();
    } finally {
      await page.close();
    }
  }

  it("finds a file on the two hosts of three that hold it, folds unchanged versions and restores an older one", async () => {
    const hosts = [];
    for (const [name, restic] of [
      ["search-a", "0.18"],
      ["search-b", "0.14"],
      ["search-c", "0.18"],
    ] as const) {
      const enrolled = await enrolHost({ api: stack.api, rest: stack.rest, restic, user: name });
      const agent = startAgent(["run"], enrolled.dirs, enrolled.env);
      stack.agents.push(agent);
      await waitHostReady(stack.api, enrolled.hostId);
      const renamed = await stack.api.send("PATCH", `/api/hosts/${enrolled.hostId}`, { name });
      expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
      const source = mkdtempSync(join(tmpdir(), `fleetback-${name}-`));
      mkdirSync(join(source, "ssh"));
      writeFileSync(join(source, "probe.txt"), name);
      const group = await stack.api.send<{ source_group: { id: string } }>(
        "POST",
        `/api/hosts/${enrolled.hostId}/source-groups`,
        { name: "conf", includes: [source] },
      );
      expect(group.status, JSON.stringify(group.body)).toBe(201);
      hosts.push({ ...enrolled, agent, source, groupId: group.body.source_group.id });
    }
    const [a, b, c] = hosts as [(typeof hosts)[0], (typeof hosts)[0], (typeof hosts)[0]];
    const planted = (host: typeof a) => join(host.source, "ssh", "deploy_key.pem");
    const first = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7) % 256));
    writeFileSync(planted(a), first);
    writeFileSync(planted(b), "b's key\n");

    const a1 = await backUp(stack.api, a.hostId, a.groupId, "probe.txt");
    const a2 = await backUp(stack.api, a.hostId, a.groupId, "probe.txt");
    writeFileSync(planted(a), "rotated\n");
    const a3 = await backUp(stack.api, a.hostId, a.groupId, "probe.txt");
    const b1 = await backUp(stack.api, b.hostId, b.groupId, "probe.txt");
    await backUp(stack.api, c.hostId, c.groupId, "probe.txt");

    const found = await search(stack.api, "deploy_key.pem");
    const seen = found.hits.map((hit) => [
      hit.host_id,
      hit.size,
      hit.snapshot_count,
      hit.first_snapshot.id,
      hit.last_snapshot.id,
      hit.current,
    ]);
    expect(seen).toEqual(
      expect.arrayContaining([
        [a.hostId, 8, 1, a3, a3, true],
        [a.hostId, 3000, 2, a1, a2, false],
        [b.hostId, 8, 1, b1, b1, true],
      ]),
    );
    expect(seen).toHaveLength(3);
    expect(found.hits.every((hit) => hit.host_id !== c.hostId)).toBe(true);
    expect((await search(stack.api, `*/ssh/*.pem`)).hits).toHaveLength(3);
    expect((await search(stack.api, "no-such-file-anywhere")).hits).toEqual([]);

    // The older version restores from the snapshot the search named, byte-identical.
    const target = mkdtempSync(join(tmpdir(), "fleetback-search-restore-"));
    const restore = await stack.api.send<{ job_id: string }>("POST", `/api/hosts/${a.hostId}/restore`, {
      snapshot_id: a2,
      paths: [planted(a)],
      in_place: false,
      target_dir: target,
    });
    expect(restore.status, JSON.stringify(restore.body)).toBe(201);
    const restored = await waitJob<{ status: string; error: string | null }>(stack.api, restore.body.job_id);
    expect(restored.status, restored.error ?? "").toBe("succeeded");
    expect(readFileSync(join(target, planted(a))).equals(first)).toBe(true);

    for (const width of [1280, 390]) {
      await inBrowser(width, a.hostId, planted(a), a2);
    }

    // A stopped agent's host is searched all the same: the catalogue is the server's.
    await b.agent.stop();
    await eventually(
      async () =>
        !(await stack.api.get<{ host: { connected: boolean } }>(`/api/hosts/${b.hostId}`)).host.connected,
      { what: "b offline" },
    );
    const offline = await search(stack.api, "deploy_key.pem");
    expect(offline.hits.filter((hit) => hit.host_id === b.hostId)).toHaveLength(1);
    expect(offline.not_catalogued.map((host) => host.id)).not.toContain(b.hostId);
  });
});
