/**
 * Issue 18.4 end to end: a source group's upload cap reaches the real restic's argv and slows a
 * real backup to a rest-server. The lower bound is what the cap allows (bytes / KiB/s), not a
 * timing budget: an uncapped backup of the same size on this loopback finishes in a second or two.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startAgent } from "./support/agent-process.js";
import { enrolHost, waitHostReady } from "./support/enrol.js";
import { eventually } from "./support/eventually.js";
import { useStack, waitJob } from "./support/stack.js";
import { FETCHED_TOOLS, missingNote, toolsPresent } from "./support/tools.js";

interface JobJson {
  id: string;
  status: string;
  started_at: string | null;
  finished_at: string | null;
  params: Record<string, unknown>;
}

const MIB = 2 ** 20;
const CAP_KIBPS = 128;

/** Random (incompressible, not deduplicable) data, so every byte crosses the capped link. */
function randomTree(bytes: number): string {
  const dir = mkdtempSync(join(tmpdir(), "fleetback-caps-"));
  for (let i = 0; i < 4; i++) {
    writeFileSync(join(dir, `part-${i}.bin`), randomBytes(bytes / 4));
  }
  return dir;
}

/** The argv of a running `restic … backup` of `source` (other test files run beside this one). */
function resticBackupArgv(source: string): string[] | undefined {
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0");
      if (argv[0]?.endsWith("/restic") && argv.includes("backup") && argv.includes(source)) {
        return argv;
      }
    } catch {
      // gone between listing and reading
    }
  }
  return undefined;
}

const seconds = (job: JobJson) =>
  (new Date(job.finished_at ?? 0).getTime() - new Date(job.started_at ?? 0).getTime()) / 1000;

const missing = missingNote({ [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(`bandwidth caps of a source group${missing}`, () => {
  const stack = useStack();

  it("a group's upload cap is in restic's argv and holds a real backup to the cap's pace", async () => {
    const { hostId, dirs, env } = await enrolHost({
      api: stack.api,
      rest: stack.rest,
      restic: "0.18",
      user: "caps-18",
    });
    stack.agents.push(startAgent(["run"], dirs, env));
    await waitHostReady(stack.api, hostId);

    const group = async (name: string, source: string, cap: number | null) => {
      const res = await stack.api.send<{ source_group: { id: string } }>(
        "POST",
        `/api/hosts/${hostId}/source-groups`,
        { name, includes: [source], bandwidth_up_kbps: cap },
      );
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.source_group.id;
    };
    const run = async (groupId: string) => {
      const res = await stack.api.send<{ job_id: string }>(
        "POST",
        `/api/hosts/${hostId}/source-groups/${groupId}/run`,
      );
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.job_id;
    };

    const bytes = 2 * MIB;
    const free = await waitJob<JobJson>(stack.api, await run(await group("free", randomTree(bytes), null)));
    expect(free.status).toBe("succeeded");

    const cappedSource = randomTree(bytes);
    const cappedJobId = await run(await group("capped", cappedSource, CAP_KIBPS));
    const argv = await eventually(async () => resticBackupArgv(cappedSource), {
      what: "the capped restic backup to be running",
      timeoutMs: 30_000,
    });
    const flag = argv.indexOf("--limit-upload");
    expect(flag, argv.join(" ")).toBeGreaterThan(0);
    expect(argv[flag + 1]).toBe(String(CAP_KIBPS));
    const capped = await waitJob<JobJson>(stack.api, cappedJobId);
    expect(capped.status).toBe("succeeded");
    expect(capped.params).toMatchObject({ bandwidth_up_kbps: CAP_KIBPS });

    // 2 MiB at 128 KiB/s is 16 s of upload; half of that leaves room for restic's token bucket.
    const floor = bytes / 1024 / CAP_KIBPS / 2;
    console.log(`uncapped ${seconds(free).toFixed(1)} s, capped ${seconds(capped).toFixed(1)} s`);
    expect(seconds(capped)).toBeGreaterThan(floor);
    expect(seconds(capped)).toBeGreaterThan(seconds(free) + 4);
  });
});
