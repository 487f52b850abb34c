import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../app.js";
import { restoreOrderPublicKey } from "../restore/restore-order.js";
import { createTestDeps, type TestDeps } from "../testing/test-deps.js";

let deps: TestDeps;
beforeAll(async () => {
  deps = await createTestDeps();
});
afterAll(async () => {
  await deps.close();
});

describe("install routes", () => {
  it("serves a bash installer for this server that pins the bundle it serves", async () => {
    const app = createApp(deps);
    const script = await app.request("/install/install.sh");
    expect(script.status).toBe(200);
    const text = await script.text();
    expect(text).toContain(deps.config.baseUrl);
    const version = /readonly AGENT_VERSION='([^']+)'/.exec(text)?.[1];
    const sha = /([0-9a-f]{64})/.exec(text)?.[1];
    expect(version).toBeDefined();
    const bundle = await app.request(`/install/agent/${version}`);
    expect(bundle.status).toBe(200);
    const body = Buffer.from(await bundle.arrayBuffer());
    expect(createHash("sha256").update(body).digest("hex")).toBe(sha);
    // The first line names the version (the banner import-release checks).
    expect(body.subarray(0, 128).toString().split("\n")[0]).toBe(`// fleetback-agent ${version}`);
    expect((await app.request("/install/agent/0.0.0-other")).status).toBe(404);
    const syntax = spawnSync("bash", ["-n"], { input: text });
    expect(syntax.status).toBe(0);
  });

  it("pins the server's restore-order key in both restore helper units (issue 34)", async () => {
    const text = await (await createApp(deps).request("/install/install.sh")).text();
    const key = restoreOrderPublicKey(deps.keys);
    expect(text.split(`Environment=FLEETBACK_RESTORE_ORDER_KEY=${key}`)).toHaveLength(3);
  });

  it("offers the single executables stored for the shipped version to hosts without node", async () => {
    const app = createApp(deps);
    const before = await (await app.request("/install/install.sh")).text();
    expect(before).toContain("readonly SEA_ARTEFACTS=()");
    const version = /readonly AGENT_VERSION='([^']+)'/.exec(before)?.[1] ?? "";
    const executable = Buffer.from("a single executable stands in here");
    const { info } = await deps.agentBundles.addSea(version, "linux", "arm64", executable);
    const after = await (await app.request("/install/install.sh")).text();
    expect(after).toContain(`linux-arm64=${info.sha256}`);
    const served = await app.request(`/install/agent/${version}/linux-arm64`);
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer()).equals(executable)).toBe(true);
  });
});
