/**
 * Issue 17.11 end to end with real processes, on restic 0.18 and 0.14: an admin forgets one
 * snapshot from the snapshots tab's confirmation page (typed short id, CSRF, plain form post) and
 * lands on the forget job; the real agent runs `restic forget <id>`, and afterwards the snapshot is
 * gone from restic's own `restic snapshots` and from the page while the others stay. An operator
 * is refused with 403 and nothing is sent, and the audit log names the snapshot. In Chromium at
 * 390 px (restic 0.18 run): the tab's title is the plain page title (issue 17.2: it once showed the
 * compare form's HTML), before and after comparing two snapshots, and nothing scrolls sideways.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startAgent } from "./support/agent-process.js";
import { ADMIN } from "./support/api.js";
import { chromiumPath, launchBrowser } from "./support/browser.js";
import { enrolHost, waitHostReady } from "./support/enrol.js";
import { eventually } from "./support/eventually.js";
import { useStack, waitJob } from "./support/stack.js";
import { FETCHED_TOOLS, missingNote, RESTIC, type ResticVersion, toolsPresent } from "./support/tools.js";

interface JobJson {
  id: string;
  kind: string;
  status: string;
  error: string | null;
  summary: Record<string, unknown> | null;
}
interface SnapshotJson {
  id: string;
  short_id: string;
}

/** A browser-like session: cookie and Origin, as the pages are used. */
async function signIn(baseUrl: string, username: string, password: string) {
  const res = await fetch(`${baseUrl}/api/auth/login`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Origin: baseUrl },
    body: JSON.stringify({ username, password }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  return {
    get: (path: string) => fetch(`${baseUrl}${path}`, { headers: { Cookie: cookie }, redirect: "manual" }),
    post: (path: string, fields: Record<string, string>) =>
      fetch(`${baseUrl}${path}`, {
        method: "POST",
        headers: { Cookie: cookie, Origin: baseUrl, "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(fields).toString(),
        redirect: "manual",
      }),
  };
}

const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";

const missing = missingNote({ Chromium: chromiumPath !== undefined, [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(`forget one snapshot through a real agent${missing}`, () => {
  const stack = useStack();

  for (const restic of ["0.18", "0.14"] as const satisfies readonly ResticVersion[]) {
    it(`restic ${restic}: only the chosen snapshot goes, from restic and from the page; operators get 403; audited`, async () => {
      const user = `fs-${restic.replace(".", "")}`;
      const host = await enrolHost({ api: stack.api, rest: stack.rest, restic, user });
      stack.agents.push(startAgent(["run"], host.dirs, host.env));
      await waitHostReady(stack.api, host.hostId);
      const dir = mkdtempSync(join(tmpdir(), "fleetback-forget-one-"));
      writeFileSync(join(dir, "data.bin"), randomBytes(32 * 1024));
      const created = await stack.api.send<{ source_group: { id: string } }>(
        "POST",
        `/api/hosts/${host.hostId}/source-groups`,
        { name: "docs", includes: [dir] },
      );
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      for (let i = 0; i < 3; i++) {
        writeFileSync(join(dir, `more-${i}.bin`), randomBytes(8 * 1024));
        const run = await stack.api.send<{ job_id: string }>(
          "POST",
          `/api/hosts/${host.hostId}/source-groups/${created.body.source_group.id}/run`,
        );
        expect(run.status, JSON.stringify(run.body)).toBe(201);
        expect((await waitJob<JobJson>(stack.api, run.body.job_id)).status).toBe("succeeded");
      }
      const listed = await eventually(
        async () => {
          const { snapshots } = await stack.api.get<{ snapshots: SnapshotJson[] }>(
            `/api/hosts/${host.hostId}/snapshots`,
          );
          return snapshots.length === 3 ? snapshots : undefined;
        },
        { what: "three snapshots reported" },
      );
      // The middle one: neither the newest nor the oldest, so no policy could pick it by accident.
      const target = listed[1] as SnapshotJson;
      const others = [listed[0], listed[2]].map((s) => s?.id);

      const resticSnapshots = () => {
        const url = new URL(stack.rest.url);
        const out = execFileSync(RESTIC[restic], ["snapshots", "--json", "--no-cache"], {
          encoding: "utf8",
          env: {
            PATH: process.env.PATH ?? "",
            RESTIC_REPOSITORY: `rest:${url.protocol}//${user}:${encodeURIComponent(host.loginPassword)}@${url.host}/${user}/`,
            RESTIC_PASSWORD: host.password,
          },
        });
        return (JSON.parse(out) as Array<{ id: string }>).map((s) => s.id);
      };
      expect(resticSnapshots()).toContain(target.id);

      // An operator may restore but not forget: 403 on the page, the form and the API.
      const operatorPassword = "operator passphrase 0123";
      const made = await stack.api.send("POST", "/api/users", {
        username: `op-${user}`,
        password: operatorPassword,
        role: "operator",
      });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      const operator = await signIn(stack.server.url, `op-${user}`, operatorPassword);
      const forgetPath = `/hosts/${host.hostId}/snapshots/${target.id}/forget`;
      expect((await operator.get(forgetPath)).status).toBe(403);
      expect((await operator.post(forgetPath, { confirm: target.short_id })).status).toBe(403);

      // The admin: the table links to the confirmation page, which asks for the short id.
      const admin = await signIn(stack.server.url, ADMIN.username, ADMIN.password);
      const tab = await (await admin.get(`/hosts/${host.hostId}/snapshots`)).text();
      expect(tab).toContain(`href="${forgetPath}"`);
      const confirmPage = await admin.get(forgetPath);
      expect(confirmPage.status).toBe(200);
      const confirmHtml = await confirmPage.text();
      expect(confirmHtml).toContain(target.id);
      const posted = await admin.post(forgetPath, { _csrf: csrfOf(confirmHtml), confirm: target.short_id });
      expect(posted.status, await posted.clone().text()).toBe(303);
      const jobPath = posted.headers.get("location") ?? "";
      expect(jobPath).toMatch(/^\/jobs\/[0-9A-Z]{26}$/);
      expect((await admin.get(jobPath)).status).toBe(200);
      const job = await waitJob<JobJson>(stack.api, jobPath.split("/").pop() ?? "");
      expect(job.kind).toBe("forget");
      expect(job.status, job.error ?? "").toBe("succeeded");

      // restic itself no longer has it; the two others are still there.
      const remaining = resticSnapshots();
      expect(remaining).not.toContain(target.id);
      for (const id of others) {
        expect(remaining).toContain(id);
      }
      // The page, from the snapshot list the agent reported after the forget.
      const page = await eventually(
        async () => {
          const html = await (await admin.get(`/hosts/${host.hostId}/snapshots`)).text();
          return html.includes(`data-snapshot-id="${target.id}"`) ? undefined : html;
        },
        { what: "the forgotten snapshot gone from the snapshots tab" },
      );
      for (const id of others) {
        expect(page).toContain(`data-snapshot-id="${id}"`);
      }

      if (restic === "0.18") {
        const { host: described } = await stack.api.get<{ host: { name: string } }>(
          `/api/hosts/${host.hostId}`,
        );
        const browser = await launchBrowser();
        try {
          const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
          const page = await context.newPage();
          await page.goto(`${stack.server.url}/login`);
          await page.getByLabel("Username").fill(ADMIN.username);
          await page.getByLabel("Password").fill(ADMIN.password);
          await page.getByRole("button", { name: "Sign in" }).click();
          await page.waitForURL((url) => !url.pathname.startsWith("/login"));
          const tabTitle = `${described.name}: snapshots · Fleetback`;
          await page.goto(`${stack.server.url}/hosts/${host.hostId}/snapshots`);
          expect(await page.title()).toBe(tabTitle);
          expect(await page.locator("html").evaluate((root) => root.scrollWidth)).toBeLessThanOrEqual(390);
          // Compare the two that are left (the preset pair): the job page, then back to the tab.
          await page.getByTestId("diff-submit").click();
          await page.waitForURL(/\/jobs\/[0-9A-Z]{26}$/);
          expect(await page.title()).not.toMatch(/[<>]|_csrf/);
          await page.goBack();
          await page.waitForURL(/\/snapshots$/);
          expect(await page.title()).toBe(tabTitle);
        } finally {
          await browser.close();
        }
      }

      const { entries } = await stack.api.get<{
        entries: Array<{ action: string; target_id: string | null; username: string | null }>;
      }>("/api/audit?action=snapshot.forget");
      const entry = entries.find((e) => e.target_id === target.id);
      expect(entry).toMatchObject({ action: "snapshot.forget", username: ADMIN.username });
    });
  }
});
