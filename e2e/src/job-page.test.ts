/**
 * Issue 17.9 end to end with real restic 0.14/0.18, rest-server, server and agent: the job page
 * shows a backup's summary labelled and formatted (the raw JSON one click away), and a job against
 * a repository whose rest-server was stopped says restic is retrying, with the count, and is ended
 * by the agent's per-kind bound (FLEETBACK_JOB_TIMEOUT_CHECK) as `failed` with restic's last error.
 * 0.14 does not retry a refused connection: its job fails at once, as an unreachable repository.
 */
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
import { startHoldProxy } from "./support/hold-proxy.js";
import { startRestServer } from "./support/rest-server.js";
import { useStack, waitJob } from "./support/stack.js";
import { FETCHED_TOOLS, missingNote, type ResticVersion, toolsPresent } from "./support/tools.js";

interface JobJson {
  id: string;
  status: string;
  error: string | null;
}

const CHECK_TIMEOUT = "8s";

const missing = missingNote({ [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(`job page: summaries, retries and the per-kind timeout${missing}`, () => {
  // One server for the file: every test brings its own rest-server, which it stops.
  const stack = useStack();

  for (const restic of ["0.18", "0.14"] as const satisfies readonly ResticVersion[]) {
    it(`restic ${restic}: a labelled summary, then a stopped rest-server`, async () => {
      // A rest-server of this test's own, so that stopping it kills only this host's repository.
      const dead = await startRestServer();
      try {
        const user = `jp-${restic.replace(".", "")}`;
        const host = await enrolHost({ api: stack.api, rest: dead, restic, user });
        stack.agents.push(
          startAgent(["run"], host.dirs, { ...host.env, FLEETBACK_JOB_TIMEOUT_CHECK: CHECK_TIMEOUT }),
        );
        await waitHostReady(stack.api, host.hostId);

        const source = mkdtempSync(join(tmpdir(), "fleetback-jobpage-"));
        writeFileSync(join(source, "data.bin"), randomBytes(3 * 1024 * 1024));
        const group = await stack.api.send<{ source_group: { id: string } }>(
          "POST",
          `/api/hosts/${host.hostId}/source-groups`,
          { name: "jobpage", includes: [source], retention_policy: { last: 3 } },
        );
        expect(group.status, JSON.stringify(group.body)).toBe(201);
        const run = await stack.api.send<{ job_id: string }>(
          "POST",
          `/api/hosts/${host.hostId}/source-groups/${group.body.source_group.id}/run`,
        );
        expect(run.status).toBe(201);
        const backup = await waitJob<JobJson>(stack.api, run.body.job_id);
        expect(backup.status, backup.error ?? "").toBe("succeeded");
        const backupPage = await stack.api.text(`/jobs/${backup.id}`);
        // restic's summary keys are labelled and formatted, not `data_added 3145728`.
        expect(backupPage).toMatch(
          /<tr data-key="data_added"><th scope="row">Data added<\/th><td>[\d.]+ MiB<\/td><\/tr>/,
        );
        expect(backupPage).toMatch(
          /<tr data-key="files_new"><th scope="row">New files<\/th><td>1<\/td><\/tr>/,
        );
        expect(backupPage).toMatch(
          /<tr data-key="total_duration"><th scope="row">Duration<\/th><td>[\d.]+ s<\/td>/,
        );
        expect(backupPage).toMatch(
          /<summary>Raw JSON<\/summary><pre id="job-summary-json">\{\n[^<]*&quot;data_added&quot;: \d+/,
        );

        await dead.stop();
        const check = await stack.api.send<{ job_id: string }>("POST", `/api/hosts/${host.hostId}/jobs`, {
          kind: "check",
        });
        expect(check.status, JSON.stringify(check.body)).toBe(201);
        const failed = await waitJob<JobJson>(stack.api, check.body.job_id, { timeoutMs: 90_000 });
        expect(failed.status).toBe("failed");
        const page = await stack.api.text(`/jobs/${failed.id}`);
        expect(page).not.toContain("\x1b");
        expect(page).not.toContain("[2K");
        if (restic === "0.18") {
          // 0.18 retries for up to 15 minutes; the agent's bound ends it.
          expect(failed.error).toMatch(
            /^timed out after 8 s; last restic error: \w+\(<config\/>\) returned error, retrying after .*connection refused$/,
          );
          const count = Number(/data-testid="job-retries-count">(\d+)</.exec(page)?.[1] ?? "0");
          expect(count).toBeGreaterThanOrEqual(2);
          expect(page).toMatch(
            /<p id="job-retries" class="notice-warn" role="status" data-testid="job-retries" data-count="\d+">/,
          );
          expect(page).toContain("restic retried</span> requests to the repository");
          expect(page).toMatch(
            /data-testid="job-retries-last">\w+\(&lt;config\/&gt;\) returned error, retrying after/,
          );
          expect(page).toContain(
            "stopping the job: it ran longer than its maximum of 8 s (FLEETBACK_JOB_TIMEOUT_CHECK on this agent)",
          );
        } else {
          // 0.14 gives up at once on a refused connection: the agent reads it as unreachable.
          expect(failed.error).toBe("the repository did not answer (connection refused): it is unreachable");
          expect(page).toContain('data-testid="job-repository-unreachable"');
          expect(page).toMatch(/data-testid="job-retries" data-count="0" hidden>/);
        }
        expect(page).toContain(
          `data-testid="job-error">${(failed.error ?? "").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;")}</dd>`,
        );
      } finally {
        await dead.stop();
      }
    });
  }

  const browserMissing = missingNote({ Chromium: chromiumPath !== undefined });
  describe.skipIf(browserMissing !== "")(
    `in the browser: a backup whose upload is held, then a dead repository${browserMissing}`,
    () => {
      it("restic 0.18 reads everything long before its one pack is uploaded: the live page says finishing, not 100 % and time left –; then a stopped rest-server raises the live retry warning", async () => {
        const rest = await startRestServer();
        // The repository is reached through a relay that can hold the pack upload back.
        const relay = await startHoldProxy(rest.url);
        try {
          const host = await enrolHost({
            api: stack.api,
            rest: { ...rest, url: relay.url },
            restic: "0.18",
            user: "jp-held",
          });
          stack.agents.push(
            startAgent(["run"], host.dirs, { ...host.env, FLEETBACK_JOB_TIMEOUT_CHECK: CHECK_TIMEOUT }),
          );
          await waitHostReady(stack.api, host.hostId);
          const source = mkdtempSync(join(tmpdir(), "fleetback-jobpage-held-"));
          for (let i = 0; i < 6; i++) {
            writeFileSync(join(source, `part-${i}.bin`), randomBytes(1024 * 1024));
          }
          const group = await stack.api.send<{ source_group: { id: string } }>(
            "POST",
            `/api/hosts/${host.hostId}/source-groups`,
            { name: "held", includes: [source], retention_policy: { last: 3 } },
          );
          expect(group.status, JSON.stringify(group.body)).toBe(201);

          const browser = await launchBrowser();
          try {
            const page = await browser.newPage();
            await page.goto(`${stack.server.url}/login`);
            await page.getByLabel("Username").fill(ADMIN.username);
            await page.getByLabel("Password").fill(ADMIN.password);
            await page.getByRole("button", { name: "Sign in" }).click();
            await page.waitForURL(`${stack.server.url}/`);

            // 6 MiB of random data fits one 16 MiB pack, uploaded only at the end: held until the
            // live page has shown the backup finishing.
            relay.hold((method, path) => method === "POST" && path.includes("/data/"));
            const run = await stack.api.send<{ job_id: string }>(
              "POST",
              `/api/hosts/${host.hostId}/source-groups/${group.body.source_group.id}/run`,
            );
            expect(run.status).toBe(201);
            await page.goto(`${stack.server.url}/jobs/${run.body.job_id}`);
            const read = async (id: string) => ((await page.getByTestId(id).textContent()) ?? "").trim();
            const seen: Array<{ status: string; percent: string; eta: string }> = [];
            await eventually(
              async () => {
                // One read of all three: read one by one, a job.finished landing between them pairs
                // the old "running" with the new "100".
                const now = (await page.evaluate(`(() => {
              const text = (id) => (document.querySelector('[data-testid="' + id + '"]')?.textContent ?? "").trim();
              return { status: text("job-status"), percent: text("job-percent"), eta: text("job-eta") };
            })()`)) as { status: string; percent: string; eta: string };
                seen.push(now);
                if (now.status === "running" && now.percent === "finishing…") {
                  relay.release();
                }
                return now.status === "succeeded" ? now : undefined;
              },
              {
                what: "the held backup to finish and succeed on the live page",
                timeoutMs: 120_000,
                intervalMs: 100,
              },
            );
            const finishing = seen.filter((s) => s.status === "running" && s.percent === "finishing…");
            expect(finishing.length, JSON.stringify(seen.slice(-40))).toBeGreaterThan(0);
            expect(finishing[0]?.eta).toBe(
              "restic has read everything and is writing the last data to the repository",
            );
            expect(seen.some((s) => s.status === "running" && s.percent === "100")).toBe(false);
            expect(seen.at(-1)?.percent).toBe("100");
            // The summary arrived live, labelled, with the raw JSON behind its toggle.
            expect(await read("job-summary")).toContain("Data added");
            await page.getByText("Raw JSON").click();
            expect(await read("job-summary-raw")).toContain('"data_added"');

            // Then the repository goes away: the live page warns while restic retries, counting.
            await relay.close();
            await rest.stop();
            const check = await stack.api.send<{ job_id: string }>("POST", `/api/hosts/${host.hostId}/jobs`, {
              kind: "check",
            });
            expect(check.status).toBe(201);
            await page.goto(`${stack.server.url}/jobs/${check.body.job_id}`);
            const warned = await eventually(
              async () => {
                if (!(await page.getByTestId("job-retries").isVisible())) {
                  return undefined;
                }
                return { status: await read("job-status"), text: await read("job-retries") };
              },
              { what: "the retry warning on the live page", timeoutMs: 60_000, intervalMs: 100 },
            );
            expect(warned.text).toMatch(
              /restic (is retrying|retried) requests to the repository: \d+ so far\./,
            );
            await eventually(async () => ((await read("job-status")) === "failed" ? true : undefined), {
              what: "the check to be stopped at its bound",
              timeoutMs: 60_000,
            });
            expect(await read("job-error")).toMatch(
              /^timed out after 8 s; last restic error: .*connection refused$/,
            );
            expect(Number(await read("job-retries-count"))).toBeGreaterThanOrEqual(2);
            expect(await read("job-retries")).toContain("restic retried requests");
            expect(await read("job-log")).not.toContain("[2K");
          } finally {
            await browser.close();
          }
        } finally {
          await relay.close();
          await rest.stop();
        }
      });
    },
  );
});
