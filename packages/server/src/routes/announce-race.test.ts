import { encodePublicKey, generateSigningKeyPair } from "@fleetback/crypto";
import { pendingHosts } from "@fleetback/db";
import { testEngines } from "@fleetback/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { announceHost, MAX_PENDING_PER_NETWORK, MAX_PENDING_ROWS } from "../enrolment/announce.js";
import { createTestDeps, type TestDeps } from "../testing/test-deps.js";
import { startTestServer, type TestServer } from "../testing/test-server.js";

const HOST = { os: "linux", arch: "amd64", agent_version: "0.1.0", tool_version: "0.18.0" };
// The test's requests come from 127.0.0.1; trusting it lets each name its own source address.
const config = { trustedProxies: ["127.0.0.1/32"] };

type Announce = { url: string; client: string; body: string };

function prepare(url: string, client: string, hostname: string): Announce {
  const body = JSON.stringify({
    ...HOST,
    hostname,
    public_key: encodePublicKey(generateSigningKeyPair().publicKey),
  });
  return { url, client, body };
}

/** Every request is built first, then all are sent at once, so they meet in the server. */
function fireAll(announces: Announce[]): Promise<number[]> {
  return Promise.all(
    announces.map(({ url, client, body }) =>
      fetch(`${url}/api/agents/announce`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Forwarded-For": client },
        body,
      }).then(async (res) => {
        await res.body?.cancel();
        return res.status;
      }),
    ),
  );
}

for (const engine of testEngines()) {
  // Two replicas over one database: each has its own connection handling and request loop.
  describe(`concurrent announces against two replicas (${engine})`, () => {
    let first: TestServer;
    let secondDeps: TestDeps;
    let second: TestServer;

    beforeAll(async () => {
      first = await startTestServer({ engine, config });
      secondDeps = await createTestDeps({ db: first.deps.db, config });
      second = await startTestServer({ deps: secondDeps });
    });
    afterAll(async () => {
      await second?.close();
      await secondDeps?.close();
      await first?.close();
    });

    const rows = () => first.deps.db.select({ sourceIp: pendingHosts.sourceIp }).from(pendingHosts);

    it("admit exactly the per-network cap when announces interleave in one process", async () => {
      // Called directly, all forty start before any of their queries runs: on PGlite too (where
      // one request's queries otherwise run without yielding to the next request) they interleave.
      const info = { os: "linux", arch: "amd64", agentVersion: "0.1.0", toolVersion: "0.18.0" };
      const outcomes = await Promise.allSettled(
        Array.from({ length: 40 }, (_, i) =>
          announceHost(
            first.deps,
            {
              ...info,
              hostname: `direct-${i}`,
              publicKey: encodePublicKey(generateSigningKeyPair().publicKey),
            },
            `198.51.100.${i + 1}`,
          ),
        ),
      );
      expect(outcomes.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(
        MAX_PENDING_PER_NETWORK,
      );
      expect(await rows()).toHaveLength(MAX_PENDING_PER_NETWORK);
    });

    it("keep exactly the per-network and the total caps across two replicas", async () => {
      const before = (await rows()).length;
      const fromOneNetwork = await fireAll(
        Array.from({ length: 40 }, (_, i) =>
          prepare(i % 2 === 0 ? first.url : second.url, `203.0.113.${i + 1}`, `one-${i}`),
        ),
      );
      expect(fromOneNetwork.filter((status) => status === 201)).toHaveLength(MAX_PENDING_PER_NETWORK);
      expect(fromOneNetwork.filter((status) => status === 429)).toHaveLength(40 - MAX_PENDING_PER_NETWORK);
      expect(await rows()).toHaveLength(before + MAX_PENDING_PER_NETWORK);

      // 200 more, one per network, so only the total cap can stop them.
      const spread = await fireAll(
        Array.from({ length: 200 }, (_, i) =>
          prepare(i % 2 === 0 ? first.url : second.url, `10.${i}.0.1`, `many-${i}`),
        ),
      );
      expect(spread.filter((status) => status === 201)).toHaveLength(
        MAX_PENDING_ROWS - before - MAX_PENDING_PER_NETWORK,
      );
      expect(await rows()).toHaveLength(MAX_PENDING_ROWS);
    });
  });
}
