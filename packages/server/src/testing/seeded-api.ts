/**
 * @module testing/seeded-api
 * The app the openapi-routes*.test.ts files call, seeded the same way for each: an admin signed
 * in through the bootstrap call, a host online through an agent that answers tree.list (protocol
 * 8, with snapshots, a drill with a mismatch, a copy to its mirror and repository stats) and a
 * host offline. Each file starts its own, so each can run alone; every call goes through the
 * file's answer checker, which is what its coverage test reads. `useSeededApi` is that per file:
 * its checker, its call, and the app started before its tests and closed after.
 */
import { repoStats } from "@fleetback/db";
import { decodeServerMessage } from "@fleetback/protocol";
import type { Hono } from "hono";
import { afterAll, beforeAll, expect } from "vitest";
import { createApp } from "../app.js";
import { writeAudit } from "../audit/audit.js";
import type { AppEnv } from "../auth/actor.js";
import { HOSTNAME_CHANGED_ACTION } from "../hosts/host-audit.js";
import type { AgentConnection } from "../hub/local-hub.js";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import { type AnswerChecker, createAnswerChecker } from "./documented-answers.js";
import { createTestClient, type TestClient } from "./http.js";
import { type HttpReceiver, startHttpReceiver } from "./http-receiver.js";
import { seedHost, seedJob } from "./seed.js";
import { createTestDeps, type TestDeps } from "./test-deps.js";

export const PASSWORD = "correct horse battery";
export const DAY = 86_400_000;
export const snapshotId = (n: number) => n.toString(16).padStart(64, "0");

export type DocumentedCall = (
  client: TestClient,
  method: string,
  path: string,
  body?: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: the body has passed the document's schema; tests read it field by field
) => Promise<{ status: number; body: any }>;

/** One call, checked against the document; answers the parsed body. */
export function documentedCall(checker: AnswerChecker): DocumentedCall {
  return async (client, method, path, body) => {
    const res = await client.json(method, path, body);
    return { status: res.status, body: await checker.check(method, path, res) };
  };
}

export interface SeededApi {
  deps: TestDeps;
  app: Hono<AppEnv>;
  admin: TestClient;
  receiver: HttpReceiver;
  /** Host online through a connection that answers tree.list; protocol 8 (mirror, forget one). */
  hostId: string;
  /** Host with no agent connected. */
  offlineHostId: string;
  close(): Promise<void>;
}

/** An agent that answers each tree.list with two entries, as the wizard's tests' agents do. */
function treeAnsweringAgent(deps: TestDeps, id: string): AgentConnection {
  return {
    hostId: id,
    send(frame) {
      const decoded = decodeServerMessage(frame);
      if (decoded.ok && decoded.message.type === "tree.list") {
        const requestId = decoded.message.id;
        setImmediate(() =>
          deps.hub.deliverReply(id, {
            id: requestId,
            type: "tree.list.result",
            payload: {
              entries: [
                { name: "etc", path: "/srv/etc", type: "dir", size: 0, mtime: "2026-11-20T01:00:00Z" },
                { name: "a.txt", path: "/srv/a.txt", type: "file", size: 12, mtime: "2026-11-20T01:00:00Z" },
              ],
            },
          }),
        );
      }
    },
    close() {},
  };
}

/**
 * Starts the calling file's seeded app before its tests and closes it after; `use` is handed the
 * app once started, for the file to keep the parts it calls.
 */
export function useSeededApi(use: (api: SeededApi) => void): {
  checker: AnswerChecker;
  call: DocumentedCall;
} {
  const checker = createAnswerChecker();
  const call = documentedCall(checker);
  let seeded: SeededApi | undefined;
  beforeAll(async () => {
    seeded = await startSeededApi(call);
    use(seeded);
  });
  afterAll(async () => {
    await seeded?.close();
  });
  return { checker, call };
}

export async function startSeededApi(call: DocumentedCall): Promise<SeededApi> {
  const deps = await createTestDeps();
  const app = createApp(deps);
  const receiver = await startHttpReceiver();
  const admin = createTestClient(app, deps.config.baseUrl);
  const close = async () => {
    await receiver.close();
    await deps.close();
  };
  try {
    return { deps, app, admin, receiver, ...(await seed(deps, admin, call)), close };
  } catch (error) {
    // The file's afterAll never sees an app whose seeding failed.
    await close();
    throw error;
  }
}

async function seed(
  deps: TestDeps,
  admin: TestClient,
  call: DocumentedCall,
): Promise<{ hostId: string; offlineHostId: string }> {
  const boot = await call(admin, "POST", "/api/auth/bootstrap", {
    bootstrap_token: "test-bootstrap-token-0123456789",
    username: "admin",
    password: PASSWORD,
  });
  expect(boot.status).toBe(201);
  const now = deps.clock.now();
  const { host } = await seedHost(deps, {
    protocolVersion: 8,
    reportedHostname: "web-1.example",
    toolVersion: "restic 0.18.0",
    lastSeenAt: now,
    updateVersion: "0.0.10",
    updateState: "failed",
    updateError: "the new agent did not start",
    updateRequestedAt: now,
    updateStateAt: now,
    refusedProtocolVersion: 1,
    refusedAt: now,
  });
  const hostId = host.id;
  deps.hub.register(treeAnsweringAgent(deps, hostId));
  const offlineHostId = (await seedHost(deps, { name: "db-1", protocolVersion: 8 })).host.id;
  await replaceSnapshots(deps.db, hostId, {
    refreshed_at: "2026-11-21T11:00:00Z",
    snapshots: [2, 1].map((n) => ({
      id: snapshotId(n),
      short_id: snapshotId(n).slice(-8),
      time: `2026-11-1${n}T03:00:00Z`,
      hostname: "web-1",
      paths: ["/srv"],
      tags: ["srv"],
      size_bytes: 1024 * n,
      file_count: 10 * n,
    })),
  });
  await writeAudit(deps.db, deps, {
    actor: "agent",
    action: HOSTNAME_CHANGED_ACTION,
    targetKind: "host",
    targetId: hostId,
    details: { from: "web-1", to: "web-1.example" },
  });
  await seedJob(
    deps,
    { hostId, kind: "drill", actorKind: "system", params: { snapshot_id: snapshotId(2) } },
    {
      status: "succeeded",
      finishedAt: now,
      summary: {
        snapshot_id: snapshotId(2),
        files_in_snapshot: 20,
        files_checked: 2,
        bytes_checked: 24,
        mismatch_count: 1,
        mismatches: [{ path: "/srv/a.txt", expected_size: 12, restored_size: null }],
      },
    },
  );
  await seedJob(
    deps,
    { hostId, kind: "copy", actorKind: "system" },
    {
      status: "succeeded",
      finishedAt: now,
      summary: {
        initialised: false,
        requested: 2,
        mirrored: 2,
        missing: [],
        mirror_snapshot_count: 2,
        mirror_latest_time: "2026-11-21T03:00:00Z",
      },
    },
  );
  await deps.db.insert(repoStats).values({
    hostId,
    lastCheckStatus: "ok",
    lastCheckAt: now,
    lastCheckOkAt: now,
    totalSizeBytes: 4096,
    rawSizeBytes: 2048,
    totalFileCount: 30,
    snapshotCount: 2,
    compressionRatio: 2,
  });
  return { hostId, offlineHostId };
}
