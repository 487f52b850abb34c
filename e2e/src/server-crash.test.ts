/**
 * Issue 15 resilience: the server is killed (SIGKILL) in the middle of a backup and started again
 * on the same data dir and address, on the embedded database (PGlite, the default) and on
 * PostgreSQL. The agent reconnects with its backoff, its hello names the running job, and the job
 * ends in its true state (`succeeded`, restic finished) with its log continuing after the highest
 * stored line; reports produced while the server was down arrive from the agent's outbox.
 */
import { afterAll, describe, expect, it } from "vitest";
import { type AgentRun, startAgent } from "./support/agent-process.js";
import { bootstrapAdmin } from "./support/api.js";
import { enrolHost, waitHostReady } from "./support/enrol.js";
import { eventually } from "./support/eventually.js";
import { freePort } from "./support/ports.js";
import { createPostgresDatabase, type TestPostgres } from "./support/postgres.js";
import { type RestServer, startRestServer } from "./support/rest-server.js";
import { makeDataDir, type ServerProcess, startServerProcess } from "./support/server-process.js";
import { startSlowBackup } from "./support/slow-backup.js";
import { waitJob } from "./support/stack.js";
import { FETCHED_TOOLS, missingNote, toolsPresent } from "./support/tools.js";

const pgUrl = process.env.TEST_DATABASE_URL;
const engines: Array<"pglite" | "postgres"> = pgUrl ? ["pglite", "postgres"] : ["pglite"];
const missing = missingNote({ [FETCHED_TOOLS]: toolsPresent() });

describe.skipIf(missing !== "")(`server killed mid-backup and started again${missing}`, () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) {
      await step();
    }
  });

  for (const engine of engines) {
    it(`${engine}: the agent reconnects and the backup ends succeeded`, async () => {
      let pg: TestPostgres | undefined;
      if (engine === "postgres") {
        pg = await createPostgresDatabase(pgUrl ?? "");
        const created = pg;
        cleanup.push(() => created.drop());
      }
      const rest: RestServer = await startRestServer();
      cleanup.push(() => rest.stop());
      const port = await freePort();
      const env: Record<string, string> = {
        FLEETBACK_LISTEN: `127.0.0.1:${port}`,
        FLEETBACK_BASE_URL: `http://127.0.0.1:${port}`,
        FLEETBACK_DATA_DIR: await makeDataDir(),
        ...(pg ? { DATABASE_URL: pg.url } : {}),
      };
      let server: ServerProcess = await startServerProcess(env);
      cleanup.push(() => server.stop());
      const api = await bootstrapAdmin(server.url, server.output());
      const {
        hostId,
        dirs,
        env: agentEnv,
      } = await enrolHost({ api, rest, restic: "0.18", user: `crash-${engine}` });
      const agent: AgentRun = startAgent(["run"], dirs, agentEnv);
      cleanup.push(() => agent.stop());
      await waitHostReady(api, hostId);

      const { jobId } = await startSlowBackup(api, hostId, { mib: 3, upKbps: 256 });

      const killedAt = Date.now();
      await server.stop("SIGKILL");
      // Down for a few seconds: the agent's reports of that time wait in its outbox.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      server = await startServerProcess(env);
      const restartedMs = Date.now() - killedAt;
      await eventually(
        async () =>
          server.output().includes(`"host_id":"${hostId}"`) && server.output().includes("agent connected"),
        {
          what: "the agent to reconnect to the restarted server",
          timeoutMs: 90_000,
        },
      );
      console.info(
        `${engine}: server back ${restartedMs} ms after SIGKILL, agent reconnected ${Date.now() - killedAt} ms after it`,
      );

      const job = await waitJob<{ status: string; error: string | null }>(api, jobId, { timeoutMs: 180_000 });
      expect(job.status, job.error ?? "").toBe("succeeded");
      const { lines } = await api.get<{ lines: Array<{ seq: number }> }>(`/api/jobs/${jobId}/logs`);
      const seqs = lines.map((line) => line.seq);
      expect(seqs.length).toBeGreaterThan(0);
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
      const { host } = await api.get<{ host: { status: string } }>(`/api/hosts/${hostId}`);
      expect(host.status).toBe("online");
    });
  }
});
