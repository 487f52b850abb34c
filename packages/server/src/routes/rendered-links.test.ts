/**
 * Every link the server renders answers: a bounded crawl, as a signed-in admin, from the fleet
 * page over a fleet with something on every page (an online host whose test agent answers tree
 * listings, a host refused as too old, jobs, snapshots, source groups, schedules, alerts,
 * notification deliveries, users, API tokens, more audit entries, alerts and jobs than one page
 * holds), plus the help URL of the agent channel's ErrProtocolTooOld. Each URL found must answer
 * 200; all failures are listed in one assertion.
 *
 * Followed (testing/page-links.ts finds them): `href` and `src` of any element (a, link, script,
 * img), `hx-get`, GET forms submitted with their default values the way a browser would, the URL
 * of an installer command shown on a page, and the redirects these answer with (only those in
 * DOCUMENTED_REDIRECTS are accepted).
 * Not followed, see `skipReason`: other origins (external documentation), snapshot downloads, `data:` and `#`
 * fragments (nothing to fetch on this server), `hx-post` and POST forms (they change state: sign
 * out, delete, resolve, run), and `data-stream` (a WebSocket, covered by the job-stream tests).
 */
import { alerts, auditLog, JOB_KINDS, JOB_STATUSES, jobLogs, notificationLog } from "@fleetback/db";
import type { ServerEnvelope, TreeEntry } from "@fleetback/protocol";
import { ulid } from "ulidx";
import { expect, it } from "vitest";
import { ALERTS_PAGE } from "../alerts/alert-query.js";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import { eventually } from "../testing/eventually.js";
import type { TestClient } from "../testing/http.js";
import { type Found, linksOf } from "../testing/page-links.js";
import { bindCredentials, seedHost, seedJob } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { signInOn, TEST_PASSWORD } from "../testing/signed-in-app.js";
import { connectAgent, type TestAgent } from "../testing/test-agent.js";
import { HOST_JOBS_PAGE } from "./job-pages.js";

/** The crawl's bound; reaching it fails the test, so that no link is silently left unvisited. */
const MAX_URLS = 300;
const SNAPSHOTS = [
  "b6926cf4b56e08d52e23b47ed13dc7c0f3ade7f8eabe18b3dd6ca809e77d963a",
  "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9",
];

/** Redirects a rendered link may answer with (pattern of the path it is asked for → why). */
const DOCUMENTED_REDIRECTS: ReadonlyArray<[RegExp, string]> = [];

/** A setup call's JSON, or an error naming what the server refused. */
async function created<T>(res: Promise<Response>): Promise<T> {
  const answer = await res;
  const text = await answer.text();
  if (answer.status !== 200 && answer.status !== 201) {
    throw new Error(`setup call answered ${answer.status}: ${text}`);
  }
  return JSON.parse(text) as T;
}

runServerSuite("rendered links", (server) => {
  /** The online host's agent answers tree.list: `/` holds srv/, srv/ two pages and a sub folder. */
  function answerTrees(agent: TestAgent): void {
    const at = "2026-11-20T09:00:00Z";
    const entry = (path: string, type: TreeEntry["type"]): TreeEntry => ({
      name: path.slice(path.lastIndexOf("/") + 1),
      path,
      type,
      size: type === "file" ? 2048 : 0,
      mtime: at,
    });
    agent.ws.on("message", (data: Buffer) => {
      const frame = JSON.parse(data.toString("utf8")) as ServerEnvelope;
      if (frame.type !== "tree.list") {
        return;
      }
      const { path, after } = frame.payload as { path: string; after?: string };
      if (path === "/") {
        agent.send("tree.list.result", { entries: [entry("/srv", "dir")] }, frame.id);
      } else if (path === "/srv" && after === undefined) {
        agent.send(
          "tree.list.result",
          { entries: [entry("/srv/sub", "dir"), entry("/srv/a.txt", "file")], next_after: "a.txt" },
          frame.id,
        );
      } else if (path === "/srv") {
        agent.send("tree.list.result", { entries: [entry("/srv/b.txt", "file")] }, frame.id);
      } else {
        agent.send("tree.list.result", { entries: [entry(`${path}/c <d>.txt`, "file")] }, frame.id);
      }
    });
  }

  async function seedFleet(
    admin: TestClient,
  ): Promise<{ hostId: string; refusedHostId: string; wireHelpUrl: string }> {
    const { deps } = server;
    for (const [username, role] of [
      ["ops", "operator"],
      ["looker", "viewer"],
    ]) {
      await created(admin.json("POST", "/api/users", { username, password: TEST_PASSWORD, role }));
    }
    await created(admin.json("POST", "/api/api-tokens", { name: "ci" }));
    const channel = await created<{ notification_channel: { id: string } }>(
      admin.json("POST", "/api/notification-channels", {
        name: "ops hook",
        kind: "webhook",
        config: { url: "https://hooks.example.org/fleetback", secret: "0123456789abcdef" },
      }),
    );

    // An online host, with credentials, sources, schedules, snapshots, jobs of every kind and alerts.
    const online = await seedHost(deps, { name: "web-1" });
    const hostId = online.host.id;
    await bindCredentials(deps, hostId, {
      repo: { url: "rest:https://backup.example:8000/web-1", username: "web-1", password: "repo-secret" },
    });
    const agent = await connectAgent(server.wsUrl, online.token);
    answerTrees(agent);
    agent.hello({ hostname: "web-1" });
    await agent.waitFor((frame) => frame.type === "schedule.set");
    const group = await created<{ source_group: { id: string } }>(
      admin.json("POST", `/api/hosts/${hostId}/source-groups`, { name: "srv", includes: ["/srv"] }),
    );
    await created(
      admin.json("POST", `/api/hosts/${hostId}/schedules`, {
        cron: "0 2 * * *",
        source_group_ids: [group.source_group.id],
      }),
    );
    await replaceSnapshots(deps.db, hostId, {
      refreshed_at: "2026-11-21T11:00:00Z",
      snapshots: SNAPSHOTS.map((id, index) => ({
        id,
        short_id: id.slice(0, 8),
        time: `2026-11-2${index}T10:00:00Z`,
        hostname: "web-1",
        paths: ["/srv"],
        tags: ["daily"],
        size_bytes: 4096,
        file_count: 3,
      })),
    });
    // One more job than a page of the host's jobs holds, so that the pager is rendered.
    const jobs = [];
    for (let n = 0; n <= HOST_JOBS_PAGE; n++) {
      jobs.push(
        await seedJob(
          deps,
          { hostId, kind: JOB_KINDS[n % JOB_KINDS.length] ?? "backup", actorKind: "system" },
          {
            status: JOB_STATUSES[n % JOB_STATUSES.length] ?? "succeeded",
            summary: { snapshot_id: SNAPSHOTS[0] },
          },
        ),
      );
    }
    const [logged] = jobs;
    if (!logged) {
      throw new Error("no job seeded");
    }
    // A log longer than the page's tail, so that the page links to the full log.
    await deps.db.insert(jobLogs).values(
      Array.from({ length: 210 }, (_, seq) => ({
        jobId: logged.id,
        seq: seq + 1,
        stream: "stdout" as const,
        line: `line ${seq}`,
        ts: deps.clock.now(),
      })),
    );
    const now = deps.clock.now();
    // One open alert, and one more resolved alert than a page of alerts holds.
    const open = { id: ulid(), hostId, kind: "backup_failed", dedupKey: group.source_group.id };
    await deps.db.insert(alerts).values({ ...open, message: "backup of srv failed", lastJobId: logged.id });
    await deps.db.insert(alerts).values(
      Array.from({ length: ALERTS_PAGE + 1 }, (_, n) => ({
        id: ulid(now.getTime() - n * 1000),
        hostId,
        kind: "check_failed",
        message: `check ${n} failed`,
        lastJobId: n % 2 === 0 ? logged.id : null,
        createdAt: new Date(now.getTime() - n * 1000),
        resolvedAt: now,
      })),
    );
    await deps.db.insert(notificationLog).values({
      id: ulid(),
      channelId: channel.notification_channel.id,
      alertId: open.id,
      event: "alert.opened",
      status: "failed",
      statusCode: 502,
      error: "bad gateway",
    });
    // More audit entries than a page (100, routes/audit-pages.ts) holds.
    await deps.db.insert(auditLog).values(
      Array.from({ length: 101 }, (_, n) => ({
        id: ulid(now.getTime() - 60_000 - n * 1000),
        at: new Date(now.getTime() - 60_000 - n * 1000),
        actorKind: "system" as const,
        action: "test.entry",
        targetKind: "host",
        targetId: hostId,
      })),
    );

    // An offline host whose last hello was refused as too old: its page links to the help.
    const refused = await seedHost(deps, { name: "old-1", agentVersion: "0.0.1" });
    const old = await connectAgent(server.wsUrl, refused.token);
    old.hello({ hostname: "old-1", protocol_version: 0 });
    const error = await old.frame(0);
    expect((await old.closed).code).toBe(4001);
    const wireHelpUrl = (error.payload as { help_url?: string }).help_url;
    if (!wireHelpUrl) {
      throw new Error(`ErrProtocolTooOld carried no help_url: ${JSON.stringify(error)}`);
    }
    // The refusal is recorded after the close, with no event to await: the page is polled until it
    // shows it, under a hang guard rather than a count of tries that a busy machine can run out of.
    await eventually(
      async () =>
        (await (await admin.request(`/hosts/${refused.host.id}`)).text()).includes(
          'data-testid="protocol-help"',
        ),
      (shown) => shown,
      { what: "the refused hello recorded on the host page", timeoutMs: 20_000 },
    );
    return { hostId, refusedHostId: refused.host.id, wireHelpUrl };
  }

  /**
   * The host list's state, sort and order links multiply (5 states × 3 sorts × 2 orders, each a
   * page and a partial) over one template and one query: each combination of parameter names is
   * fetched once, so the crawl's bound is spent on distinct pages.
   */
  function crawlKey(url: URL): string {
    if (url.pathname !== "/hosts" && url.pathname !== "/partials/fleet") {
      return url.pathname + url.search;
    }
    return `${url.pathname}?${[...new Set(url.searchParams.keys())].sort().join("&")}`;
  }

  it("every link rendered on the pages and in wire errors answers 200", { timeout: 180_000 }, async () => {
    const { deps } = server;
    const { admin } = await signInOn(deps);
    const { hostId, refusedHostId, wireHelpUrl } = await seedFleet(admin);

    // Links are made against the configured base URL (the agent's help URL is absolute).
    const base = new URL(`${deps.config.baseUrl}/`);
    function skipReason(url: URL): string | undefined {
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        return "not fetched over HTTP (data: icon)";
      }
      if (url.origin !== base.origin) {
        return "another site (external documentation)";
      }
      // A download is a file streamed from the agent's restic dump, not a page; the test agent
      // does not run restic (restore-download.test.ts and the e2e restore tests fetch them).
      if (/^\/hosts\/[^/]+\/snapshots\/[^/]+\/download$/.test(url.pathname)) {
        return "a download streamed from the agent (restore-download tests)";
      }
      return undefined;
    }

    const seeds: Found[] = [
      { url: new URL("/", base).href, from: "start: the dashboard", htmx: false },
      { url: wireHelpUrl, from: "help_url of ErrProtocolTooOld on the agent channel", htmx: false },
      // A page of one snapshot, so that the snapshot pager is rendered with little data.
      {
        url: new URL(`/hosts/${hostId}/snapshots?limit=1`, base).href,
        from: "start: snapshots one per page",
        htmx: false,
      },
    ];
    const queue = [...seeds];
    const seen = new Map<string, Found>();
    const skipped = new Map<string, string>();
    const failures: string[] = [];
    const redirects: string[] = [];
    const badTitles: string[] = [];

    while (queue.length > 0 && seen.size < MAX_URLS) {
      const next = queue.shift() as Found;
      const url = new URL(next.url);
      url.hash = "";
      const reason = skipReason(url);
      if (reason) {
        skipped.set(url.href, reason);
        continue;
      }
      const key = crawlKey(url);
      if (seen.has(key)) {
        continue;
      }
      seen.set(key, next);
      let target = url.pathname + url.search;
      let res = await admin.request(target, { headers: next.htmx ? { "HX-Request": "true" } : {} });
      for (let hops = 0; res.status >= 300 && res.status < 400 && hops < 3; hops++) {
        const location = new URL(res.headers.get("location") ?? "", new URL(target, base));
        const documented = DOCUMENTED_REDIRECTS.find(([pattern]) => pattern.test(url.pathname));
        if (!documented || location.origin !== base.origin) {
          failures.push(`${key} → ${res.status} to ${location.href} (found: ${next.from})`);
        } else {
          redirects.push(`${key} → ${location.pathname}${location.search}: ${documented[1]}`);
        }
        target = location.pathname + location.search;
        res = await admin.request(target);
      }
      const body = await res.text();
      if (res.status !== 200) {
        // A 500 says no more than its request id: name the error the server logged under it.
        const requestId = res.headers.get("x-request-id");
        const logged = requestId
          ? deps.logLines.find((line) => line.includes(requestId) && line.includes('"err"'))
          : undefined;
        const cause = logged
          ? ` [logged: ${(JSON.parse(logged) as { err?: { message?: string } }).err?.message}]`
          : "";
        failures.push(`${key} → ${res.status} ${body.slice(0, 160)}${cause} (found: ${next.from})`);
        continue;
      }
      if ((res.headers.get("content-type") ?? "").startsWith("text/html")) {
        queue.push(...linksOf(body, new URL(target, base).href));
        // A title is plain text: markup in it is a template block left open (it was, once).
        const title = /<title>([\s\S]*?)<\/title>/.exec(body)?.[1];
        if (title?.includes("<")) {
          badTitles.push(`${key}: ${title.slice(0, 80)}`);
        }
      }
    }

    const visited = [...seen.keys()];
    // The crawl reached what it had to: the upgrade help, from the host page and the wire error.
    const help = new URL(wireHelpUrl);
    expect(seen.get(help.pathname)).toBeDefined();
    const hostPage = await (await admin.request(`/hosts/${refusedHostId}`)).text();
    expect(
      linksOf(hostPage, new URL(`/hosts/${refusedHostId}`, base).href).map((link) => link.url),
    ).toContain(help.href);
    // The data made the pagers, the tree's pages and nested folders render, and they were followed.
    for (const expected of [
      "/alerts?state=resolved&before=",
      "/audit?before=",
      `/hosts/${hostId}/jobs?before=`,
      `/hosts/${hostId}/snapshots?before=`,
      "&after=a.txt",
      "&nested=1",
    ]) {
      expect([expected, visited.some((key) => key.includes(expected))]).toEqual([expected, true]);
    }
    expect(
      failures,
      `broken links (${failures.length} of ${visited.length} visited):\n${failures.join("\n")}`,
    ).toEqual([]);
    expect(badTitles).toEqual([]);
    const unvisited = new Set(
      queue
        .map((found) => new URL(found.url))
        .filter((url) => !skipReason(url))
        .map((url) => url.pathname + url.search)
        .filter((key) => !seen.has(key)),
    );
    expect(
      unvisited.size,
      `the crawl stopped at ${MAX_URLS} URLs with ${unvisited.size} still to visit`,
    ).toBe(0);
    // For the report: how far it went, and what it left alone.
    console.info(
      `rendered links: ${visited.length} URLs answered 200; redirects: ${redirects.join("; ") || "none"}; skipped ${skipped.size}: ${[...new Set(skipped.values())].join("; ")}`,
    );
  });
});
