/**
 * Issue 37.4's acceptance with the real CLI against a real server process: `fleetback export`
 * writes the fleet as YAML; `fleetback apply --dry-run` on it shows no changes; a changed file
 * shows exactly its differences, applies, and applying it again changes nothing; an invalid file
 * is refused with the path of the bad field and changes nothing. The token travels in the
 * environment only: no argv of the CLI holds it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Api, bootstrapAdmin } from "./support/api.js";
import { repoRoot } from "./support/paths.js";
import { type ExitedProcess, runToExit } from "./support/run-to-exit.js";
import { type ServerProcess, startServerProcess } from "./support/server-process.js";

const CLI = join(repoRoot, "packages", "server", "dist", "cli", "fleetback.js");

describe("fleetback export and apply", () => {
  let server: ServerProcess;
  let api: Api;
  let token = "";
  let dir = "";

  function cli(args: string[]): Promise<ExitedProcess> {
    return runToExit([CLI, ...args], {
      PATH: process.env.PATH,
      FLEETBACK_URL: server.url,
      FLEETBACK_API_TOKEN: token,
    });
  }

  beforeAll(async () => {
    server = await startServerProcess();
    api = await bootstrapAdmin(server.url, server.output());
    const minted = await api.send<{ token: string }>("POST", "/api/api-tokens", { name: "gitops" });
    expect(minted.status).toBe(201);
    token = minted.body.token;
    const tokens = await api.send<{ token: string }>("POST", "/api/enrollment-tokens", {
      labels: { env: "prod" },
    });
    for (const hostname of ["web-1", "web-2"]) {
      const res = await fetch(`${server.url}/api/agents/enroll`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Connection: "close" },
        body: JSON.stringify({
          token:
            hostname === "web-1"
              ? tokens.body.token
              : (
                  await api.send<{ token: string }>("POST", "/api/enrollment-tokens", {
                    labels: { env: "dev" },
                  })
                ).body.token,
          hostname,
          os: "linux",
          arch: "x64",
          agent_version: "0.1.0",
          tool_version: "0.18.0",
        }),
      });
      expect(res.status).toBe(201);
    }
    const policy = await api.send("POST", "/api/policies", {
      name: "prod",
      selector: "env=prod",
      spec: {
        groups: [{ name: "etc", includes: ["/etc"] }],
        schedules: [{ name: "nightly", cron: "0 2 * * *", groups: ["etc"] }],
      },
    });
    expect(policy.status).toBe(201);
    dir = mkdtempSync(join(tmpdir(), "fleetback-gitops-"));
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("round-trips: export, a dry run with no changes, an exact diff, apply, apply again", async () => {
    const file = join(dir, "fleet.yaml");
    const exported = await cli(["export", "-o", file]);
    expect(exported, exported.stderr).toMatchObject({ code: 0 });
    const yaml = readFileSync(file, "utf8");
    expect(yaml).toMatch(/^version: 1\n/);
    expect(yaml).toContain("name: web-1");
    expect(yaml).toContain("selector: env=prod");

    const same = await cli(["apply", "-f", file, "--dry-run"]);
    expect(same).toMatchObject({ code: 0, stdout: "no changes: the fleet is as the document says\n" });

    const changed = yaml.replace(/^( *)- \/etc\n/m, "$1- /etc\n$1- /srv\n").replace(/env: dev/, "env: prod");
    expect(changed).not.toBe(yaml);
    writeFileSync(file, changed);
    const dry = await cli(["apply", "-f", file, "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout.split("\n").filter(Boolean)).toEqual([
      '~ host web-2  labels.env: "dev" → "prod"',
      '~ policy prod  spec.groups["etc"].includes: ["/etc"] → ["/etc","/srv"]',
      "2 changes; dry run, nothing applied",
    ]);
    expect(
      (await api.get<{ labels: Record<string, string> }>(`/api/hosts/${await hostId("web-2")}/labels`))
        .labels,
    ).toEqual({ env: "dev" });

    const applied = await cli(["apply", "-f", file]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain("2 changes applied; 2 hosts changed");
    const groups = await api.get<{ source_groups: Array<{ includes: string[] }> }>(
      `/api/hosts/${await hostId("web-2")}/source-groups`,
    );
    expect(groups.source_groups.map((g) => g.includes)).toEqual([["/etc", "/srv"]]);
    expect(await cli(["apply", "-f", file])).toMatchObject({
      code: 0,
      stdout: "no changes: the fleet is as the document says\n",
    });
  });

  it("refuses an invalid file with the path of the bad field and changes nothing; never takes the token in argv", async () => {
    const file = join(dir, "bad.yaml");
    writeFileSync(file, (await cli(["export"])).stdout.replace("- /etc\n", "- etc\n"));
    const refused = await cli(["apply", "-f", file]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^fleetback: refused \(400\): policies\.0\.spec\.groups\.0\.includes\.0: /,
    );
    const after = await api.get<{ policies: Array<{ version: number }> }>("/api/policies");
    expect(after.policies.map((p) => p.version)).toEqual([2]);
    const noToken = await runToExit([CLI, "export", "--token", token], {
      PATH: process.env.PATH,
      FLEETBACK_URL: server.url,
    });
    expect(noToken.code).toBe(2);
  });

  async function hostId(name: string): Promise<string> {
    const { hosts } = await api.get<{ hosts: Array<{ id: string; name: string }> }>("/api/hosts");
    const host = hosts.find((h) => h.name === name);
    if (!host) {
      throw new Error(`no host ${name}`);
    }
    return host.id;
  }
});
