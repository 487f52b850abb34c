/**
 * @module testing/notifier-harness
 * What both notifier test files stand on: a webhook receiver and an SMTP server that ask for a
 * login, an open alert seeded before each test with no channel left from the one before, and
 * notifiers started on the suite's database and closed after each test. The test server's own
 * notifier is closed first, or it would claim the deliveries of the notifiers under test.
 * `useChannelRoutes` is what both notification-channel route test files stand on: the same
 * receivers, an admin and an operator signed in, and a check after the suite that no answer, log
 * row, audit entry or log line showed the canary.
 */
import {
  type Alert,
  alerts,
  auditLog,
  notificationChannels,
  notificationDeliveries,
  notificationLog,
} from "@fleetback/db";
import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { asc, eq } from "drizzle-orm";
import { ulid } from "ulidx";
import { afterAll, beforeAll, beforeEach, expect } from "vitest";
import { createLogger } from "../log.js";
import { createChannel, type NewChannelInput } from "../notifications/channels.js";
import { createNotifier, type NotifierOptions } from "../notifications/notifier.js";
import type { Notifier } from "../notifications/notifier-port.js";
import type { TestClient } from "./http.js";
import { seedAuditContext, seedHost } from "./seed.js";
import { signInOn } from "./signed-in-app.js";
import { useSuiteReceivers } from "./suite-receivers.js";
import type { TestDeps } from "./test-deps.js";
import type { TestServer } from "./test-server.js";

/** A secret the tests put in channel configs and logins, to find it wherever it leaks. */
export const CANARY = "canary-SECRET-123";

/**
 * Timers on the suite's manual clock, so that a wait is both measured and skipped: `next()` moves
 * the clock to the earliest timer, runs every timer due by then and says how far it moved.
 */
export function clockTimers(clock: TestDeps["clock"]) {
  const timers = createManualTimers(clock);
  const earliest = () => {
    const [delay] = timers.pendingDelays();
    if (delay === undefined) {
      throw new Error("no timer is set");
    }
    return Math.max(0, delay);
  };
  return {
    timers,
    pending: () => timers.pending(),
    nextAt: () => clock.now().getTime() + (timers.pendingDelays()[0] ?? Number.POSITIVE_INFINITY),
    runDue: () => timers.advance(0),
    next(): number {
      const moved = earliest();
      timers.advance(moved);
      return moved;
    },
  };
}

/** Registers its hooks in the calling suite; read its fields inside tests and hooks only. */
export function useNotifierHarness(server: TestServer) {
  const receivers = useSuiteReceivers({ username: "mailer", password: CANARY });
  let notifier: Notifier | undefined;
  /** Every notifier a test started; several stand for servers sharing the database. */
  const started: Notifier[] = [];
  let alert: Alert;
  const context = { hostName: "db-01", sourceGroupName: "etc" };

  beforeAll(async () => {
    await server.deps.notifier.close();
  });
  afterAll(async () => {
    await Promise.all(started.splice(0).map((n) => n.close()));
  });
  beforeEach(async () => {
    await Promise.all(started.splice(0).map((n) => n.close()));
    notifier = undefined;
    receivers.clear();
    await server.deps.db.delete(notificationChannels);
    const { host } = await seedHost(server.deps, { name: "db-01" });
    const [row] = await server.deps.db
      .insert(alerts)
      .values({
        id: ulid(),
        hostId: host.id,
        kind: "backup_failed",
        dedupKey: "group-1",
        message: "restic exited with status 1: repository is locked",
        createdAt: new Date("2026-11-21T12:00:00Z"),
      })
      .returning();
    if (!row) {
      throw new Error("no alert row");
    }
    alert = row;
  });

  /** Waiting on an attempt's record: resolved by the log line written right after its row. */
  const logWatchers = new Set<(line: string) => void>();
  const log = createLogger("debug", {
    write(line: string) {
      server.deps.logLines.push(line);
      for (const watch of logWatchers) {
        watch(line);
      }
    },
  });

  function queued() {
    return server.deps.db.select().from(notificationDeliveries).orderBy(asc(notificationDeliveries.id));
  }

  return {
    get receiver() {
      return receivers.webhook;
    },
    get smtp() {
      return receivers.smtp;
    },
    /** The notifier the test started last. */
    get notifier() {
      return notifier;
    },
    /** An open backup_failed alert on host db-01, new for each test. */
    get alert() {
      return alert;
    },
    context,

    recorded(channelId: string, status: string): Promise<void> {
      return new Promise((resolve) => {
        const watch = (line: string) => {
          const fields = JSON.parse(line) as { channel_id?: string; status?: string };
          if (fields.channel_id === channelId && fields.status === status) {
            logWatchers.delete(watch);
            resolve();
          }
        };
        logWatchers.add(watch);
      });
    },

    start(options: NotifierOptions = {}) {
      // A deadline on the real clock is no assertion: a loaded machine once took over 2 s to load
      // nodemailer and send the first mail. Tests of the deadline itself pass manual timers.
      const created = createNotifier({ ...server.deps, log }, { attemptTimeoutMs: 30_000, ...options });
      started.push(created);
      notifier = created;
      return created;
    },

    async openAlert(dedupKey: string) {
      const [row] = await server.deps.db
        .insert(alerts)
        .values({ ...alert, id: ulid(), dedupKey, createdAt: server.deps.clock.now() })
        .returning();
      if (!row) {
        throw new Error("no alert row");
      }
      return row;
    },

    queued,

    /** Lets the retries happen on the clock until nothing is queued; answers the waits it skipped. */
    async settle(n: Notifier, timers: ReturnType<typeof clockTimers>) {
      const waits: number[] = [];
      for (let round = 0; round < 20; round++) {
        await n.idle();
        if ((await queued()).length === 0) {
          return waits;
        }
        waits.push(timers.next());
      }
      throw new Error(`deliveries still queued after ${waits.length} waits: ${waits.join(", ")}`);
    },

    async channel(input: Omit<NewChannelInput, "kind"> & { kind: NewChannelInput["kind"] }) {
      return (await createChannel(server.deps, await seedAuditContext(server.deps), input)).row;
    },

    async logRows(channelId?: string) {
      return server.deps.db
        .select()
        .from(notificationLog)
        .where(channelId ? eq(notificationLog.channelId, channelId) : undefined)
        .orderBy(asc(notificationLog.id));
    },
  };
}

/** A channel as the notification-channel routes answer it. */
export interface ChannelBody {
  notification_channel: {
    id: string;
    name: string;
    kind: string;
    enabled: boolean;
    notify_resolved: boolean;
    target: string;
    config: Record<string, unknown>;
    secrets: Record<string, boolean>;
  };
}

/**
 * Registers its hooks in the calling suite: no channel is left from the test before. Answers are
 * read through `read` and `json`, so that the check after the suite sees every one of them.
 */
export function useChannelRoutes(server: TestServer) {
  const receivers = useSuiteReceivers({ username: "mailer", password: CANARY });
  let admin: TestClient;
  let operator: TestClient;
  const seen: string[] = [];
  const read = async (res: Response): Promise<string> => {
    const text = await res.text();
    seen.push(text);
    return text;
  };

  beforeAll(async () => {
    const signed = await signInOn(server.deps, { users: [{ username: "oper", role: "operator" }] });
    admin = signed.admin;
    operator = signed.users.oper;
  });
  afterAll(async () => {
    const everything = [
      ...seen,
      JSON.stringify(await server.deps.db.select().from(notificationLog)),
      JSON.stringify(await server.deps.db.select().from(auditLog)),
      server.deps.logLines.join("\n"),
    ].join("\n");
    expect(everything).not.toContain(CANARY);
  });
  beforeEach(async () => {
    await server.deps.db.delete(notificationChannels);
    receivers.clear();
  });

  return {
    get receiver() {
      return receivers.webhook;
    },
    get smtp() {
      return receivers.smtp;
    },
    get admin() {
      return admin;
    },
    get operator() {
      return operator;
    },
    read,
    async json<T>(res: Response): Promise<T> {
      return JSON.parse(await read(res)) as T;
    },
    /** A webhook channel whose URL and secret both hold the canary. */
    webhook: () => ({
      name: "ops hook",
      kind: "webhook",
      notify_resolved: true,
      config: { url: `${receivers.webhook.url}/hooks/${CANARY}`, secret: `${CANARY}-hmac` },
    }),
  };
}
