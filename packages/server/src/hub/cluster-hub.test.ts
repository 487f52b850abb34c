import { type Database, hostConnections, hosts, serverReplicas } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { type AgentEnvelope, CLOSE_CODES, decodeServerMessage } from "@fleetback/protocol";
import { eq, sql } from "drizzle-orm";
import { afterEach, expect, it } from "vitest";
import { type Cluster, startCluster } from "../cluster.js";
import { markHostOffline } from "../hosts/presence.js";
import { createIds } from "../ids.js";
import { createLogger } from "../log.js";
import { eventually as pollUntil } from "../testing/eventually.js";
import { createRecordingConnection } from "../testing/recording-connection.js";
import { seedHost } from "../testing/seed.js";
import { HubOfflineError, HubTimeoutError } from "./types.js";

/**
 * What another replica heard over LISTEN/NOTIFY shows only in its state, so that state is polled;
 * the bound is a hang guard well inside the test's own timeout, not a figure of how soon.
 */
async function eventually<T>(probe: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  const value = await pollUntil(probe, (seen) => seen !== undefined && seen !== false, {
    what,
    timeoutMs: 20_000,
  });
  return value as T;
}

const JOB_ID = "01JD0000000000000000000000";

/** Connects the host to `replica` and waits until the replica has recorded it. */
async function connect(replica: Cluster, hostId: string) {
  const socket = createRecordingConnection(hostId);
  replica.hub.register(socket);
  await replica.hub.settle(hostId);
  return socket;
}

runDbSuite("cluster hub", (getDb, context) => {
  const open: Cluster[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((cluster) => cluster.close()));
  });

  async function replica(db: Database = getDb()): Promise<Cluster> {
    const logLines: string[] = [];
    const cluster = await startCluster({
      db,
      pubsub: context.current().pubsub,
      ids: createIds(),
      log: createLogger("debug", { write: (line: string) => logLines.push(line) }),
      heartbeatMs: 60_000,
      // Heartbeats here are the one at start and the test's own: a replica must not count as dead
      // because the machine took seconds between starting it and the next one's heartbeat.
      replicaTtlMs: 30_000,
    });
    open.push(cluster);
    return cluster;
  }

  it("routes send and request to a host connected to another replica, replies come back", async () => {
    const a = await replica();
    expect(a.hub.hasPeers()).toBe(false);
    const b = await replica();
    // B found A at its first heartbeat; A hears B's "joined" at once, without waiting for its own.
    expect(b.hub.hasPeers()).toBe(true);
    await eventually(() => a.hub.hasPeers(), "A to know B");
    const { host } = await seedHost({ db: getDb() });
    const socket = await connect(a, host.id);
    await eventually(() => b.hub.isOnline(host.id), "B to see the host online");
    expect(b.hub.onlineHostIds()).toEqual([host.id]);

    expect(b.hub.send(host.id, "command.cancel", { job_id: JOB_ID })).toBe(true);
    await eventually(() => socket.sent.length === 1, "the frame on A's socket");
    const sent = decodeServerMessage(socket.sent[0] ?? "");
    expect(sent.ok && sent.message.type).toBe("command.cancel");

    // A request from B; the agent's reply reaches A's channel, which hands it to A's hub.
    // The reply is over NOTIFY's 8,000 bytes, so it travels through cluster_messages.
    const asked = b.hub.request(
      host.id,
      "tree.list",
      { snapshot_id: "abcd1234", path: "/" },
      "tree.list.result",
      5_000,
    );
    const frame = await eventually(() => socket.sent[1], "the request on A's socket");
    const request = JSON.parse(frame) as { id: string; type: string };
    expect(request.type).toBe("tree.list");
    const entries = Array.from({ length: 200 }, (_, i) => ({
      name: `file-${i}-${"x".repeat(40)}`,
      type: "file",
    }));
    const reply = {
      v: 1,
      id: request.id,
      type: "tree.list.result",
      ts: new Date().toISOString(),
      payload: { entries },
    };
    expect(JSON.stringify(reply).length).toBeGreaterThan(8_000);
    expect(a.hub.deliverReply(host.id, reply as unknown as AgentEnvelope)).toBe(true);
    const answer = await asked;
    expect(answer.id).toBe(request.id);
    expect((answer.payload as unknown as { entries: unknown[] }).entries).toHaveLength(200);
    // A reply nobody waits for any more is dropped.
    expect(a.hub.deliverReply(host.id, reply as unknown as AgentEnvelope)).toBe(false);
  });

  it("times out a request the agent never answers, and refuses a host no replica holds", async () => {
    const [a, b] = [await replica(), await replica()];
    const { host } = await seedHost({ db: getDb() });
    await connect(a, host.id);
    await eventually(() => b.hub.isOnline(host.id), "B to see the host online");
    await expect(
      b.hub.request(host.id, "tree.list", { snapshot_id: "abcd1234", path: "/" }, "tree.list.result", 300),
    ).rejects.toBeInstanceOf(HubTimeoutError);
    await expect(
      b.hub.request(
        "01JD0000000000000000000009",
        "tree.list",
        { snapshot_id: "abcd1234", path: "/" },
        "tree.list.result",
        300,
      ),
    ).rejects.toBeInstanceOf(HubOfflineError);
    expect(b.hub.send("01JD0000000000000000000009", "command.cancel", { job_id: JOB_ID })).toBe(false);
  });

  it("the newest connection wins across replicas: the older socket is closed, the host stays online", async () => {
    const [a, b] = [await replica(), await replica()];
    const { host } = await seedHost({ db: getDb() });
    const older = await connect(a, host.id);
    const newer = await connect(b, host.id);
    await eventually(() => older.closedWith[0], "A to close the older socket");
    expect(older.closedWith).toEqual([
      { code: CLOSE_CODES.replaced, reason: "replaced by a newer connection" },
    ]);
    // The older socket's close runs through A's channel: its cleanup must not remove B's row.
    a.hub.unregister(older);
    await a.hub.settle(host.id);
    const rows = await getDb().select().from(hostConnections).where(eq(hostConnections.hostId, host.id));
    expect(rows.map((row) => row.replicaId)).toEqual([b.replicaId]);
    await eventually(() => a.hub.isOnline(host.id), "A to see the host online through B");
    expect(a.hub.send(host.id, "command.cancel", { job_id: JOB_ID })).toBe(true);
    await eventually(() => newer.sent.length === 1, "A's message on B's socket");
    expect(older.sent).toEqual([]);
    // And the host is not marked offline by the older socket's end.
    await getDb().update(hosts).set({ status: "online" }).where(eq(hosts.id, host.id));
    await markHostOffline(getDb(), host.id, new Date());
    const [row] = await getDb().select({ status: hosts.status }).from(hosts).where(eq(hosts.id, host.id));
    expect(row?.status).toBe("online");
  });

  it("disconnects a host held by another replica", async () => {
    const [a, b] = [await replica(), await replica()];
    const { host } = await seedHost({ db: getDb() });
    const socket = await connect(a, host.id);
    await eventually(() => b.hub.isOnline(host.id), "B to see the host online");
    b.hub.disconnect(host.id, CLOSE_CODES.hostDeleted, "host deleted");
    expect(b.hub.isOnline(host.id)).toBe(false);
    await eventually(() => socket.closedWith[0], "A to close the socket");
    expect(socket.closedWith[0]).toEqual({ code: CLOSE_CODES.hostDeleted, reason: "host deleted" });
    await a.hub.settle(host.id);
    expect(a.hub.isOnline(host.id)).toBe(false);
    expect(await getDb().select().from(hostConnections)).toEqual([]);
  });

  it("drains at shutdown: one statement removes the replica's presence and the others hear it at once", async () => {
    const [a, b] = [await replica(), await replica()];
    const hostIds: string[] = [];
    for (const name of ["web-1", "web-2", "web-3"]) {
      const { host } = await seedHost({ db: getDb() }, { name });
      const socket = createRecordingConnection(host.id);
      a.hub.register(socket);
      hostIds.push(host.id);
    }
    await Promise.all(hostIds.map((id) => a.hub.settle(id)));
    await eventually(() => hostIds.every((id) => b.hub.isOnline(id)), "B to see the three hosts");
    const draining = a.hub.drain();
    // Sockets closing while draining are not recorded one by one.
    a.hub.unregister(createRecordingConnection(hostIds[0] ?? ""));
    await draining;
    expect(await getDb().select().from(hostConnections)).toEqual([]);
    await eventually(() => hostIds.every((id) => !b.hub.isOnline(id)), "B to see them gone");
  });

  it("forgets the hosts of a replica that stopped heartbeating, and a closed replica's at once", async () => {
    const [a, b] = [await replica(), await replica()];
    const one = await seedHost({ db: getDb() });
    const two = await seedHost({ db: getDb() }, { name: "web-2" });
    await connect(a, one.host.id);
    await eventually(() => b.hub.isOnline(one.host.id), "B to see host one online");
    // A freezes (kill -9, a network split): no heartbeat for longer than the TTL.
    await getDb()
      .update(serverReplicas)
      .set({ heartbeatAt: sql`now() - interval '1 minute'` })
      .where(eq(serverReplicas.id, a.replicaId));
    await b.hub.heartbeat();
    expect(b.hub.isOnline(one.host.id)).toBe(false);
    expect(await getDb().select().from(hostConnections)).toEqual([]);
    // A comes back: its next heartbeat records the socket it still holds.
    await a.hub.heartbeat();
    await a.hub.settle(one.host.id);
    await b.hub.heartbeat();
    expect(b.hub.isOnline(one.host.id)).toBe(true);

    const c = await replica();
    await connect(c, two.host.id);
    await eventually(() => b.hub.isOnline(two.host.id), "B to see host two online");
    await c.close();
    await eventually(() => !b.hub.isOnline(two.host.id), "B to see host two offline after C closed");
    expect(b.hub.isOnline(one.host.id)).toBe(true);
  });
});
