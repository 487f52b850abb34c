/**
 * Issue 18.3 end to end: a host with a mirror on a second real rest-server. Every good backup is
 * followed by a copy job; the mirror then holds a copy of every snapshot of the repository,
 * matched by the `original` id restic records on a copy (restic 0.18 and 0.14), and the
 * repository's forget is followed by the same forget on the mirror. A mirror whose server is down
 * opens `mirror_failed`; once it is back, the next copy catches up and resolves it.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startAgent } from "./support/agent-process.js";
import { enrolHost, waitHostReady } from "./support/enrol.js";
import { eventually } from "./support/eventually.js";
import { type RestServer, startRestServer } from "./support/rest-server.js";
import { useStack, waitJob } from "./support/stack.js";
import { FETCHED_TOOLS, missingNote, RESTIC, type ResticVersion, toolsPresent } from "./support/tools.js";

interface MirrorJson {
  configured: boolean;
  last_copy: { job_id: string; status: string; error: string | null } | null;
  snapshot_count: number | null;
  snapshots_behind: number | null;
}
interface ResticSnapshot {
  id: string;
  original?: string;
}

const MIRROR_PASSWORD = "mirror-Canary-5531-pw";

/**
 * How long the agents wait for a mirror (or repository) that does not answer: the down mirror's
 * copy fails after it, so it is short, yet ample for a healthy rest-server on a busy machine.
 */
const UNREACHABLE_AFTER = "10s";

/**
 * restic's own listing of a repository, read with its credentials in the environment; `login` is
 * the rest-server password of `user` when it is not the repository password.
 */
function listSnapshots(
  restic: ResticVersion,
  url: string,
  user: string,
  password: string,
  login = password,
): ResticSnapshot[] {
  const withUser = url.replace("rest:http://", `rest:http://${user}:${encodeURIComponent(login)}@`);
  const out = execFileSync(RESTIC[restic], ["--no-cache", "--json", "snapshots"], {
    env: { PATH: process.env.PATH, RESTIC_REPOSITORY: withUser, RESTIC_PASSWORD: password },
  });
  return JSON.parse(out.toString()) as ResticSnapshot[];
}

const missing = missingNote({ [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(`mirror: a second copy of every snapshot${missing}`, () => {
  const stack = useStack();
  let mirror: RestServer;
  afterAll(async () => {
    await mirror?.stop();
  });

  const mirrorOf = async (hostId: string) =>
    (await stack.api.get<{ host: { mirror: MirrorJson } }>(`/api/hosts/${hostId}`)).host.mirror;

  async function setUp(restic: ResticVersion, user: string) {
    mirror ??= await startRestServer();
    const host = await enrolHost({ api: stack.api, rest: stack.rest, restic, user });
    stack.agents.push(
      startAgent(["run"], host.dirs, {
        ...host.env,
        FLEETBACK_REPOSITORY_UNREACHABLE_AFTER: UNREACHABLE_AFTER,
      }),
    );
    await waitHostReady(stack.api, host.hostId);
    await mirror.runHtpasswdSnippet(
      `printf '%s' '${MIRROR_PASSWORD}' | htpasswd -i -B /var/lib/rest-server/.htpasswd ${user}`,
    );
    const mirrorUrl = `rest:${mirror.url}/${user}/`;
    const bound = await stack.api.send("PUT", `/api/hosts/${host.hostId}/mirror-credentials`, {
      url: mirrorUrl,
      username: user,
      password: MIRROR_PASSWORD,
    });
    expect(bound.status, JSON.stringify(bound.body)).toBe(200);
    const source = mkdtempSync(join(tmpdir(), "fleetback-mirror-"));
    writeFileSync(join(source, "notes.txt"), `notes of ${user}\n`);
    const group = await stack.api.send<{ source_group: { id: string } }>(
      "POST",
      `/api/hosts/${host.hostId}/source-groups`,
      { name: "docs", includes: [source] },
    );
    expect(group.status, JSON.stringify(group.body)).toBe(201);
    const backup = async () => {
      writeFileSync(join(source, `change-${Date.now()}.txt`), "more\n");
      const res = await stack.api.send<{ job_id: string }>(
        "POST",
        `/api/hosts/${host.hostId}/source-groups/${group.body.source_group.id}/run`,
      );
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect((await waitJob<{ status: string }>(stack.api, res.body.job_id)).status).toBe("succeeded");
    };
    /** Waits for the copy after the last backup to end, and answers the mirror's state then. */
    const copied = (status: string, after?: string) =>
      eventually(
        async () => {
          const state = await mirrorOf(host.hostId);
          return state.last_copy?.status === status && state.last_copy.job_id !== after ? state : undefined;
        },
        { what: `a copy to the mirror to end ${status}`, timeoutMs: 120_000 },
      );
    return { host, mirrorUrl, backup, copied, groupId: group.body.source_group.id };
  }
  // One host per restic version for the whole file: the outage test goes on with the 0.18 host
  // (its enrolment, repository and mirror already made) instead of setting up another.
  const hosts = new Map<ResticVersion, ReturnType<typeof setUp>>();
  const hostOf = (restic: ResticVersion) => {
    const made = hosts.get(restic) ?? setUp(restic, `mirror-${restic.replace(".", "")}`);
    hosts.set(restic, made);
    return made;
  };

  for (const restic of ["0.18", "0.14"] as const) {
    it(`restic ${restic}: after each backup the mirror holds a copy of every snapshot, matched by original id`, async () => {
      const user = `mirror-${restic.replace(".", "")}`;
      const { host, mirrorUrl, backup, copied, groupId } = await hostOf(restic);
      await backup();
      const first = await copied("succeeded");
      await backup();
      const second = await copied("succeeded", first.last_copy?.job_id);
      expect(second).toMatchObject({ snapshot_count: 2, snapshots_behind: 0 });

      const sources = listSnapshots(
        restic,
        `rest:${stack.rest.url}/${user}/`,
        user,
        host.password,
        host.loginPassword,
      );
      const copies = listSnapshots(restic, mirrorUrl, user, MIRROR_PASSWORD);
      expect(sources).toHaveLength(2);
      expect(copies).toHaveLength(2);
      expect(copies.map((copy) => copy.original).sort()).toEqual(sources.map((source) => source.id).sort());

      // The repository's forget keeps the newest only; the mirror follows with the same policy.
      const policy = await stack.api.send("PUT", `/api/hosts/${host.hostId}/source-groups/${groupId}`, {
        retention_policy: { last: 1 },
      });
      expect(policy.status, JSON.stringify(policy.body)).toBe(200);
      const forget = await stack.api.send<{ job_id: string }>("POST", `/api/hosts/${host.hostId}/jobs`, {
        kind: "forget",
      });
      expect(forget.status, JSON.stringify(forget.body)).toBe(201);
      expect((await waitJob<{ status: string }>(stack.api, forget.body.job_id)).status).toBe("succeeded");
      const onMirror = await eventually(
        async () => {
          const { jobs } = await stack.api.get<{
            jobs: Array<{ id: string; params: Record<string, unknown> }>;
          }>(`/api/jobs?host_id=${host.hostId}&kind=forget`);
          return jobs.find((job) => job.params.on_mirror === true);
        },
        { what: "the mirror's forget" },
      );
      expect((await waitJob<{ status: string }>(stack.api, onMirror.id)).status).toBe("succeeded");
      const [kept] = listSnapshots(
        restic,
        `rest:${stack.rest.url}/${user}/`,
        user,
        host.password,
        host.loginPassword,
      );
      const mirrored = listSnapshots(restic, mirrorUrl, user, MIRROR_PASSWORD);
      expect(mirrored.map((copy) => copy.original)).toEqual([kept?.id]);
    });
  }

  it("a mirror whose server is down opens mirror_failed; back up, the next copy catches up and resolves it", async () => {
    const { host, backup, copied } = await hostOf("0.18");
    const before = (await mirrorOf(host.hostId)).last_copy?.job_id;
    await backup();
    const good = await copied("succeeded", before);
    await mirror.stop();
    await backup();
    const failed = await copied("failed", good.last_copy?.job_id);
    expect(failed.snapshots_behind).toBe(1);
    const alertsOf = async (state: string) =>
      (
        await stack.api.get<{ alerts: Array<{ kind: string; message: string }> }>(
          `/api/alerts?state=${state}&host_id=${host.hostId}`,
        )
      ).alerts.filter((alert) => alert.kind === "mirror_failed");
    const [open] = await alertsOf("open");
    expect(open?.message).toMatch(/^copy to the mirror failed: the mirror did not answer within 10 s/);
    expect(open?.message).not.toContain(MIRROR_PASSWORD);

    mirror = await startRestServer(mirror);
    const copy = await stack.api.send<{ job_id: string }>("POST", `/api/hosts/${host.hostId}/mirror/copy`);
    expect(copy.status, JSON.stringify(copy.body)).toBe(201);
    expect((await waitJob<{ status: string }>(stack.api, copy.body.job_id)).status).toBe("succeeded");
    expect(await mirrorOf(host.hostId)).toMatchObject({
      snapshot_count: (good.snapshot_count ?? 0) + 1,
      snapshots_behind: 0,
    });
    expect(await alertsOf("open")).toEqual([]);
  });
});
