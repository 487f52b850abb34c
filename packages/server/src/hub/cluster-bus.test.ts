/**
 * The replica outbox is bounded for live job log lines: while MAX_QUEUED_BYTES wait unsent, a
 * lossy message is dropped and counted (and /metrics shows the count), never queued; the messages
 * other replicas need still all go, in order.
 */
import { runDbSuite } from "@fleetback/db/testing";
import { afterEach, expect, it } from "vitest";
import { type Cluster, startCluster } from "../cluster.js";
import { createIds } from "../ids.js";
import { createLogger } from "../log.js";
import { createMetricsScraper } from "../metrics/scrape.js";
import { parseExposition } from "../metrics/test-exposition-parser.js";
import { eventually } from "../testing/eventually.js";
import { testConfig } from "../testing/test-deps.js";
import { createClusterBus, MAX_QUEUED_BYTES } from "./cluster-bus.js";

const quiet = () => createLogger("error", { write: () => undefined });

runDbSuite("cluster bus outbox", (getDb, context) => {
  const open: Cluster[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((cluster) => cluster.close()));
  });

  it("drops lossy messages past its byte bound and still sends every other one in order", async () => {
    const bus = createClusterBus({
      db: getDb(),
      pubsub: context.current().pubsub,
      ids: createIds(),
      log: quiet(),
      now: () => new Date(),
      maxQueuedBytes: 20_000,
    });
    const heard: unknown[] = [];
    let heardLast: () => void = () => undefined;
    const last = new Promise<void>((resolve) => {
      heardLast = resolve;
    });
    const stop = await bus.subscribe("outbox_test", (message) => {
      heard.push(message);
      if (message === "last") {
        heardLast();
      }
    });
    // Published in one go: the first NOTIFY is in flight while the rest wait in the outbox.
    bus.publish("outbox_test", "first");
    const line = (i: number) => ({ i, line: "x".repeat(1_000) });
    for (let i = 0; i < 200; i += 1) {
      bus.publish("outbox_test", line(i), { lossy: true });
    }
    bus.publish("outbox_test", "last");
    const fits = Math.floor(20_000 / JSON.stringify(line(100)).length);
    expect(bus.dropped()).toBeGreaterThanOrEqual(200 - fits);
    expect(bus.dropped()).toBeLessThan(200);
    await last;
    await stop();
    const lines = heard.slice(1, -1) as Array<{ i: number }>;
    expect(heard[0]).toBe("first");
    expect(lines.length + bus.dropped()).toBe(200);
    // The ones kept are the first ones, in order: the outbox never reorders.
    expect(lines.map((kept) => kept.i)).toEqual(lines.map((_, index) => index));
  });

  it("counts the live log lines a flood could not send in fleetback_cluster_messages_dropped_total", async () => {
    const start = () =>
      startCluster({
        db: getDb(),
        pubsub: context.current().pubsub,
        ids: createIds(),
        log: quiet(),
        heartbeatMs: 60_000,
        replicaTtlMs: 30_000,
      });
    const a = await start();
    open.push(a);
    const b = await start();
    open.push(b);
    await eventually(
      () => a.hub.hasPeers(),
      (known) => known,
      { what: "A to know B", timeoutMs: 20_000 },
    );
    const big = "y".repeat(10_000);
    const lines = Math.ceil((2 * MAX_QUEUED_BYTES) / big.length);
    for (let seq = 1; seq <= lines; seq += 1) {
      a.jobEvents.emit("job.log", {
        jobId: "01JD0000000000000000000000",
        hostId: "01JD0000000000000000000001",
        seq,
        stream: "stdout",
        line: big,
        ts: new Date(),
      });
    }
    const dropped = a.hub.droppedBusMessages();
    expect(dropped).toBeGreaterThan(lines / 3);
    const scraper = createMetricsScraper({ db: getDb(), config: testConfig(), hub: a.hub });
    const families = parseExposition((await scraper.scrape(new Date())).body);
    const family = families.get("fleetback_cluster_messages_dropped_total");
    expect(family?.type).toBe("counter");
    expect(family?.samples.map((sample) => sample.value)).toEqual([dropped]);
  }, 60_000);
});
