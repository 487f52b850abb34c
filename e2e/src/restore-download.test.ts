/**
 * Issue 17's downloads end to end with real processes (restic 0.18 and 0.14, rest-server, the
 * built server with FLEETBACK_DOWNLOAD_MAX_BYTES=1M): a tree is backed up through the API, then
 * an operator downloads one file (byte-identical to the source, several chunks long), a folder as
 * tar and as zip (valid archives listing exactly the backed-up files), and a file over the cap
 * (the response breaks off without its end, so no client takes it for whole); a viewer gets 403;
 * `..`, a path outside the snapshot and another host's snapshot id are refused; each download
 * that reached the agent has its audit entry with the outcome.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentRun, startAgent } from "./support/agent-process.js";
import { type Api, bootstrapAdmin } from "./support/api.js";
import { enrolHost, waitHostReady } from "./support/enrol.js";
import { eventually } from "./support/eventually.js";
import { type RestServer, startRestServer } from "./support/rest-server.js";
import { type ServerProcess, startServerProcess } from "./support/server-process.js";
import { FETCHED_TOOLS, missingNote, toolsPresent } from "./support/tools.js";

const WAIT = { timeoutMs: 90_000, intervalMs: 250 };
const CAP = 1024 * 1024;
const VIEWER = { username: "vicky", password: "viewer passphrase 123" };

interface JobJson {
  id: string;
  status: string;
  error: string | null;
}

interface AuditJson {
  action: string;
  target_id: string | null;
  details: Record<string, unknown>;
}

function buildTree(): { root: string; file: Buffer } {
  const root = mkdtempSync(join(tmpdir(), "fleetback-download-src-"));
  mkdirSync(join(root, "docs", "nested"), { recursive: true });
  writeFileSync(join(root, "docs", "plain.txt"), "plain text\n");
  writeFileSync(join(root, "docs", "with space ünï.txt"), "spaces and unicode\n");
  writeFileSync(join(root, "docs", "nested", "deep.bin"), Buffer.alloc(5_000, 9));
  const file = randomBytes(700_000);
  writeFileSync(join(root, "photo.raw"), file);
  writeFileSync(join(root, "too-big.iso"), randomBytes(CAP * 3));
  return { root, file };
}

const missing = missingNote({ [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(`downloads from a snapshot${missing}`, () => {
  let rest: RestServer;
  let server: ServerProcess;
  let api: Api;
  let viewerCookie = "";
  const agents: AgentRun[] = [];

  beforeAll(async () => {
    rest = await startRestServer();
    server = await startServerProcess({ FLEETBACK_DOWNLOAD_MAX_BYTES: "1M" });
    api = await bootstrapAdmin(server.url, server.output());
    const created = await api.send("POST", "/api/users", { ...VIEWER, role: "viewer" });
    expect(created.status).toBe(201);
    const login = await fetch(`${server.url}/api/auth/login`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: server.url },
      body: JSON.stringify(VIEWER),
    });
    expect(login.status).toBe(200);
    viewerCookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  }, 180_000);
  afterAll(async () => {
    await Promise.all(agents.map((agent) => agent.stop()));
    await server?.stop();
    await rest?.stop();
  });

  async function waitJob(jobId: string): Promise<JobJson> {
    return eventually(
      async () => {
        const { job } = await api.get<{ job: JobJson }>(`/api/jobs/${jobId}`);
        return ["succeeded", "failed", "cancelled", "lost"].includes(job.status) ? job : undefined;
      },
      { what: `job ${jobId} to finish`, ...WAIT },
    );
  }

  async function backUp(hostId: string, source: string): Promise<string> {
    const created = await api.send<{ source_group: { id: string } }>(
      "POST",
      `/api/hosts/${hostId}/source-groups`,
      {
        name: "tree",
        includes: [source],
      },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const run = await api.send<{ job_id: string }>(
      "POST",
      `/api/hosts/${hostId}/source-groups/${created.body.source_group.id}/run`,
    );
    const backup = await waitJob(run.body.job_id);
    expect(backup.status, backup.error ?? "").toBe("succeeded");
    return eventually(
      async () =>
        (await api.get<{ snapshots: Array<{ id: string }> }>(`/api/hosts/${hostId}/snapshots`)).snapshots[0]
          ?.id,
      { what: "the snapshot in the cache", ...WAIT },
    );
  }

  const download = (hostId: string, snapshotId: string, path: string, archive?: string, cookie?: string) => {
    const query = new URLSearchParams({ path });
    if (archive) {
      query.set("archive", archive);
    }
    return fetch(`${server.url}/hosts/${hostId}/snapshots/${snapshotId}/download?${query.toString()}`, {
      headers: cookie ? { Cookie: cookie } : { Authorization: `Bearer ${api.token}` },
      redirect: "manual",
    });
  };

  async function audits(hostId: string): Promise<AuditJson[]> {
    const { entries } = await api.get<{ entries: AuditJson[] }>(`/api/audit?action=host.download`);
    return entries.filter((entry) => entry.target_id === hostId);
  }

  const others: Array<{ hostId: string; snapshotId: string }> = [];

  for (const version of ["0.18", "0.14"] as const) {
    it(`restic ${version}: a file byte for byte, a folder as tar and zip, the cap, the refusals and the audit`, async () => {
      const { hostId, dirs, env } = await enrolHost({
        api,
        rest,
        restic: version,
        user: `dl-${version.replace(".", "")}`,
      });
      agents.push(startAgent(["run"], dirs, env));
      await waitHostReady(api, hostId);
      const { root, file } = buildTree();
      const snapshotId = await backUp(hostId, root);
      const scratch = mkdtempSync(join(tmpdir(), "fleetback-download-out-"));

      // One file: identical bytes, named after it.
      const fileRes = await download(hostId, snapshotId, join(root, "photo.raw"));
      expect(
        fileRes.status,
        await fileRes
          .clone()
          .text()
          .catch(() => ""),
      ).toBe(200);
      expect(fileRes.headers.get("content-disposition")).toContain('filename="photo.raw"');
      expect(Buffer.from(await fileRes.arrayBuffer()).equals(file)).toBe(true);

      // A folder: tar (restic's default) and zip, each listing exactly what was backed up.
      const expected = ["nested/deep.bin", "plain.txt", "with space ünï.txt"];
      const tarRes = await download(hostId, snapshotId, join(root, "docs"), "tar");
      expect(tarRes.status).toBe(200);
      expect(tarRes.headers.get("content-type")).toBe("application/x-tar");
      writeFileSync(join(scratch, "docs.tar"), Buffer.from(await tarRes.arrayBuffer()));
      const tarFiles = execFileSync("tar", ["-tf", join(scratch, "docs.tar")], { encoding: "utf8" })
        .split("\n")
        .filter((line) => line !== "" && !line.endsWith("/"))
        .map((line) => line.replace(/^.*?docs\//, ""))
        .sort();
      expect(tarFiles).toEqual(expected);
      const zipRes = await download(hostId, snapshotId, join(root, "docs"), "zip");
      expect(zipRes.status).toBe(200);
      expect(zipRes.headers.get("content-disposition")).toContain('filename="docs.zip"');
      writeFileSync(join(scratch, "docs.zip"), Buffer.from(await zipRes.arrayBuffer()));
      execFileSync("unzip", ["-tq", join(scratch, "docs.zip")]);
      const zipFiles = execFileSync("unzip", ["-Z1", join(scratch, "docs.zip")], { encoding: "utf8" })
        .split("\n")
        .filter((line) => line !== "" && !line.endsWith("/"))
        .map((line) => line.replace(/^.*?docs\//, ""))
        .sort();
      expect(zipFiles).toEqual(expected);
      execFileSync("unzip", ["-q", join(scratch, "docs.zip"), "-d", join(scratch, "unzipped")]);

      // Over the cap (3 MiB against 1 MiB): the body breaks off; nothing pretends it is whole.
      const bigRes = await download(hostId, snapshotId, join(root, "too-big.iso"));
      if (bigRes.status === 200) {
        await expect(bigRes.arrayBuffer()).rejects.toThrow();
      } else {
        expect(bigRes.status).toBe(413);
      }

      // A viewer, `..`, a path outside the snapshot and another host's snapshot: refused.
      expect(
        (await download(hostId, snapshotId, join(root, "photo.raw"), undefined, viewerCookie)).status,
      ).toBe(403);
      expect((await download(hostId, snapshotId, `${root}/docs/../photo.raw`)).status).toBe(400);
      expect((await download(hostId, snapshotId, "/etc/passwd")).status).toBe(400);
      for (const other of others) {
        expect((await download(hostId, other.snapshotId, "/")).status).toBe(404);
      }
      others.push({ hostId, snapshotId });

      // Audited with the outcome, the byte count and the user.
      const entries = await eventually(
        async () => {
          const found = await audits(hostId);
          return found.length >= 4 ? found : undefined;
        },
        { what: "the download audit entries", ...WAIT },
      );
      const byPath = (path: string, archive: string | null) =>
        entries.find((entry) => entry.details.path === path && entry.details.archive === archive)?.details;
      expect(byPath(join(root, "photo.raw"), null)).toMatchObject({
        outcome: "succeeded",
        bytes: file.length,
      });
      expect(byPath(join(root, "docs"), "zip")).toMatchObject({ outcome: "succeeded" });
      expect(byPath(join(root, "too-big.iso"), null)).toMatchObject({ outcome: "too_large" });
    }, 300_000);
  }
});
