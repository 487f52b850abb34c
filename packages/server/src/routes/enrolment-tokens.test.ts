/**
 * Unused enrolment tokens, in-process on both engines: listed (API and enrol page) with when and by
 * whom they were minted and when they expire; an operator revokes one and the token no longer
 * enrols; a used or expired token is not there to revoke. The minted page wraps the install
 * command, offers copy buttons from a served script, and gives the htpasswd line for a new file
 * (-c) and for an existing one, naming where rest-server keeps it (FLEETBACK_HTPASSWD_PATH).
 */
import type { Database } from "@fleetback/db";
import { auditLog } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { closingAfter } from "../testing/closing-after.js";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps, TestDepsOptions } from "../testing/test-deps.js";

const HOST = {
  hostname: "web-01",
  os: "linux",
  arch: "amd64",
  agent_version: "0.1.0",
  tool_version: "0.18.0",
};
const SLOW = 120_000;

interface Listed {
  id: string;
  created_at: string;
  expires_at: string;
  created_by: string | null;
  created_by_username: string | null;
  has_repository: boolean;
  initial_paths: string[];
}

async function setup(
  db: Database,
  config?: TestDepsOptions["config"],
): Promise<{
  deps: TestDeps;
  admin: TestClient;
  operator: TestClient;
  viewer: TestClient;
  agent: TestClient;
}> {
  const { deps, admin, users, anonymous } = await startSignedInApp({
    deps: { db, config },
    adminName: "root",
    users: [
      { username: "olga", role: "operator" },
      { username: "vera", role: "viewer" },
    ],
  });
  return { deps, admin, operator: users.olga, viewer: users.vera, agent: anonymous() };
}

async function mint(client: TestClient, body: unknown) {
  const res = await client.json("POST", "/api/enrollment-tokens", body);
  expect(res.status).toBe(201);
  return (await res.json()) as {
    token: string;
    htpasswd_snippet?: string;
    htpasswd_new_file_snippet?: string;
  };
}

async function listed(client: TestClient): Promise<Listed[]> {
  const res = await client.request("/api/enrollment-tokens");
  expect(res.status).toBe(200);
  return ((await res.json()) as { enrollment_tokens: Listed[] }).enrollment_tokens;
}

runDbSuite("unused enrolment tokens", (getDb) => {
  it(
    "lists unused tokens with creator and expiry, revokes one, and a revoked token enrols nothing",
    async () => {
      await closingAfter(setup(getDb()), async ({ deps, admin, operator, viewer, agent }) => {
        const used = await mint(admin, {});
        expect((await agent.json("POST", "/api/agents/enroll", { token: used.token, ...HOST })).status).toBe(
          201,
        );
        await mint(admin, {});
        deps.clock.advance(60 * 60 * 1000 + 1); // the one above expires
        const byAdmin = await mint(admin, { initial_paths: ["/etc"] });
        deps.clock.advance(1000); // ids in one millisecond need not sort by minting order
        const byOperator = await mint(operator, {});

        const tokens = await listed(operator);
        expect(tokens.map((t) => t.created_by_username)).toEqual(["olga", "root"]);
        expect(tokens[1]).toMatchObject({ initial_paths: ["/etc"], has_repository: false });
        expect(
          new Date(tokens[0]?.expires_at ?? 0).getTime() - new Date(tokens[0]?.created_at ?? 0).getTime(),
        ).toBe(60 * 60 * 1000);
        const text = JSON.stringify(tokens);
        expect(text).not.toContain(byAdmin.token);
        expect(text).not.toContain(byOperator.token);
        const adminTokenId = tokens[1]?.id ?? "";

        // Any operator may revoke any unused token (enrolment is the operator's job); a viewer not.
        expect((await viewer.json("DELETE", `/api/enrollment-tokens/${adminTokenId}`)).status).toBe(403);
        expect((await operator.json("DELETE", `/api/enrollment-tokens/${adminTokenId}`)).status).toBe(204);
        expect((await listed(operator)).map((t) => t.created_by_username)).toEqual(["olga"]);
        const refused = await agent.json("POST", "/api/agents/enroll", { token: byAdmin.token, ...HOST });
        expect(refused.status).toBe(401);
        const again = await operator.json("DELETE", `/api/enrollment-tokens/${adminTokenId}`);
        expect(again.status).toBe(404);

        const audit = await deps.db
          .select()
          .from(auditLog)
          .where(eq(auditLog.action, "enrolment_token.revoke"));
        expect(audit).toHaveLength(1);
        expect(audit[0]?.targetId).toBe(adminTokenId);
        expect(JSON.stringify(audit)).not.toContain(byAdmin.token);

        // The operator's token still enrols; after that it is used and not revocable.
        const ok = await agent.json("POST", "/api/agents/enroll", {
          token: byOperator.token,
          ...HOST,
          hostname: "web-02",
        });
        expect(ok.status).toBe(201);
        expect(await listed(operator)).toEqual([]);
        const usedId = tokens[0]?.id ?? "";
        expect((await operator.json("DELETE", `/api/enrollment-tokens/${usedId}`)).status).toBe(404);
      });
    },
    SLOW,
  );

  it(
    "shows the unused tokens on the enrol page with a revoke button that works",
    async () => {
      await closingAfter(setup(getDb()), async ({ operator }) => {
        await mint(operator, {});
        const html = await (await operator.request("/enroll")).text();
        const row = /<tr data-testid="enrolment-token-row" data-token-id="([^"]+)">([\s\S]*?)<\/tr>/.exec(
          html,
        );
        expect(row).not.toBeNull();
        const [, id, cells] = row ?? [];
        expect(cells).toContain('<td data-label="By">olga</td>');
        // Created now, expires in an hour: local time with its zone, ISO on hover.
        expect(cells).toContain(
          '<time datetime="2026-11-21T12:00:00Z" title="2026-11-21T12:00:00Z">21 Nov, 12:00 UTC</time>',
        );
        expect(cells).toContain(
          '<time datetime="2026-11-21T13:00:00Z" title="2026-11-21T13:00:00Z">21 Nov, 13:00 UTC</time>',
        );
        expect(cells).toContain(`action="/enroll/tokens/${id}/revoke"`);
        const csrf = csrfFrom(html);
        const res = await operator.form(`/enroll/tokens/${id}/revoke`, { _csrf: csrf });
        expect(res.status).toBe(303);
        const after = await (await operator.request("/enroll")).text();
        expect(after).not.toContain('data-testid="enrolment-token-row"');
        expect(after).toContain("No unused token.");
        const missing = await operator.form(
          `/enroll/tokens/${id}/revoke`,
          { _csrf: csrf },
          { "X-CSRF-Token": csrf, "HX-Request": "true" },
        );
        expect(missing.status).toBe(404);
      });
    },
    SLOW,
  );

  it(
    "renders the minted secrets wrapping, with copy buttons and both htpasswd lines",
    async () => {
      await closingAfter(setup(getDb()), async ({ operator }) => {
        const api = await mint(operator, {
          repository: { url: "rest:http://127.0.0.1:8000/web-01/", username: "web-01" },
        });
        expect(api.htpasswd_new_file_snippet).toMatch(
          /^printf '%s\\n' '[A-Za-z0-9_-]{32}' \| htpasswd -i -B -c \/var\/lib\/rest-server\/\.htpasswd 'web-01'$/,
        );
        expect(api.htpasswd_snippet).toMatch(
          /^printf '%s\\n' '[A-Za-z0-9_-]{32}' \| htpasswd -i -B \/var\/lib\/rest-server\/\.htpasswd 'web-01'$/,
        );

        const page = await operator.request("/enroll");
        const csrf = csrfFrom(await page.text());
        const res = await operator.form("/enroll", {
          _csrf: csrf,
          repository_url: "rest:http://127.0.0.1:8000/web-02/",
          repository_username: "web-02",
        });
        expect(res.status).toBe(200);
        const html = await res.text();
        expect(html).toMatch(
          /<pre class="secret wrap" id="install-command" data-testid="install-command">curl /,
        );
        expect(html).toContain('data-copy="install-command"');
        expect(html).toMatch(/<script src="\/static\/copy\.js\?v=[0-9a-f]{12}" defer><\/script>/);
        expect(html).toMatch(/htpasswd -i -B -c \/var\/lib\/rest-server\/\.htpasswd &#39;web-02&#39;/);
        expect(html).toMatch(/htpasswd -i -B \/var\/lib\/rest-server\/\.htpasswd &#39;web-02&#39;/);
        expect(html).toContain("<code>--htpasswd-file</code>");
        const script = await operator.request(
          (/src="(\/static\/copy\.js\?v=[0-9a-f]{12})"/.exec(html) ?? [])[1] ?? "",
        );
        expect(script.status).toBe(200);
        expect(await script.text()).toContain("navigator.clipboard");
      });
    },
    SLOW,
  );

  it(
    "writes the htpasswd lines for the password file FLEETBACK_HTPASSWD_PATH names (docker-compose.yml's rest-server)",
    async () => {
      await closingAfter(setup(getDb(), { htpasswdPath: "/data/.htpasswd-hosts" }), async ({ operator }) => {
        const api = await mint(operator, {
          repository: { url: "rest:https://backup.example.com:8000/web-03/", username: "web-03" },
        });
        expect(api.htpasswd_snippet).toMatch(/\| htpasswd -i -B \/data\/\.htpasswd-hosts 'web-03'$/);
        expect(api.htpasswd_new_file_snippet).toMatch(
          /\| htpasswd -i -B -c \/data\/\.htpasswd-hosts 'web-03'$/,
        );

        const csrf = csrfFrom(await (await operator.request("/enroll")).text());
        const res = await operator.form("/enroll", {
          _csrf: csrf,
          repository_url: "rest:https://backup.example.com:8000/web-04/",
          repository_username: "web-04",
        });
        const html = await res.text();
        expect(html).toContain("the lines below use <code>/data/.htpasswd-hosts</code>");
        expect(html).toMatch(/htpasswd -i -B \/data\/\.htpasswd-hosts &#39;web-04&#39;/);
        expect(html).not.toContain("/var/lib/rest-server/.htpasswd");
      });
    },
    SLOW,
  );
});
