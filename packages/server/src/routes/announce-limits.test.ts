import { encodePublicKey, generateSigningKeyPair } from "@fleetback/crypto";
import { auditLog, pendingHosts } from "@fleetback/db";
import { eq } from "drizzle-orm";
import type { Hono } from "hono";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AppEnv } from "../auth/actor.js";
import { sweepPendingHosts } from "../enrolment/announce.js";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

const HOST = { os: "linux", arch: "amd64", agent_version: "0.1.0", tool_version: "0.18.0" };

let deps: TestDeps;
let app: Hono<AppEnv>;
let operator: TestClient;

beforeEach(async () => {
  ({ deps, app, admin: operator } = await startSignedInApp());
});
afterEach(async () => {
  await deps.close();
});

/** An announce as it arrives from `peer` (the socket address the server sees). */
async function announce(peer: string, hostname: string): Promise<Response> {
  return app.request(
    "/api/agents/announce",
    {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        ...HOST,
        hostname,
        public_key: encodePublicKey(generateSigningKeyPair().publicKey),
      }),
    },
    { incoming: { socket: { remoteAddress: peer } } },
  );
}

async function pendingIds(): Promise<string[]> {
  const res = await operator.request("/api/pending-hosts");
  const body = (await res.json()) as { pending_hosts: { id: string; hostname: string }[] };
  return body.pending_hosts.map((host) => host.id);
}

async function rejectAudits() {
  return deps.db.select().from(auditLog).where(eq(auditLog.action, "pending_host.reject"));
}

describe("announce queue", () => {
  it("does not let 100 announces from one /24 keep out a host from another network", async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 100; i++) {
      statuses.push((await announce(`203.0.113.${i}`, `flood-${i}`)).status);
    }
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    const refused = await announce("203.0.113.200", "flood-x");
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ message: expect.stringContaining("203.0.113.0/24") });
    expect((await announce("198.51.100.7", "genuine")).status).toBe(201);
  });

  it("keeps unapproved announces for one hour", async () => {
    expect((await announce("203.0.113.1", "web-01")).status).toBe(201);
    deps.clock.advance(59 * 60 * 1000);
    expect(await sweepPendingHosts(deps.db, deps.clock.now())).toBe(0);
    deps.clock.advance(60 * 1000);
    expect(await pendingIds()).toEqual([]);
    expect(await sweepPendingHosts(deps.db, deps.clock.now())).toBe(1);
    expect(await deps.db.select().from(pendingHosts)).toHaveLength(0);
  });

  it("gives an approved announce a fresh hour for its claim", async () => {
    expect((await announce("203.0.113.1", "web-01")).status).toBe(201);
    deps.clock.advance(50 * 60 * 1000);
    const [id] = await pendingIds();
    expect((await operator.json("POST", `/api/pending-hosts/${id}/approve`)).status).toBe(200);
    deps.clock.advance(50 * 60 * 1000);
    expect(await sweepPendingHosts(deps.db, deps.clock.now())).toBe(0);
  });
});

describe("bulk reject", () => {
  it("rejects named hosts or a whole source network over the API, one audit entry each", async () => {
    await announce("203.0.113.1", "a1");
    await announce("203.0.113.2", "a2");
    await announce("203.0.113.3", "a3");
    await announce("198.51.100.7", "b1");
    const listed = (await (await operator.request("/api/pending-hosts")).json()) as {
      pending_hosts: { id: string; hostname: string; source_network: string }[];
    };
    const byName = new Map(listed.pending_hosts.map((host) => [host.hostname, host]));
    expect(byName.get("a1")?.source_network).toBe("203.0.113.0/24");

    const b1 = byName.get("b1")?.id ?? "";
    expect((await operator.json("POST", `/api/pending-hosts/${b1}/approve`)).status).toBe(200);
    const named = await operator.json("POST", "/api/pending-hosts/reject", {
      ids: [byName.get("a1")?.id, b1],
    });
    expect(named.status).toBe(200);
    // An approved host is no longer waiting, so only a1 goes.
    expect(await named.json()).toEqual({ rejected: [byName.get("a1")?.id] });

    const network = await operator.json("POST", "/api/pending-hosts/reject", {
      source_network: "203.0.113.0/24",
    });
    expect(((await network.json()) as { rejected: string[] }).rejected.sort()).toEqual(
      [byName.get("a2")?.id, byName.get("a3")?.id].sort(),
    );
    expect(await pendingIds()).toEqual([]);
    const audits = await rejectAudits();
    expect(audits.map((row) => row.targetId).sort()).toEqual(
      ["a1", "a2", "a3"].map((name) => byName.get(name)?.id).sort(),
    );
    expect(audits.every((row) => row.actorKind === "user")).toBe(true);

    const both = await operator.json("POST", "/api/pending-hosts/reject", {
      ids: [b1],
      source_network: "203.0.113.0/24",
    });
    expect(both.status).toBe(400);
    expect(await both.json()).toMatchObject({ message: expect.stringMatching(/^ids: /) });
    expect((await operator.json("POST", "/api/pending-hosts/reject", {})).status).toBe(400);
  });

  it("rejects the checked hosts and a network from the enrol page", async () => {
    for (const [peer, name] of [
      ["203.0.113.1", "a1"],
      ["203.0.113.2", "a2"],
      ["198.51.100.7", "b1"],
      ["198.51.100.8", "b2"],
      ["2001:db8::1", "c1"],
    ] as const) {
      expect((await announce(peer, name)).status).toBe(201);
    }
    const page = await (await operator.request("/enroll")).text();
    expect(page).toContain("Reject all 2 from 203.0.113.0/24");
    const csrf = csrfFrom(page);
    const rows = [
      ...page.matchAll(/data-pending-id="([^"]+)"[\s\S]*?<td[^>]*>(?:<input[^>]*>)<\/td>\s*<td[^>]*>(\w+)/g),
    ];
    const idOf = new Map(rows.map((match) => [match[2], match[1]]));
    const checked = new URLSearchParams([
      ["_csrf", csrf],
      ["ids", idOf.get("b1") ?? ""],
      ["ids", idOf.get("c1") ?? ""],
    ]);
    const origin = new URL(deps.config.baseUrl).origin;
    const post = (body: URLSearchParams) =>
      operator.request("/enroll/pending/reject", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: origin },
        body: body.toString(),
      });
    expect((await post(checked)).status).toBe(303);
    const one = new URLSearchParams([
      ["_csrf", csrf],
      ["source_network", "203.0.113.0/24"],
    ]);
    expect((await post(one)).status).toBe(303);
    const left = (await (await operator.request("/api/pending-hosts")).json()) as {
      pending_hosts: { hostname: string }[];
    };
    expect(left.pending_hosts.map((host) => host.hostname)).toEqual(["b2"]);
    expect(await rejectAudits()).toHaveLength(4);
  });
});
