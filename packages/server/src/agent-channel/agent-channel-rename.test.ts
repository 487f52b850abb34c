/**
 * Issue 13, finding 9: a hello's strings are bounded, and a hello naming another hostname is
 * audited and shown while the host keeps the name it was enrolled under (what an in-place restore
 * is confirmed against), so an agent cannot take another host's name.
 */

import { hashToken } from "@fleetback/crypto";
import { auditLog } from "@fleetback/db";
import { encode } from "@fleetback/protocol";
import { and, eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { checkRestore } from "../restore/restore-request.js";
import { readHost, seedHost } from "../testing/seed.js";
import { runServerSuite } from "../testing/server-suite.js";
import { signInOn } from "../testing/signed-in-app.js";
import { connectAgent, helloPayload } from "../testing/test-agent.js";

runServerSuite("agent channel: hello limits and renames", (server) => {
  it("keeps the enrolled name when a hello reports another host's name, audits it and shows it", async () => {
    await seedHost(server.deps, { name: "db-prod" });
    const { host, token } = await seedHost(server.deps, { name: "web-7" });
    const agent = await connectAgent(server.wsUrl, token);
    agent.hello({ hostname: "db-prod" });
    await agent.frame(1);

    const stored = await readHost(server.deps, host.id);
    expect(stored).toMatchObject({ name: "web-7", reportedHostname: "db-prod", status: "online" });
    const entries = await server.deps.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.targetId, host.id), eq(auditLog.action, "host.hostname_changed")));
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      actorKind: "agent",
      targetKind: "host",
      details: { from: "web-7", to: "db-prod" },
    });

    // The in-place confirmation names the enrolled host, not what its agent now claims to be.
    const confirming = async (typed: string) => {
      const check = await checkRestore(server.deps.db, stored ?? host, {
        snapshotId: "",
        paths: ["/etc"],
        inPlace: true,
        targetDir: "",
        confirmHostname: typed,
      });
      return check.ok ? [] : check.problems.map((problem) => problem.field);
    };
    expect(await confirming("db-prod")).toContain("confirm_hostname");
    expect(await confirming("web-7")).not.toContain("confirm_hostname");

    // The same hostname again is no change: no second entry.
    await agent.close();
    const again = await connectAgent(server.wsUrl, token);
    again.hello({ hostname: "db-prod" });
    await again.frame(1);
    const after = await server.deps.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.targetId, host.id), eq(auditLog.action, "host.hostname_changed")));
    expect(after).toHaveLength(1);
    await again.close();

    const { admin } = await signInOn(server.deps);
    const page = await (await admin.request(`/hosts/${host.id}`)).text();
    expect(page).toContain('data-testid="host-name">web-7<');
    expect(page).toContain("reported hostname changed from <code>web-7</code> to <code>db-prod</code> at");
    const api = (await (await admin.request(`/api/hosts/${host.id}`)).json()) as { host: unknown };
    expect(api.host).toMatchObject({
      name: "web-7",
      reported_hostname: "db-prod",
      hostname_changes: [{ from: "web-7", to: "db-prod" }],
    });
  });

  it("refuses a 900 KB hostname as invalid_message, for an old protocol too, and logs no megabytes", async () => {
    const { host, token } = await seedHost(server.deps, { name: "web-8" });
    const linesBefore = server.deps.logLines.length;
    const agent = await connectAgent(server.wsUrl, token);
    agent.sendRaw(encodeUnchecked(helloPayload({ protocol_version: 1, hostname: "h".repeat(900_000) })));
    const error = await agent.frame(0);
    expect(error).toMatchObject({ type: "error", payload: { code: "invalid_message" } });
    expect(String((error.payload as { message: string }).message)).toContain("hostname");
    await agent.close();
    const stored = await readHost(server.deps, host.id);
    expect(stored).toMatchObject({ name: "web-8", reportedHostname: null, status: "offline" });
    const logged = server.deps.logLines.slice(linesBefore).join("\n");
    expect(logged.length).toBeLessThan(20_000);
    expect(logged).not.toContain(hashToken(token));
  });
});

/** `encode` validates; a hostile agent does not. */
function encodeUnchecked(payload: object): string {
  const valid = JSON.parse(encode("heartbeat", { running_job_ids: [] })) as { id: string };
  return JSON.stringify({ id: valid.id, type: "hello", payload });
}
