import { createHash } from "node:crypto";
import { encodePublicKey, generateSigningKeyPair, hashToken, openJson, sign } from "@fleetback/crypto";
import { enrolmentTokens, hostCredentials, hosts, pendingHosts, sourceGroups } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { sweepPendingHosts } from "../enrolment/announce.js";
import { REFUSED } from "../enrolment/enrol.js";
import { enrolmentAppPerTest, HOST_INFO } from "../testing/enrolment-app.js";

const app = enrolmentAppPerTest();
/** A rest-server repository for web-01 with its user: the password is generated unless given. */
const REST_REPO = { url: "rest:http://127.0.0.1:8000/web-01/", username: "web-01" };

async function mint(body: unknown) {
  const res = await app.operator.json("POST", "/api/enrollment-tokens", body);
  expect(res.status).toBe(201);
  return (await res.json()) as {
    token: string;
    expires_at: string;
    generated_password?: string;
    generated_login_password?: string;
    htpasswd_snippet?: string;
    htpasswd_new_file_snippet?: string;
    install_command: string;
  };
}

/** The repository credentials sealed for `hostId` at enrolment, opened as bound to `boundTo`. */
async function openedRepository(hostId: string, boundTo = `host:${hostId}`) {
  const [creds] = await app.deps.db.select().from(hostCredentials).where(eq(hostCredentials.hostId, hostId));
  return openJson(app.deps.keys.secret, creds?.repoSealed ?? new Uint8Array(), boundTo);
}

describe("enrolment tokens", () => {
  it("generates a 24-byte URL-safe password with the htpasswd snippet and install command, once", async () => {
    const minted = await mint({
      repository: REST_REPO,
      initial_paths: ["/etc", "/srv/data"],
    });
    expect(minted.token).toMatch(/^fbe_/);
    expect(minted.generated_password).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(Buffer.from(minted.generated_password ?? "", "base64url")).toHaveLength(24);
    expect(minted.htpasswd_snippet).toContain("htpasswd -i -B");
    expect(minted.htpasswd_snippet).toContain("'web-01'");
    expect(minted.install_command).toBe(
      `curl -fsSL '${app.deps.config.baseUrl}/install/install.sh' | sudo bash -s -- --token '${minted.token}'`,
    );
    const [row] = await app.deps.db.select().from(enrolmentTokens);
    expect(row?.tokenHash).toBe(hashToken(minted.token));
    expect(Buffer.from(row?.sealedRepository ?? []).toString("latin1")).not.toContain(
      minted.generated_password,
    );
    const listed = await (await app.operator.request("/api/enrollment-tokens")).text();
    expect(listed).not.toContain(minted.token);
    expect(listed).not.toContain(minted.generated_password);
  });

  it("gives a generated rest-server user a login password apart from the repository password", async () => {
    const minted = await mint({
      repository: REST_REPO,
    });
    const repositoryPassword = minted.generated_password ?? "";
    const loginPassword = minted.generated_login_password ?? "";
    expect(loginPassword).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(loginPassword).not.toBe(repositoryPassword);
    // The repository server learns the login only: its htpasswd must not hold the repository's key.
    for (const snippet of [minted.htpasswd_snippet, minted.htpasswd_new_file_snippet]) {
      expect(snippet).toContain(`'${loginPassword}'`);
      expect(snippet).not.toContain(repositoryPassword);
    }
    const res = await app.agent.json("POST", "/api/agents/enroll", { token: minted.token, ...HOST_INFO });
    const { host_id } = (await res.json()) as { host_id: string };
    const opened = await openedRepository(host_id);
    expect(opened.ok && opened.value).toEqual({
      ...REST_REPO,
      password: repositoryPassword,
      login_password: loginPassword,
    });
  });

  it("keeps an operator's own password as the login too, and generates no login for other kinds", async () => {
    const given = await mint({
      repository: { ...REST_REPO, password: "Canary-Own-Pw-1" },
    });
    expect(given.generated_login_password).toBeUndefined();
    expect(given.htpasswd_snippet).toBeUndefined();
    const local = await mint({ repository: { url: "/srv/restic/web-01" } });
    expect(local.generated_password).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(local.generated_login_password).toBeUndefined();
  });

  it.each([
    [
      "a username for a repository kind that takes none",
      { repository: { url: "/srv/restic", username: "u" } },
      /^repository\.username: /,
    ],
    ["relative initial paths", { initial_paths: ["etc"] }, /^initial_paths\.0: /],
    [
      "initial paths in the agent's own directories (issue 33)",
      { initial_paths: ["/etc", "/etc/fleetback-agent"] },
      /^initial_paths: \/etc\/fleetback-agent is the agent's own directory/,
    ],
  ])("refuses %s, naming the field", async (_, body, message) => {
    const res = await app.operator.json("POST", "/api/enrollment-tokens", body);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ message: expect.stringMatching(message) });
  });
});

describe("enrol", () => {
  it("creates the host, re-seals the credentials to it, moves the paths, and burns the token", async () => {
    const minted = await mint({
      repository: { ...REST_REPO, password: "Canary-Repo-Pw-1" },
      initial_paths: ["/etc"],
    });
    const res = await app.agent.json("POST", "/api/agents/enroll", { token: minted.token, ...HOST_INFO });
    expect(res.status).toBe(201);
    const { host_id, agent_token, release_public_key } = (await res.json()) as {
      host_id: string;
      agent_token: string;
      release_public_key: string;
    };
    expect(agent_token).toMatch(/^fba_/);
    // What the agent pins to verify updates: the 32 raw bytes of the release key, base64.
    expect(Buffer.from(release_public_key, "base64")).toEqual(Buffer.from(app.deps.releaseKey.publicKey));
    const [host] = await app.deps.db.select().from(hosts).where(eq(hosts.id, host_id));
    expect(host).toMatchObject({ name: "web-01", status: "offline", agentTokenHash: hashToken(agent_token) });
    const opened = await openedRepository(host_id);
    expect(opened.ok && opened.value).toEqual({ ...REST_REPO, password: "Canary-Repo-Pw-1" });
    expect((await openedRepository(host_id, "host:someone-else")).ok).toBe(false);
    const groups = await app.deps.db.select().from(sourceGroups).where(eq(sourceGroups.hostId, host_id));
    expect(groups.map((g) => [g.name, g.includes])).toEqual([["default", ["/etc"]]]);
    const [token] = await app.deps.db.select().from(enrolmentTokens);
    expect(token).toMatchObject({ consumedByHostId: host_id, sealedRepository: null });
    expect(token?.consumedAt).not.toBeNull();
  });

  it("gives invalid, used and expired tokens one answer", async () => {
    const used = await mint({});
    expect(
      (await app.agent.json("POST", "/api/agents/enroll", { token: used.token, ...HOST_INFO })).status,
    ).toBe(201);
    const expired = await mint({});
    app.deps.clock.advance(60 * 60 * 1000 + 1);
    const answers = [];
    for (const token of ["fbe_bogus", used.token, expired.token]) {
      const res = await app.agent.json("POST", "/api/agents/enroll", { token, ...HOST_INFO });
      answers.push([res.status, ((await res.json()) as { message: string }).message]);
    }
    expect(answers).toEqual([
      [401, REFUSED],
      [401, REFUSED],
      [401, REFUSED],
    ]);
  });

  it("lets exactly one of two concurrent enrolments with one token win", async () => {
    const minted = await mint({});
    const results = await Promise.all([
      app.agent.json("POST", "/api/agents/enroll", { token: minted.token, ...HOST_INFO }),
      app.agent.json("POST", "/api/agents/enroll", { token: minted.token, ...HOST_INFO, hostname: "web-02" }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 401]);
    expect(await app.deps.db.select().from(hosts)).toHaveLength(1);
  });
});

describe("announce, approve, claim", () => {
  function claimBody(secretKey: Uint8Array, pendingId: string, at: Date) {
    const timestamp = at.toISOString();
    const signature = sign(secretKey, new TextEncoder().encode(`fleetback-claim:${pendingId}:${timestamp}`));
    return { timestamp, signature: Buffer.from(signature).toString("base64") };
  }

  it("shows the same fingerprint to both sides and hands the token out once", async () => {
    const keys = generateSigningKeyPair();
    const publicKey = encodePublicKey(keys.publicKey);
    const res = await app.agent.json("POST", "/api/agents/announce", { ...HOST_INFO, public_key: publicKey });
    expect(res.status).toBe(201);
    const announced = (await res.json()) as {
      pending_id: string;
      fingerprint: string;
      hostname_collision: boolean;
    };
    const expected = `SHA256:${createHash("sha256").update(keys.publicKey).digest("base64").replace(/=+$/, "")}`;
    expect(announced).toMatchObject({ fingerprint: expected, hostname_collision: false });
    const listed = (await (await app.operator.request("/api/pending-hosts")).json()) as {
      pending_hosts: Array<{ id: string; fingerprint: string }>;
    };
    expect(listed.pending_hosts).toEqual([
      expect.objectContaining({ id: announced.pending_id, fingerprint: expected }),
    ]);

    const claim = (secretKey: Uint8Array, at = app.deps.clock.now()) =>
      app.agent.json(
        "POST",
        `/api/agents/announce/${announced.pending_id}/claim`,
        claimBody(secretKey, announced.pending_id, at),
      );
    expect((await claim(keys.secretKey)).status).toBe(202);
    const stranger = generateSigningKeyPair();
    expect((await claim(stranger.secretKey)).status).toBe(403);
    const stale = new Date(app.deps.clock.now().getTime() - 6 * 60 * 1000);
    expect((await claim(keys.secretKey, stale)).status).toBe(403);

    const approved = await app.operator.json("POST", `/api/pending-hosts/${announced.pending_id}/approve`);
    expect(approved.status).toBe(200);
    const { host_id } = (await approved.json()) as { host_id: string };
    const claimed = await claim(keys.secretKey);
    expect(claimed.status).toBe(200);
    const { agent_token, release_public_key } = (await claimed.json()) as {
      agent_token: string;
      release_public_key: string;
    };
    expect(Buffer.from(release_public_key, "base64")).toEqual(Buffer.from(app.deps.releaseKey.publicKey));
    const [host] = await app.deps.db.select().from(hosts).where(eq(hosts.id, host_id));
    expect(host?.agentTokenHash).toBe(hashToken(agent_token));
    expect((await claim(keys.secretKey)).status).toBe(410);
    const [row] = await app.deps.db.select().from(pendingHosts);
    expect(row?.sealedAgentToken).toBeNull();
  });

  it("refuses a key that is not 32 bytes and reports hostname collisions", async () => {
    const short = await app.agent.json("POST", "/api/agents/announce", {
      ...HOST_INFO,
      public_key: Buffer.alloc(31, 7).toString("base64"),
    });
    expect(short.status).toBe(400);
    expect(await short.json()).toMatchObject({ message: expect.stringMatching(/^public_key: /) });
    const minted = await mint({});
    await app.agent.json("POST", "/api/agents/enroll", { token: minted.token, ...HOST_INFO });
    const again = await app.agent.json("POST", "/api/agents/announce", {
      ...HOST_INFO,
      public_key: encodePublicKey(generateSigningKeyPair().publicKey),
    });
    expect(await again.json()).toMatchObject({ hostname_collision: true });
  });

  it("limits announces to 10 a minute per source and 100 waiting in total", async () => {
    const statuses = [];
    for (let i = 0; i < 11; i++) {
      const res = await app.agent.json("POST", "/api/agents/announce", {
        ...HOST_INFO,
        public_key: encodePublicKey(generateSigningKeyPair().publicKey),
      });
      statuses.push(res.status);
      if (res.status === 429) {
        expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
      }
    }
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses[10]).toBe(429);

    app.deps.clock.advance(61_000);
    const now = app.deps.clock.now();
    await app.deps.db.insert(pendingHosts).values(
      Array.from({ length: 90 }, (_, i) => ({
        id: `01JD${String(i).padStart(22, "0")}`,
        hostname: `h${i}`,
        os: "linux",
        arch: "amd64",
        agentVersion: "0.1.0",
        publicKey: generateSigningKeyPair().publicKey,
        fingerprint: "SHA256:x",
        // Spread over many networks, so the global cap is what refuses the next one.
        sourceIp: `10.${i}.0.1`,
        createdAt: now,
        expiresAt: new Date(now.getTime() + 3_600_000),
      })),
    );
    const full = await app.agent.json("POST", "/api/agents/announce", {
      ...HOST_INFO,
      public_key: encodePublicKey(generateSigningKeyPair().publicKey),
    });
    expect(full.status).toBe(429);
    expect(await full.json()).toMatchObject({
      message: expect.stringMatching(/^Too many hosts are waiting/),
    });
  });

  it("sweeps announces whose hour ran out", async () => {
    await app.agent.json("POST", "/api/agents/announce", {
      ...HOST_INFO,
      public_key: encodePublicKey(generateSigningKeyPair().publicKey),
    });
    expect(await sweepPendingHosts(app.deps.db, app.deps.clock.now())).toBe(0);
    app.deps.clock.advance(60 * 60 * 1000);
    expect(await sweepPendingHosts(app.deps.db, app.deps.clock.now())).toBe(1);
    expect(await app.deps.db.select().from(pendingHosts)).toHaveLength(0);
  });
});
