/**
 * A token minted with an expiring API token expires no later than that token: API tokens asking
 * for "never" or for later, and enrolment tokens (one hour) minted near the parent's end, get the
 * parent's expiry, in the answer and in the stored row.
 */
import { apiTokens, enrolmentTokens } from "@fleetback/db";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { runServerSuite } from "../testing/server-suite.js";
import { signInOn } from "../testing/signed-in-app.js";

const MINUTE = 60 * 1000;

runServerSuite("tokens minted with an expiring API token", (server) => {
  const origin = () => new URL(server.deps.config.baseUrl).origin;
  async function call(path: string, init: { auth: string; body?: unknown }): Promise<Response> {
    const bearer = init.auth.startsWith("fbu_");
    return fetch(`${server.url}${path}`, {
      method: init.body === undefined ? "GET" : "POST",
      headers: {
        "Content-Type": "application/json",
        ...(bearer ? { Authorization: `Bearer ${init.auth}` } : { Cookie: init.auth, Origin: origin() }),
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
  }

  async function mintApiToken(auth: string, body: { name: string; expires_at?: string }) {
    const res = await call("/api/api-tokens", { auth, body });
    expect(res.status).toBe(201);
    const answer = (await res.json()) as {
      token: string;
      api_token: { id: string; expires_at: string | null };
    };
    const [row] = await server.deps.db.select().from(apiTokens).where(eq(apiTokens.id, answer.api_token.id));
    return { token: answer.token, answered: answer.api_token.expires_at, stored: row?.expiresAt ?? null };
  }

  it("caps API and enrolment tokens at the parent's expiry", async () => {
    const session = (await signInOn(server.deps)).admin.cookie ?? "";
    const now = server.deps.clock.now().getTime();
    const parentEnd = new Date(now + 30 * MINUTE).toISOString();
    const parent = await mintApiToken(session, { name: "parent", expires_at: parentEnd });
    expect(parent.answered).toBe(parentEnd);

    const never = await mintApiToken(parent.token, { name: "asks-never" });
    expect([never.answered, never.stored?.toISOString()]).toEqual([parentEnd, parentEnd]);
    const later = await mintApiToken(parent.token, { name: "asks-later", expires_at: "2030-01-01" });
    expect([later.answered, later.stored?.toISOString()]).toEqual([parentEnd, parentEnd]);
    const sooner = new Date(now + 10 * MINUTE).toISOString();
    const earlier = await mintApiToken(parent.token, { name: "asks-sooner", expires_at: sooner });
    expect([earlier.answered, earlier.stored?.toISOString()]).toEqual([sooner, sooner]);
    // The grandchild of an expiring token is capped too, and a session is not capped at all.
    const grandchild = await mintApiToken(never.token, { name: "grandchild" });
    expect(grandchild.answered).toBe(parentEnd);
    expect((await mintApiToken(session, { name: "by-session" })).answered).toBeNull();

    const enrol = await call("/api/enrollment-tokens", { auth: parent.token, body: {} });
    expect(enrol.status).toBe(201);
    const minted = (await enrol.json()) as { expires_at: string };
    expect(minted.expires_at).toBe(parentEnd);
    const rows = await server.deps.db.select().from(enrolmentTokens);
    expect(rows.map((row) => row.expiresAt.toISOString())).toEqual([parentEnd]);
    const bySession = await call("/api/enrollment-tokens", { auth: session, body: {} });
    expect(((await bySession.json()) as { expires_at: string }).expires_at).toBe(
      new Date(now + 60 * MINUTE).toISOString(),
    );
  });
});
