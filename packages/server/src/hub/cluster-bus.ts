/**
 * @module hub/cluster-bus
 * Messages between server replicas over PostgreSQL LISTEN/NOTIFY, for the cluster hub and the
 * cluster job events.
 *
 * Order is kept: a pool sends each NOTIFY on whichever connection is free, so two in flight can
 * overtake each other (a `command.run` before the `config.update` it needs, a job's end before
 * its last log line). One NOTIFY is in flight at a time, and what queued meanwhile goes out as one
 * batch (a JSON array), so the order costs no throughput under load. A batch over NOTIFY's limit
 * waits in `cluster_messages` and the NOTIFY carries its id; receivers handle one channel's
 * payloads strictly in turn, so fetching such a row does not let later ones pass it.
 *
 * The outbox is bounded for what can be lost: a message published as `lossy` (a job's live log
 * line, which is stored anyway) is dropped and counted while MAX_QUEUED_BYTES wait unsent, so a
 * host flooding its log, or a database slow to take NOTIFYs, cannot grow this replica's memory
 * and `cluster_messages` without end. Other messages (commands, presence, job states) are few and
 * needed by the other replicas, so they always queue.
 */
import { clusterMessages, type Database, NOTIFY_PAYLOAD_LIMIT, type PubSub } from "@fleetback/db";
import { eq, lt } from "drizzle-orm";
import type { Ids } from "../ids.js";
import type { Logger } from "../log.js";

/** Bytes of JSON waiting to be sent above which `lossy` messages are dropped. */
export const MAX_QUEUED_BYTES = 4 * 1024 * 1024;

export interface ClusterBus {
  /**
   * Queues `message` for every replica listening on `channel`; never throws (failures are logged).
   * A `lossy` message is dropped (and counted) instead while the outbox is full.
   */
  publish(channel: string, message: unknown, options?: { lossy?: boolean }): void;
  /** Lossy messages dropped since start, for /metrics. */
  dropped(): number;
  /**
   * Hands each message on `channel` to `handler`, one at a time in the order sent. `onResync` runs
   * whenever the listening session (re)starts: anything sent while it was down is lost.
   */
  subscribe(
    channel: string,
    handler: (message: unknown) => void | Promise<void>,
    onResync?: () => void,
  ): Promise<() => Promise<void>>;
  /** Resolves once everything published so far has been handed to PostgreSQL. */
  flush(): Promise<void>;
  /** Deletes stored oversized payloads older than `before` (they are read within milliseconds). */
  prune(before: Date): Promise<void>;
}

export interface ClusterBusDeps {
  db: Database;
  pubsub: PubSub;
  ids: Pick<Ids, "ulid">;
  log: Logger;
  now(): Date;
  /** Default MAX_QUEUED_BYTES. */
  maxQueuedBytes?: number;
}

interface Queued {
  channel: string;
  json: string;
}

const REF_PREFIX = '{"ref":';

export function createClusterBus(deps: ClusterBusDeps): ClusterBus {
  const queue: Queued[] = [];
  const maxQueuedBytes = deps.maxQueuedBytes ?? MAX_QUEUED_BYTES;
  /** JSON length of the queued messages (characters: cheap, and close enough to bytes for a cap). */
  let queuedBytes = 0;
  let droppedCount = 0;
  let draining: Promise<void> | undefined;

  async function sendBatch(channel: string, items: string[]): Promise<void> {
    const payload = `[${items.join(",")}]`;
    if (Buffer.byteLength(payload) < NOTIFY_PAYLOAD_LIMIT) {
      await deps.pubsub.notify(channel, payload);
      return;
    }
    const id = deps.ids.ulid(deps.now());
    await deps.db.insert(clusterMessages).values({ id, payload });
    await deps.pubsub.notify(channel, JSON.stringify({ ref: id }));
  }

  async function drain(): Promise<void> {
    while (queue.length > 0) {
      const first = queue[0] as Queued;
      const items: string[] = [];
      let bytes = 2;
      // One channel per batch; a batch grows while it fits one NOTIFY, or holds one big message.
      while (queue.length > 0 && (queue[0] as Queued).channel === first.channel) {
        const next = queue[0] as Queued;
        const size = Buffer.byteLength(next.json) + 1;
        if (items.length > 0 && bytes + size >= NOTIFY_PAYLOAD_LIMIT) {
          break;
        }
        items.push(next.json);
        bytes += size;
        queuedBytes -= next.json.length;
        queue.shift();
      }
      try {
        await sendBatch(first.channel, items);
      } catch (err) {
        deps.log.error({ err, channel: first.channel, messages: items.length }, "cluster message not sent");
      }
    }
  }

  // A publish between the loop's last check and the promise settling must start a new drain.
  function kick(): void {
    if (draining) {
      return;
    }
    draining = drain().finally(() => {
      draining = undefined;
      if (queue.length > 0) {
        kick();
      }
    });
  }

  async function payloadsOf(raw: string): Promise<unknown[]> {
    let text = raw;
    if (raw.startsWith(REF_PREFIX)) {
      const { ref } = JSON.parse(raw) as { ref: string };
      const [row] = await deps.db
        .select({ payload: clusterMessages.payload })
        .from(clusterMessages)
        .where(eq(clusterMessages.id, ref));
      if (!row) {
        deps.log.warn({ ref }, "cluster message expired before it was read");
        return [];
      }
      text = row.payload;
    }
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed : [];
  }

  return {
    publish(channel, message, options) {
      const json = JSON.stringify(message);
      if (options?.lossy === true && queuedBytes + json.length > maxQueuedBytes) {
        if (droppedCount === 0) {
          deps.log.warn(
            { channel },
            "cluster outbox full: live job log lines for other replicas are dropped",
          );
        }
        droppedCount += 1;
        return;
      }
      queue.push({ channel, json });
      queuedBytes += json.length;
      kick();
    },
    dropped: () => droppedCount,
    async subscribe(channel, handler, onResync) {
      let turn = Promise.resolve();
      return deps.pubsub.listen(
        channel,
        (raw) => {
          turn = turn
            .then(async () => {
              for (const message of await payloadsOf(raw)) {
                await handler(message);
              }
            })
            .catch((err: unknown) => {
              deps.log.error({ err, channel }, "cluster message could not be handled");
            });
        },
        onResync,
      );
    },
    async flush() {
      while (draining) {
        await draining;
      }
    },
    async prune(before) {
      await deps.db.delete(clusterMessages).where(lt(clusterMessages.createdAt, before));
    },
  };
}
