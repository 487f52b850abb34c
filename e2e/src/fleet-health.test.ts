/**
 * Issue 16 fleet health end to end with real processes: a group scheduled every 20 s backs up
 * with real restic to a real rest-server; the agent is stopped, and agent_offline, then
 * backup_overdue (judged from the repository's snapshots, not from jobs) open and reach a real
 * webhook receiver; the agent is started again, its hello resolves agent_offline at once and the
 * next scheduled snapshot resolves backup_overdue, both notified as resolved.
 */
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
import { FETCHED_TOOLS, missingNote, toolsPresent } from "./support/tools.js";
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhook-receiver.js";

interface AlertJson {
  id: string;
  kind: string;
  dedup_key: string;
  resolved_at: string | null;
}
interface Notice {
  event: string;
  alert: { kind: string; host_name: string; source_group_name: string | null };
}

const missing = missingNote({ [FETCHED_TOOLS]: toolsPresent() });
describe.skipIf(missing !== "")(`fleet health: silent failures alert and resolve${missing}`, () => {
  let rest: RestServer;
  let server: ServerProcess;
  let api: Api;
  let receiver: WebhookReceiver;
  let agent: AgentRun | undefined;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    rest = await startRestServer();
    server = await startServerProcess({
      FLEETBACK_AGENT_OFFLINE_ALERT_AFTER: "1m",
      FLEETBACK_HEALTH_INTERVAL: "5s",
    });
    api = await bootstrapAdmin(server.url, server.output());
  });
  afterAll(async () => {
    await agent?.stop();
    await server?.stop();
    await rest?.stop();
    await receiver?.close();
  });

  const notices = () => receiver.deliveries.map((d) => JSON.parse(d.body) as Notice);
  const openAlerts = async (hostId: string) =>
    (await api.get<{ alerts: AlertJson[] }>(`/api/alerts?state=open&host_id=${hostId}`)).alerts;
  const freshness = async (hostId: string) =>
    (
      await api.get<{
        source_groups: Array<{ freshness: { state: string; last_snapshot_at: string | null } }>;
      }>(`/api/hosts/${hostId}/source-groups`)
    ).source_groups[0]?.freshness;

  it("opens agent_offline and backup_overdue while the agent is stopped, resolves both after it is back", async () => {
    const channel = await api.send("POST", "/api/notification-channels", {
      name: "ops-webhook",
      kind: "webhook",
      notify_resolved: true,
      config: { url: receiver.url, secret: "e2e-webhook-secret-0123456789" },
    });
    expect(channel.status, JSON.stringify(channel.body)).toBe(201);

    const host = await enrolHost({ api, rest, restic: "0.18", user: "health" });
    agent = startAgent(["run"], host.dirs, host.env);
    await waitHostReady(api, host.hostId);
    const source = mkdtempSync(join(tmpdir(), "fleetback-health-"));
    writeFileSync(join(source, "a.txt"), "alpha");
    const group = await api.send<{ source_group: { id: string } }>(
      "POST",
      `/api/hosts/${host.hostId}/source-groups`,
      {
        name: "docs",
        includes: [source],
        // The shortest grace: overdue one minute after the newest snapshot.
        grace_seconds: 60,
      },
    );
    expect(group.status, JSON.stringify(group.body)).toBe(201);
    const schedule = await api.send("POST", `/api/hosts/${host.hostId}/schedules`, {
      cron: "*/20 * * * * *",
      source_group_ids: [group.body.source_group.id],
    });
    expect(schedule.status, JSON.stringify(schedule.body)).toBe(201);

    const first = await eventually(
      async () => {
        const judged = await freshness(host.hostId);
        return judged?.state === "fresh" && judged.last_snapshot_at ? judged : undefined;
      },
      { what: "a scheduled snapshot making the group fresh", timeoutMs: 90_000, intervalMs: 1_000 },
    );

    await agent.stop();
    agent = undefined;
    const opened = await eventually(
      async () => {
        const kinds = (await openAlerts(host.hostId)).map((a) => a.kind).sort();
        return kinds.includes("agent_offline") && kinds.includes("backup_overdue") ? kinds : undefined;
      },
      { what: "agent_offline and backup_overdue open", timeoutMs: 150_000, intervalMs: 2_000 },
    );
    expect(opened).toEqual(["agent_offline", "backup_overdue"]);
    const overdue = await freshness(host.hostId);
    expect(overdue).toMatchObject({ state: "overdue", last_snapshot_at: first.last_snapshot_at });
    await eventually(async () => notices().filter((n) => n.event === "alert.opened").length >= 2, {
      what: "both alerts delivered to the webhook",
    });
    expect(
      notices()
        .filter((n) => n.event === "alert.opened")
        .map((n) => [n.alert.kind, n.alert.source_group_name])
        .sort(),
    ).toEqual([
      ["agent_offline", null],
      ["backup_overdue", "docs"],
    ]);

    agent = startAgent(["run"], host.dirs, host.env);
    await eventually(
      async () => {
        const open = await openAlerts(host.hostId);
        return open.length === 0 ? open : undefined;
      },
      { what: "both alerts resolved", timeoutMs: 120_000, intervalMs: 1_000 },
    );
    expect((await freshness(host.hostId))?.state).toBe("fresh");
    await eventually(async () => notices().filter((n) => n.event === "alert.resolved").length >= 2, {
      what: "both resolutions delivered",
    });
    expect(
      notices()
        .filter((n) => n.event === "alert.resolved")
        .map((n) => n.alert.kind)
        .sort(),
    ).toEqual(["agent_offline", "backup_overdue"]);
    // Exactly one notification per change: nothing was re-notified while the alerts stayed open.
    expect(notices()).toHaveLength(4);
  });
});
