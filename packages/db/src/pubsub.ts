/**
 * @module PostgreSQL LISTEN/NOTIFY behind one small interface, on PostgreSQL (postgres.js keeps a
 * dedicated listening connection and re-listens after it drops) and on PGlite (one session, so it
 * hears its own notifications, which is what lets two hubs in one test process talk).
 *
 * Channels are namespaced by the schema the connection works in: test runs sharing one
 * PostgreSQL each use their own schema and must never hear each other.
 */
import { createHash } from "node:crypto";
import type { PGlite } from "@electric-sql/pglite";
import type { Sql } from "postgres";

/** PostgreSQL refuses a NOTIFY payload of 8,000 bytes or more; callers stay under this. */
export const NOTIFY_PAYLOAD_LIMIT = 7_900;

export interface PubSub {
  /**
   * Listens on `channel`. `onListen` runs each time the listening session (re)starts: a
   * notification sent while it was down is lost, so callers resynchronise from tables there.
   * Resolves once listening, with the function that stops it.
   */
  listen(
    channel: string,
    onMessage: (payload: string) => void,
    onListen?: () => void,
  ): Promise<() => Promise<void>>;
  /** Sends `payload` (under NOTIFY_PAYLOAD_LIMIT bytes) to every session listening on `channel`. */
  notify(channel: string, payload: string): Promise<void>;
}

/** `fb_<10 hex of the namespace>_<name>`: a plain identifier under PostgreSQL's 63 bytes. */
export function channelName(namespace: string, name: string): string {
  if (!/^[a-z0-9_]{1,40}$/.test(name)) {
    throw new TypeError(`not a plain channel name: ${JSON.stringify(name)}`);
  }
  const tag = createHash("sha256").update(namespace).digest("hex").slice(0, 10);
  return `fb_${tag}_${name}`;
}

export function postgresPubSub(client: Sql, namespace: string): PubSub {
  return {
    async listen(channel, onMessage, onListen) {
      const meta = await client.listen(channelName(namespace, channel), onMessage, onListen);
      return () => meta.unlisten();
    },
    async notify(channel, payload) {
      await client.notify(channelName(namespace, channel), payload);
    },
  };
}

export function pglitePubSub(client: PGlite, namespace: string): PubSub {
  return {
    async listen(channel, onMessage, onListen) {
      const unlisten = await client.listen(channelName(namespace, channel), onMessage);
      onListen?.();
      return async () => {
        await unlisten();
      };
    },
    async notify(channel, payload) {
      await client.query("select pg_notify($1, $2)", [channelName(namespace, channel), payload]);
    },
  };
}
