/**
 * Issue 16 fleet health end to end with real processes: a group scheduled every 10 s backs up
 * with real restic to a real rest-server; the agent is stopped and the group's grace tightened,
 * and agent_offline and backup_overdue (judged from the repository's snapshots, not from jobs)
 * open and reach a real webhook receiver; the agent is started again, its hello resolves
 * agent_offline at once and the next scheduled snapshot resolves backup_overdue, both notified as
 * resolved.
 * The periods are the product's settings at their short end (offline alert after 20 s, a 20 s
 * grace, evaluations every 5 s), so the waits are for alerts and deliveries, not for an hour. The
 * grace is set only once the agent is stopped: until then the default grace (an hour after the
 * due time) holds, so however long the first backup takes on a busy machine, the group cannot turn
 * overdue before it.
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
      // Far longer than enrolment to first hello, which a host that never connected is judged by.
      FLEETBACK_AGENT_OFFLINE_ALERT_AFTER: "20s",
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
      { name: "docs", includes: [source] },
    );
    expect(group.status, JSON.stringify(group.body)).toBe(201);
    const schedule = await api.send("POST", `/api/hosts/${host.hostId}/schedules`, {
      cron: "*/10 * * * * *",
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
    // Overdue 20 s after the first run that did not come was due (the grace counts from the due
    // time): the snapshot after the restart resolves it, and the next run is due in one interval
    // with the whole grace after it to spare.
    const tightened = await api.send(
      "PUT",
      `/api/hosts/${host.hostId}/source-groups/${group.body.source_group.id}`,
      { grace_seconds: 20 },
    );
    expect(tightened.status, JSON.stringify(tightened.body)).toBe(200);
    const opened = await eventually(
      async () => {
        const kinds = (await openAlerts(host.hostId)).map((a) => a.kind).sort();
        return kinds.includes("agent_offline") && kinds.includes("backup_overdue") ? kinds : undefined;
      },
      { what: "agent_offline and backup_overdue open", timeoutMs: 150_000, intervalMs: 1_000 },
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
