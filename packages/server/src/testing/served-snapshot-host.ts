/**
 * @module testing/served-snapshot-host
 * What the restore tree and download tests start from: a real server whose host has one reported
 * (empty) snapshot and is online through a raw test agent, which each test answers by hand.
 */
import type { ServerEnvelope } from "@fleetback/protocol";
import type { TestClient } from "./http.js";
import { seedEmptySnapshot, seedHost } from "./seed.js";
import { connectOnlineAgent, type TestAgent } from "./test-agent.js";
import type { TestDeps } from "./test-deps.js";
import { startTestServer, type TestServer } from "./test-server.js";

export interface ServedSnapshotHost {
  server: TestServer;
  hostId: string;
  agent: TestAgent;
  /**
   * Requests `url` as `client` and, when `answer` is given, waits for the agent to be asked for a
   * listing and hands it the frame to reply to.
   */
  askTree(
    client: TestClient,
    url: string,
    answer?: (frame: ServerEnvelope) => void,
  ): Promise<{ res: Response; frame: ServerEnvelope | undefined }>;
  /** Closes the agent and the server; the deps stay their owner's. */
  close(): Promise<void>;
}

/** Serves `deps` with host `host.name` online, holding snapshot `host.snapshotId` of `host.paths`. */
export async function serveSnapshotHost(
  deps: TestDeps,
  host: { name: string; snapshotId: string; paths: string[] },
): Promise<ServedSnapshotHost> {
  const server = await startTestServer({ deps });
  const seeded = await seedHost(deps, { name: host.name });
  const hostId = seeded.host.id;
  await seedEmptySnapshot(deps, hostId, { id: host.snapshotId, hostname: host.name, paths: host.paths });
  const agent = await connectOnlineAgent(server.wsUrl, seeded.token);
  return {
    server,
    hostId,
    agent,
    async askTree(client, url, answer) {
      const from = agent.frames.length;
      const pending = client.request(url);
      let frame: ServerEnvelope | undefined;
      if (answer) {
        frame = await agent.waitFor((f) => f.type === "tree.list", 5_000, from);
        answer(frame);
      }
      return { res: await pending, frame };
    },
    async close() {
      await agent.close();
      await server.close();
    },
  };
}
