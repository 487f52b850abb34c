/**
 * Issue 5 alerts end to end with real processes: two failing source groups give two
 * backup_failed alerts, each notified once to a real HTTP receiver (webhook, HMAC-signed) and a
 * real SMTP server process; a third failure of one group only touches its alert; that group's
 * success resolves its alert and not the other's.
 */
import { createHmac } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentRun, startAgent } from "./support/agent-process.js";
import { type Api, bootstrapAdmin } from "./support/api.js";
import { enrolHost, waitHostReady } from "./support/enrol.js";
import { eventually } from "./support/eventually.js";
import { type RestServer, startRestServer } from "./support/rest-server.js";
import { type ServerProcess, startServerProcess } from "./support/server-process.js";
import { type SmtpSink, startSmtpSink } from "./support/smtp-sink.js";
import { FETCHED_TOOLS, missingNote, toolsPresent } from "./support/tools.js";
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhook-receiver.js";

const WEBHOOK_SECRET = "e2e-webhook-secret-0123456789";

interface AlertJson {
  id: string;
  kind: string;
  dedup_key: string;
  last_seen_at: string;
  resolved_at: string | null;
  message: string;
}

const missing = missingNote({ [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(`alerts: raise, notify once, touch, resolve per group${missing}`, () => {
  let rest: RestServer;
  let server: ServerProcess;
  let api: Api;
  let smtp: SmtpSink;
  let receiver: WebhookReceiver;
  let agent: AgentRun | undefined;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    smtp = await startSmtpSink();
    rest = await startRestServer();
    server = await startServerProcess();
    api = await bootstrapAdmin(server.url, server.output());
  });
  afterAll(async () => {
    await agent?.stop();
    await server?.stop();
    await rest?.stop();
    await smtp?.stop();
    await receiver?.close();
  });

  async function run(hostId: string, groupId: string): Promise<string> {
    const res = await api.send<{ job_id: string }>(
      "POST",
      `/api/hosts/${hostId}/source-groups/${groupId}/run`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const job = await eventually(
      async () => {
        const { job } = await api.get<{ job: { status: string } }>(`/api/jobs/${res.body.job_id}`);
        return ["succeeded", "failed", "cancelled", "lost"].includes(job.status) ? job : undefined;
      },
      { what: "the backup to end", timeoutMs: 90_000 },
    );
    return job.status;
  }

  const alertsOf = async (hostId: string, state: string) =>
    (await api.get<{ alerts: AlertJson[] }>(`/api/alerts?state=${state}&host_id=${hostId}`)).alerts;

  it("notifies each new alert once by webhook and mail, and resolves by group", async () => {
    for (const channel of [
      { name: "ops-webhook", kind: "webhook", config: { url: receiver.url, secret: WEBHOOK_SECRET } },
      {
        name: "ops-mail",
        kind: "email",
        config: {
          host: "127.0.0.1",
          port: smtp.port,
          security: "none",
          from: "fleetback@example.org",
          to: ["ops@example.org"],
        },
      },
    ]) {
      const res = await api.send("POST", "/api/notification-channels", channel);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }

    const host = await enrolHost({ api, rest, restic: "0.18", user: "alerts" });
    agent = startAgent(["run"], host.dirs, host.env);
    await waitHostReady(api, host.hostId);
    const source = mkdtempSync(join(tmpdir(), "fleetback-alerts-"));
    writeFileSync(join(source, "a.txt"), "alpha");
    const groups: Record<string, string> = {};
    for (const name of ["alpha", "beta"]) {
      // A failing pre-hook fails the backup before restic runs: a deterministic failure.
      const res = await api.send<{ source_group: { id: string } }>(
        "POST",
        `/api/hosts/${host.hostId}/source-groups`,
        { name, includes: [source], pre_hook: "echo refusing; exit 7", retry_max: 0 },
      );
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      groups[name] = res.body.source_group.id;
    }
    const alpha = groups.alpha ?? "";
    const beta = groups.beta ?? "";

    expect(await run(host.hostId, alpha)).toBe("failed");
    expect(await run(host.hostId, beta)).toBe("failed");
    const open = await eventually(
      async () => {
        const found = await alertsOf(host.hostId, "open");
        return found.length === 2 ? found : undefined;
      },
      { what: "two open alerts" },
    );
    expect(open.map((a) => [a.kind, a.dedup_key]).sort()).toEqual(
      [
        ["backup_failed", alpha],
        ["backup_failed", beta],
      ].sort(),
    );
    await eventually(async () => receiver.deliveries.length >= 2 && smtp.messages.length >= 2, {
      what: "two webhooks and two mails",
    });
    for (const delivery of receiver.deliveries) {
      const expected = createHmac("sha256", WEBHOOK_SECRET).update(delivery.body).digest("hex");
      expect(delivery.signature).toBe(`sha256=${expected}`);
    }
    const groupNames = receiver.deliveries
      .map((d) => JSON.parse(d.body) as { event: string; alert: { source_group_name: string } })
      .map((d) => [d.event, d.alert.source_group_name])
      .sort();
    expect(groupNames).toEqual([
      ["alert.opened", "alpha"],
      ["alert.opened", "beta"],
    ]);
    expect(smtp.messages.every((m) => m.to.includes("ops@example.org"))).toBe(true);
    expect(
      smtp.messages
        .map((m) => /Subject: (.*)/.exec(m.raw)?.[1] ?? "")
        .sort()
        .join("\n"),
    ).toMatch(/backup_failed.*alpha[\s\S]*backup_failed.*beta/);

    // A third failure of alpha: the same alert, seen later, no new notification.
    const alphaAlert = open.find((a) => a.dedup_key === alpha);
    expect(await run(host.hostId, alpha)).toBe("failed");
    const touched = await eventually(
      async () => {
        const found = (await alertsOf(host.hostId, "open")).find((a) => a.dedup_key === alpha);
        return found && found.last_seen_at !== alphaAlert?.last_seen_at ? found : undefined;
      },
      { what: "alpha's alert touched" },
    );
    expect(touched.id).toBe(alphaAlert?.id);
    expect(await alertsOf(host.hostId, "open")).toHaveLength(2);

    // alpha fixed: its success resolves alpha's alert only.
    const fixed = await api.send("PUT", `/api/hosts/${host.hostId}/source-groups/${alpha}`, {
      name: "alpha",
      includes: [source],
      pre_hook: "",
    });
    expect(fixed.status, JSON.stringify(fixed.body)).toBe(200);
    expect(await run(host.hostId, alpha)).toBe("succeeded");
    const still = await eventually(
      async () => {
        const found = await alertsOf(host.hostId, "open");
        return found.length === 1 ? found : undefined;
      },
      { what: "alpha's alert resolved" },
    );
    expect(still[0]?.dedup_key).toBe(beta);
    const resolved = await alertsOf(host.hostId, "resolved");
    expect(resolved.map((a) => a.id)).toEqual([alphaAlert?.id]);

    // Give a stray duplicate time to arrive, then count: exactly one of each per opened alert.
    const { notification_channels: channels } = await api.get<{
      notification_channels: Array<{ id: string }>;
    }>("/api/notification-channels");
    expect(channels).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(receiver.deliveries).toHaveLength(2);
    expect(smtp.messages).toHaveLength(2);
    const page = await api.text("/alerts?state=all");
    expect(page).toContain("backup_failed");
  });
});
