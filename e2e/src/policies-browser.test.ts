/**
 * Fleet policies (issue 37) with three real agents (restic 0.18, rest-server) and headless
 * Chromium: hosts enrolled with a labelled token get a policy's group and schedule with no
 * per-host step and back up on it; an edit previewed and applied at 1280 px reaches all three
 * agents (each acknowledges the new schedule set) while one host's own setting survives it; a
 * rollback at 390 px brings the first version back on all three; each host's sources page says
 * where its group comes from, and no page scrolls sideways.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAgent } from "./support/agent-process.js";
import { ADMIN } from "./support/api.js";
import { chromiumPath, launchBrowser } from "./support/browser.js";
import { enrolHost, waitHostReady } from "./support/enrol.js";
import { eventually } from "./support/eventually.js";
import { overflowCulprits } from "./support/page-fit.js";
import { useStack } from "./support/stack.js";
import { FETCHED_TOOLS, missingNote, RESTIC, toolsPresent } from "./support/tools.js";

const WAIT = { timeoutMs: 120_000, intervalMs: 250 };
const EVERY_20_S = "*/20 * * * * *";

interface Schedules {
  schedules: Array<{ cron: string }>;
  schedule_version: number;
  schedule_acked_version: number;
}

interface Group {
  id: string;
  name: string;
  excludes: string[];
}

const missing = missingNote({ Chromium: chromiumPath !== undefined, [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(`fleet policies with real agents${missing}`, () => {
  const stack = useStack();
  let browser: Browser;
  let source: string;
  /** Where the policy's pre-backup hook writes the id of each job it ran for. */
  let hookLog: string;
  const hostIds: string[] = [];
  /** Each host's repository as the restic CLI opens it, by host id. */
  const cliEnv = new Map<string, NodeJS.ProcessEnv>();
  let policyUrl = "";

  beforeAll(async () => {
    source = mkdtempSync(join(tmpdir(), "fleetback-policy-"));
    writeFileSync(join(source, "a.txt"), "policy data\n");
    hookLog = join(mkdtempSync(join(tmpdir(), "fleetback-policy-hook-")), "ran");
    writeFileSync(join(source, "b.tmp"), "scratch\n");
    for (const i of [1, 2, 3]) {
      const host = await enrolHost({
        api: stack.api,
        rest: stack.rest,
        restic: "0.18",
        user: `policy-${i}`,
        labels: { env: "prod", fleet: "policies-e2e" },
      });
      stack.agents.push(startAgent(["run"], host.dirs, host.env));
      hostIds.push(host.hostId);
      const url = new URL(stack.rest.url);
      cliEnv.set(host.hostId, {
        PATH: process.env.PATH ?? "",
        RESTIC_REPOSITORY: `rest:${url.protocol}//policy-${i}:${encodeURIComponent(host.loginPassword)}@${url.host}/policy-${i}/`,
        RESTIC_PASSWORD: host.password,
      });
    }
    await Promise.all(hostIds.map((id) => waitHostReady(stack.api, id)));
    browser = await launchBrowser();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    rmSync(source, { recursive: true, force: true });
    rmSync(join(hookLog, ".."), { recursive: true, force: true });
  });

  async function signedIn(width: number): Promise<Page> {
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    page.on("dialog", (dialog) => void dialog.accept());
    await page.goto(`${stack.server.url}/login`);
    await page.getByLabel("Username").fill(ADMIN.username);
    await page.getByLabel("Password").fill(ADMIN.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${stack.server.url}/`);
    return page;
  }

  async function fits(page: Page, width: number): Promise<void> {
    const scroll = await page.locator("html").evaluate((root) => root.scrollWidth);
    expect(scroll, (await overflowCulprits(page)).join(", ")).toBeLessThanOrEqual(width);
  }

  /** The hook is given in the first version only: the later documents leave it out, and keep it. */
  function spec(cron: string, excludes: string[], preHook?: string) {
    const hook = preHook === undefined ? {} : { pre_hook: preHook };
    return JSON.stringify(
      {
        groups: [{ name: "data", includes: [source], excludes, retention_policy: { last: 5 }, ...hook }],
        schedules: [{ name: "often", cron, groups: ["data"] }],
      },
      null,
      2,
    );
  }

  /** Every host runs `cron` and its agent has acknowledged that schedule set. */
  async function allRun(cron: string): Promise<void> {
    for (const id of hostIds) {
      await eventually(
        async () => {
          const set = await stack.api.get<Schedules>(`/api/hosts/${id}/schedules`);
          return set.schedules.map((s) => s.cron).join() === cron &&
            set.schedule_acked_version === set.schedule_version
            ? set
            : undefined;
        },
        { what: `host ${id} to run ${cron}, acknowledged`, ...WAIT },
      );
    }
  }

  async function groupOf(hostId: string): Promise<Group> {
    const { source_groups } = await stack.api.get<{ source_groups: Group[] }>(
      `/api/hosts/${hostId}/source-groups`,
    );
    const [group] = source_groups;
    expect(source_groups).toHaveLength(1);
    return group as Group;
  }

  it("previews and creates a policy at 1280 px: every labelled host gets its group and schedule and backs up on it", async () => {
    const page = await signedIn(1280);
    await page.goto(`${stack.server.url}/policies`);
    await page.getByText("New policy").click();
    await page.getByTestId("policy-name").fill("prod-data");
    await page.getByTestId("policy-selector").fill("fleet=policies-e2e,env=prod");
    await page
      .getByTestId("policy-spec")
      .fill(spec(EVERY_20_S, [], `echo "$FLEETBACK_JOB_ID" >> ${hookLog}`));
    await page.getByTestId("policy-preview-button").click();
    await expect
      .poll(() => page.getByTestId("preview-counts").textContent())
      .toBe("It covers 3 hosts; 3 change.");
    expect(await page.getByTestId("preview-host").count()).toBe(3);
    await fits(page, 1280);
    await page.getByTestId("policy-apply").click();
    await page.waitForURL(/\/policies\/[0-9A-Z]{26}$/);
    policyUrl = page.url();
    expect(await page.getByTestId("policy-summary").textContent()).toMatch(
      /Version 1 · priority 100 · covers 3 hosts/,
    );
    // The hook is said to be there, never shown (not even in the document to edit).
    expect(await page.getByTestId("policy-hooks-data").textContent()).toBe("before");
    expect(await page.content()).not.toContain(hookLog);
    await allRun(EVERY_20_S);
    // A backup from the policy's schedule (a system job, not a run-now) succeeds on each host.
    for (const id of hostIds) {
      await eventually(
        async () => {
          const { jobs } = await stack.api.get<{
            jobs: Array<{ id: string; kind: string; status: string; scheduled_id: string | null }>;
          }>(`/api/jobs?host_id=${id}&kind=backup`);
          return jobs.find((job) => job.status === "succeeded" && job.scheduled_id !== null);
        },
        { what: `a scheduled backup on host ${id}`, ...WAIT },
      ).then((job) => {
        // The policy's hook ran on the agent, before that very backup.
        expect(readFileSync(hookLog, "utf8").split("\n")).toContain(job.id);
      });
      // What the repository holds, as the agent's restic lists it: a snapshot under the group's tag.
      await eventually(
        async () => {
          const { snapshots } = await stack.api.get<{
            snapshots: Array<{ tags: string[] | null; paths: string[] }>;
          }>(`/api/hosts/${id}/snapshots`);
          return snapshots.some((snap) => snap.tags?.includes("data") && snap.paths.includes(source))
            ? snapshots
            : undefined;
        },
        { what: `a snapshot tagged data on host ${id}`, ...WAIT },
      );
      // And the repository itself, read with the restic CLI rather than our own records.
      const listed = JSON.parse(
        execFileSync(RESTIC["0.18"], ["--no-cache", "snapshots", "--json", "--no-lock", "--tag", "data"], {
          encoding: "utf8",
          env: cliEnv.get(id),
        }),
      ) as Array<{ paths: string[] }>;
      expect(listed.some((snap) => snap.paths.includes(source))).toBe(true);
    }
    await page.close();
  });

  it("an edit previewed at 1280 px reaches all three agents, and a host's own setting survives it", async () => {
    const own = await groupOf(hostIds[0] as string);
    const overridden = await stack.api.send("PUT", `/api/hosts/${hostIds[0]}/source-groups/${own.id}`, {
      excludes: ["*.own"],
    });
    expect(overridden.status, JSON.stringify(overridden.body)).toBe(200);

    const page = await signedIn(1280);
    await page.goto(policyUrl);
    await page.getByText("Edit the document").click();
    await page.getByTestId("policy-spec").fill(spec("0 3 * * *", ["*.tmp"]));
    await page.getByTestId("policy-preview-button").click();
    await expect
      .poll(() => page.getByTestId("preview-counts").textContent())
      .toBe("It covers 3 hosts; 3 change.");
    const rows = await page.getByTestId("preview-host").allTextContents();
    expect(rows.filter((row) => row.includes("~ data (excludes)"))).toHaveLength(2);
    expect(rows.every((row) => row.includes("~ prod-data/often"))).toBe(true);
    await fits(page, 1280);
    await page.getByTestId("policy-apply").click();
    await page.waitForURL(policyUrl);
    await allRun("0 3 * * *");
    expect((await groupOf(hostIds[0] as string)).excludes).toEqual(["*.own"]);
    for (const id of hostIds.slice(1)) {
      expect((await groupOf(id)).excludes).toEqual(["*.tmp"]);
    }
    await page.close();
  });

  it.each([1280, 390])("each host's sources page says where its group comes from at %i px", async (width) => {
    const page = await signedIn(width);
    await page.goto(`${stack.server.url}/hosts/${hostIds[0]}/sources`);
    expect(await page.getByTestId("group-from-data").textContent()).toMatch(
      /from policy prod-data, version 2; this host's own excludes/,
    );
    expect(await page.getByTestId("schedule-from").textContent()).toBe("often of policy prod-data");
    await fits(page, width);
    await page.goto(`${stack.server.url}/hosts/${hostIds[1]}/sources`);
    expect(await page.getByTestId("group-from-data").textContent()).toBe("from policy prod-data, version 2");
    await fits(page, width);
    await page.close();
  });

  it("a rollback at 390 px brings version 1 back on all three agents", async () => {
    const page = await signedIn(390);
    await page.goto(policyUrl);
    await fits(page, 390);
    await page.getByTestId("rollback-1").click();
    await expect
      .poll(() => page.getByTestId("policy-summary").textContent(), { timeout: 60_000 })
      .toMatch(/^Version 3 /);
    await allRun(EVERY_20_S);
    for (const id of hostIds.slice(1)) {
      expect((await groupOf(id)).excludes).toEqual([]);
    }
    expect((await groupOf(hostIds[0] as string)).excludes).toEqual(["*.own"]);
    await fits(page, 390);
    await page.close();
  });
});
