/**
 * @module auth/rate-limit
 * A fixed-window counter per key (source IP, username at an IP), counted in the database so that
 * replicas share one limit: an attacker spreading sign-in attempts across replicas meets the same
 * wall as on one server. One upsert per attempt, cheap next to the argon2id it protects. Keys are
 * stored as SHA-256 hashes: a username field sometimes holds a mistyped password. Expired windows
 * are swept by the limiter as it is used, at most once per window.
 */
import { createHash } from "node:crypto";
import { type Database, rateLimits } from "@fleetback/db";
import { and, eq, lt, sql } from "drizzle-orm";
import type { Clock } from "../clock.js";

export interface RateLimiter {
  /** Counts one attempt for `key`; `allowed` is false once the window's limit is reached. */
  hit(key: string): Promise<{ allowed: boolean; retryAfterSeconds: number }>;
  /** Forgets `key` (e.g. after a successful login). */
  reset(key: string): Promise<void>;
}

export interface RateLimiterOptions {
  db: Database;
  /** Names the limit; limiters of one scope on several replicas share their counts. */
  scope: string;
  limit: number;
  windowMs: number;
  clock: Clock;
}

function hashKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { db, scope, limit, windowMs, clock } = options;
  let lastSweep = 0;

  async function sweep(now: Date): Promise<void> {
    if (now.getTime() - lastSweep < windowMs) {
      return;
    }
    lastSweep = now.getTime();
    await db
      .delete(rateLimits)
      .where(
        and(eq(rateLimits.scope, scope), lt(rateLimits.windowStart, new Date(now.getTime() - windowMs))),
      );
  }

  return {
    async hit(key) {
      const now = clock.now();
      await sweep(now);
      const expired = new Date(now.getTime() - windowMs);
      // A window that ended restarts at this attempt; otherwise the attempt is counted in it.
      const [row] = await db
        .insert(rateLimits)
        .values({ scope, keyHash: hashKey(key), windowStart: now, count: 1 })
        .onConflictDoUpdate({
          target: [rateLimits.scope, rateLimits.keyHash],
          set: {
            windowStart: sql`case when ${rateLimits.windowStart} <= ${expired.toISOString()}::timestamptz then ${now.toISOString()}::timestamptz else ${rateLimits.windowStart} end`,
            count: sql`case when ${rateLimits.windowStart} <= ${expired.toISOString()}::timestamptz then 1 else ${rateLimits.count} + 1 end`,
          },
        })
        .returning({ windowStart: rateLimits.windowStart, count: rateLimits.count });
      const start = row?.windowStart.getTime() ?? now.getTime();
      const count = row?.count ?? 1;
      const retryAfterSeconds = Math.max(1, Math.ceil((start + windowMs - now.getTime()) / 1000));
      return { allowed: count <= limit, retryAfterSeconds };
    },
    async reset(key) {
      await db
        .delete(rateLimits)
        .where(and(eq(rateLimits.scope, scope), eq(rateLimits.keyHash, hashKey(key))));
    },
  };
}
