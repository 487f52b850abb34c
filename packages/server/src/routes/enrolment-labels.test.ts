/**
 * Issue 37.1: where a host's first labels come from. The enrolment token's (API and form), which
 * every host enrolled with it gets; the install's (--label, in the enrol and announce requests),
 * under the token's; an announced host's, shown to the approver and given to the host on approval.
 */
import { encodePublicKey, generateSigningKeyPair } from "@fleetback/crypto";
import { describe, expect, it } from "vitest";
import { enrolmentAppPerTest, HOST_INFO } from "../testing/enrolment-app.js";
import { csrfFrom } from "../testing/http.js";
import { readHost } from "../testing/seed.js";

const app = enrolmentAppPerTest();

async function mint(labels?: Record<string, string>): Promise<string> {
  const minted = await app.operator.json("POST", "/api/enrollment-tokens", labels ? { labels } : {});
  expect(minted.status).toBe(201);
  return ((await minted.json()) as { token: string }).token;
}

async function enrol(token: string, extra: Record<string, unknown> = {}): Promise<Response> {
  return app.agent.json("POST", "/api/agents/enroll", { token, ...HOST_INFO, ...extra });
}

describe("labels at enrolment", () => {
  it("gives every host enrolled with a token its labels, over the install's own", async () => {
    const token = await mint({ env: "prod", role: "web" });
    const listed = (await (await app.operator.request("/api/enrollment-tokens")).json()) as {
      enrollment_tokens: Array<{ labels: unknown }>;
    };
    expect(listed.enrollment_tokens[0]?.labels).toEqual({ env: "prod", role: "web" });
    // The enrol page's token list says which labels a token gives.
    const page = await (await app.operator.request("/enroll")).text();
    expect(page).toMatch(
      /data-testid="token-labels">labels <span class="label-chips"[^>]*><code class="label-chip"[^>]*>env=prod<\/code><code class="label-chip"[^>]*>role=web</,
    );
    const res = await enrol(token, { labels: { env: "dev", zone: "eu-1" } });
    expect(res.status).toBe(201);
    const { host_id } = (await res.json()) as { host_id: string };
    expect((await readHost(app.deps, host_id))?.labels).toEqual({ env: "prod", role: "web", zone: "eu-1" });
  });

  it("refuses bad labels naming the field and the label, and leaves the token usable", async () => {
    const bad = await app.operator.json("POST", "/api/enrollment-tokens", { labels: { "-env": "prod" } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toContain('labels.-env: the key "-env"');

    const token = await mint({ env: "prod" });
    const refused = await enrol(token, { labels: { role: "d b" } });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toContain('labels.role: the value "d b"');
    // 32 of the install's and one of the token's are one too many together.
    const many = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`k${i}`, "v"]));
    const over = await enrol(token, { labels: many });
    expect(over.status).toBe(400);
    expect(((await over.json()) as { message: string }).message).toBe(
      "labels: has 33 labels; a host has at most 32",
    );
    expect((await enrol(token)).status).toBe(201);
  });

  it("takes the token form's labels field, and shows a bad one beside the field", async () => {
    const page = await (await app.operator.request("/enroll")).text();
    expect(page).toContain('data-testid="token-labels"');
    const csrf = csrfFrom(page);
    const bad = await app.operator.form("/enroll", { _csrf: csrf, labels: "env=prod, env=dev" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("the key &quot;env&quot; is given twice");
    const ok = await app.operator.form("/enroll", { _csrf: csrf, labels: "env=prod, role=db" });
    expect(ok.status).toBe(200);
    const token = /fbe_[A-Za-z0-9_-]+/.exec(await ok.text())?.[0] ?? "";
    const res = await enrol(token);
    expect(res.status).toBe(201);
    const { host_id } = (await res.json()) as { host_id: string };
    expect((await readHost(app.deps, host_id))?.labels).toEqual({ env: "prod", role: "db" });
  });

  it("keeps an announced host's labels for the approver and gives them to the host on approval", async () => {
    const keys = generateSigningKeyPair();
    const res = await app.agent.json("POST", "/api/agents/announce", {
      ...HOST_INFO,
      public_key: encodePublicKey(keys.publicKey),
      labels: { env: "staging" },
    });
    expect(res.status).toBe(201);
    const { pending_id } = (await res.json()) as { pending_id: string };
    const listed = (await (await app.operator.request("/api/pending-hosts")).json()) as {
      pending_hosts: Array<{ labels: unknown }>;
    };
    expect(listed.pending_hosts[0]?.labels).toEqual({ env: "staging" });
    expect(await (await app.operator.request("/enroll")).text()).toContain("env=staging");
    const approved = await app.operator.json("POST", `/api/pending-hosts/${pending_id}/approve`);
    const { host_id } = (await approved.json()) as { host_id: string };
    expect((await readHost(app.deps, host_id))?.labels).toEqual({ env: "staging" });

    const refused = await app.agent.json("POST", "/api/agents/announce", {
      ...HOST_INFO,
      public_key: encodePublicKey(generateSigningKeyPair().publicKey),
      labels: { "bad key": "x" },
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toContain(
      'labels.bad key: the key "bad key"',
    );
  });
});
