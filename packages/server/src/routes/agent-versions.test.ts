import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fingerprint, parsePublicKey, verifySignature } from "@fleetback/crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadAgentBundle } from "../agent-artifacts/agent-bundle.js";
import { BUNDLE_FILE } from "../agent-artifacts/bundle-store.js";
import { SEA_FILE } from "../agent-artifacts/sea-store.js";
import { sha256Hex } from "../agent-artifacts/signed-file.js";
import { createApp } from "../app.js";
import type { TestClient } from "../testing/http.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";

let deps: TestDeps;
let viewer: TestClient;
const newer = new TextEncoder().encode("#!/usr/bin/env node\nconsole.log('agent 9.9.9');\n");
const sea = new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 1, 2, 3, 4, 5]);

beforeAll(async () => {
  const started = await startSignedInApp({
    adminName: "walker",
    users: [{ username: "watcher", role: "viewer" }],
  });
  deps = started.deps;
  viewer = started.users.watcher;
  deps.clock.advance(60_000);
  await deps.agentBundles.add("9.9.9", newer);
  await deps.agentBundles.addSea("9.9.9", "linux", "x64", sea);
});
afterAll(async () => {
  await deps.close();
});

/** Fetches `path`, expecting it served whole with `sha256` and a signature by the release key. */
async function fetchSigned(path: string, sha256: string) {
  const res = await createApp(deps).request(path);
  expect(res.status).toBe(200);
  const body = new Uint8Array(await res.arrayBuffer());
  expect(res.headers.get("X-Fleetback-Sha256")).toBe(sha256);
  const signature = Buffer.from(res.headers.get("X-Fleetback-Signature") ?? "", "base64");
  expect(verifySignature(deps.releaseKey.publicKey, body, signature)).toBe(true);
  return { res, body, signature };
}

describe("GET /install/agent/:version", () => {
  it("serves a stored version that is not the shipped one, with its hash and a verifying signature", async () => {
    const { body, signature } = await fetchSigned("/install/agent/9.9.9", sha256Hex(newer));
    expect(body).toEqual(newer);
    const modified = Uint8Array.from(body);
    modified[0] = 0x20;
    expect(verifySignature(deps.releaseKey.publicKey, modified, signature)).toBe(false);
  });

  it("serves the shipped bundle signed too", async () => {
    const shipped = await loadAgentBundle();
    await fetchSigned(`/install/agent/${shipped.version}`, shipped.sha256);
  });

  it("answers 404 for an unknown or malformed version", async () => {
    const app = createApp(deps);
    expect((await app.request("/install/agent/0.0.0-unknown")).status).toBe(404);
    expect((await app.request("/install/agent/..%2Fsecret.key")).status).toBe(404);
  });

  it("refuses to serve a stored bundle whose bytes no longer match, and logs why", async () => {
    await deps.agentBundles.add("6.6.6", new TextEncoder().encode("#!/usr/bin/env node\n// good\n"));
    await writeFile(join(deps.agentBundles.dir, "6.6.6", BUNDLE_FILE), "#!/usr/bin/env node\n// evil\n");
    const res = await createApp(deps).request("/install/agent/6.6.6");
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).toContain("failed its integrity check");
    expect(text).not.toContain(deps.agentBundles.dir);
    expect(deps.logLines.some((line) => line.includes("integrity check") && line.includes("6.6.6"))).toBe(
      true,
    );
  });
});

describe("GET /install/agent/:version/:platform", () => {
  it("serves a stored single executable with its hash and a verifying signature", async () => {
    const { res, body } = await fetchSigned("/install/agent/9.9.9/linux-x64", sha256Hex(sea));
    expect(res.headers.get("Content-Type")).toBe("application/octet-stream");
    expect(res.headers.get("Content-Disposition")).toContain("fleetback-agent-9.9.9-linux-x64");
    expect(body).toEqual(sea);
  });

  it("answers 404 for a platform, version or shape it does not hold", async () => {
    const app = createApp(deps);
    expect((await app.request("/install/agent/9.9.9/win32-x64")).status).toBe(404);
    expect((await app.request("/install/agent/1.2.3/linux-x64")).status).toBe(404);
    expect((await app.request("/install/agent/9.9.9/linux")).status).toBe(404);
    expect((await app.request("/install/agent/9.9.9/..%2F..")).status).toBe(404);
  });

  it("refuses to serve a single executable whose bytes changed on disk", async () => {
    await deps.agentBundles.add("6.6.7", newer);
    await deps.agentBundles.addSea("6.6.7", "linux", "arm64", sea);
    await writeFile(join(deps.agentBundles.dir, "6.6.7", "sea-linux-arm64", SEA_FILE), "tampered");
    const res = await createApp(deps).request("/install/agent/6.6.7/linux-arm64");
    expect(res.status).toBe(500);
    expect(await res.text()).toContain("failed its integrity check");
  });
});

describe("GET /api/agent-versions", () => {
  it("lists the stored bundles newest first", async () => {
    const shipped = await loadAgentBundle();
    const res = await viewer.request("/api/agent-versions");
    expect(res.status).toBe(200);
    const list = (await res.json()) as { version: string }[];
    const versions = list.map((entry) => entry.version);
    expect(versions.indexOf("9.9.9")).toBeLessThan(versions.indexOf(shipped.version));
    expect(list).toContainEqual({
      version: "9.9.9",
      sha256: sha256Hex(newer),
      size: newer.length,
      created_at: "2026-11-21T12:01:00.000Z",
      sea: [{ os: "linux", arch: "x64", sha256: sha256Hex(sea), size: sea.length }],
    });
    expect(list).toContainEqual({
      version: shipped.version,
      sha256: shipped.sha256,
      size: shipped.body.length,
      created_at: "2026-11-21T12:00:00.000Z",
      sea: [],
    });
  });
});

describe("GET /api/release-key", () => {
  it("shows the public half of the release key and its fingerprint", async () => {
    const res = await viewer.request("/api/release-key");
    expect(res.status).toBe(200);
    const body = (await res.json()) as { public_key: string; fingerprint: string };
    const parsed = parsePublicKey(body.public_key);
    expect(parsed).toEqual({ ok: true, key: deps.releaseKey.publicKey });
    expect(body.fingerprint).toBe(fingerprint(deps.releaseKey.publicKey));
    expect(Object.keys(body).sort()).toEqual(["fingerprint", "public_key"]);
  });
});
