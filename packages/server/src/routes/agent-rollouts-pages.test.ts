/**
 * Issue 37.5's ring rollouts in the browser's terms, on both engines: an admin starts one from
 * the form (a canary ring, then every host left) and its page shows each ring's hosts and state;
 * when the canary's failures pass its allowance the page says the ring halted and why, and the
 * next ring never started; a refusal is said at the row it came from; a viewer reads the pages
 * but gets no form and cannot start one.
 */
import { agentRollouts } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { expect, it } from "vitest";
import { closingAfter } from "../testing/closing-after.js";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { seedHost } from "../testing/seed.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import { rolloutTick } from "../updates/ring-rollout.js";
import { recordUpdateResult } from "../updates/update-state.js";

const VERSION = "2.0.0";

runDbSuite("agent rollout pages", (getDb) => {
  async function setUp() {
    const started = await startSignedInApp({
      deps: { db: getDb() },
      users: [{ username: "vic", role: "viewer" }],
    });
    await started.deps.agentBundles.add(VERSION, new TextEncoder().encode("// fleetback-agent 2.0.0\n"));
    const ids: string[] = [];
    for (let i = 0; i < 6; i += 1) {
      const { host } = await seedHost(started.deps, {
        name: `sim-${i}`,
        agentVersion: "1.0.0",
        labels: i < 2 ? { fleet: "sim", ring: "canary" } : { fleet: "sim" },
      });
      ids.push(host.id);
    }
    return { ...started, ids };
  }

  async function startFrom(client: TestClient, baseUrl: string, fields: Record<string, string>) {
    const csrf = csrfFrom(await (await client.request("/agent-rollouts")).text());
    return client.form(
      "/agent-rollouts",
      { _csrf: csrf, ...fields },
      { Accept: "text/html", Referer: `${baseUrl}/agent-rollouts` },
    );
  }

  /** Posts the start form, expects it refused (400, the form again) and returns that page. */
  async function refusedStart(client: TestClient, baseUrl: string, fields: Record<string, string>) {
    const res = await startFrom(client, baseUrl, fields);
    expect(res.status).toBe(400);
    return res.text();
  }

  function ringCells(html: string): string[][] {
    return [...html.matchAll(/<tr data-testid="rollout-ring" data-state="([^"]+)">([\s\S]*?)<\/tr>/g)].map(
      (row) => [
        row[1] ?? "",
        ...["ring-hosts", "ring-succeeded", "ring-failed", "ring-awaiting"].map(
          (id) => new RegExp(`data-testid="${id}">(\\d+)<`).exec(row[2] ?? "")?.[1] ?? "?",
        ),
      ],
    );
  }

  it("starts a rollout from the form, shows its rings, and shows the ring that halted it", async () => {
    await closingAfter(setUp(), async ({ deps, admin, ids }) => {
      const form = await (await admin.request("/agent-rollouts")).text();
      // The rows it offers first: a canary, then 10 % of the rest, then every host left.
      expect(form).toContain('name="rings_0_selector" value="ring=canary"');
      expect(form).toContain('name="rings_1_percent" value="10"');
      expect(form).toMatch(/name="rings_2_on" value="1" checked/);
      expect(form).toMatch(/name="rings_3_on" value="1" data-testid/);

      const res = await startFrom(admin, deps.config.baseUrl, {
        version: VERSION,
        rings_0_on: "1",
        rings_0_selector: "ring=canary",
        rings_0_max_failed: "0",
        // Row 2 is left unticked: what is typed there does not count.
        rings_1_selector: "fleet=none",
        rings_2_on: "1",
        rings_2_selector: "",
        rings_2_max_failed: "1",
      });
      expect(res.status).toBe(303);
      const location = res.headers.get("Location") ?? "";
      expect(location).toMatch(/^\/agent-rollouts\/[0-9A-Z]{26}$/);
      const [row] = await deps.db.select().from(agentRollouts);
      expect(row?.rings).toEqual([
        { selector: "ring=canary", max_failed: 0 },
        { selector: "", max_failed: 1 },
      ]);

      const running = await (await admin.request(location)).text();
      expect(running).toContain('data-testid="rollout-status">Running');
      expect(ringCells(running)).toEqual([
        ["running", "2", "0", "0", "2"],
        ["not started", "0", "0", "0", "0"],
      ]);

      // One canary refuses the update: more than the none its ring allows.
      const canary = row?.ringHosts[0] ?? [];
      expect(canary.every((id) => ids.slice(0, 2).includes(id))).toBe(true);
      await recordUpdateResult(
        deps.db,
        canary[0] as string,
        { version: VERSION, status: "refused", error: "disk full" },
        deps.clock.now(),
      );
      await rolloutTick(deps);
      const halted = await (await admin.request(location)).text();
      expect(halted).toContain('data-testid="rollout-status">Halted');
      expect(ringCells(halted)).toEqual([
        ["halted", "2", "0", "1", "1"],
        ["not started", "0", "0", "0", "0"],
      ]);
      expect(halted).toMatch(
        /data-testid="rollout-halted-reason">Halted: ring 1 \(ring=canary\): 1 failed, more than the 0 it allows; 1 ring not started</,
      );
      const list = await (await admin.request("/agent-rollouts")).text();
      expect(list).toMatch(/data-testid="rollout-ring-summary" data-state="halted">[\s\S]*?ring=canary/);
      expect(list).toContain(`href="${location}"`);
    });
  });

  it("says a refused ring's problem at the row it was typed in", async () => {
    await closingAfter(setUp(), async ({ deps, admin }) => {
      const html = await refusedStart(admin, deps.config.baseUrl, {
        version: VERSION,
        rings_0_on: "1",
        rings_0_selector: "ring=canary",
        rings_2_on: "1",
        rings_2_selector: "fleet=sim",
        rings_2_percent: "150",
      });
      expect(html).toContain('data-testid="field-error-rings_2_percent"');
      expect(html).toMatch(/name="rings_2_percent"[^>]*value="150"[^>]*aria-invalid="true"/);
      // A row under "More rings" comes back unfolded with its message.
      const foldedHtml = await refusedStart(admin, deps.config.baseUrl, {
        version: VERSION,
        rings_0_on: "1",
        rings_5_on: "1",
        rings_5_max_failed: "many",
      });
      expect(foldedHtml).toContain('data-testid="field-error-rings_5_max_failed">is not a whole number<');
      expect(foldedHtml).toMatch(/<details open>\s*<summary>More rings/);
      expect(await refusedStart(admin, deps.config.baseUrl, { version: VERSION })).toContain(
        'data-testid="field-error-rings_0_on">tick at least one ring<',
      );
      expect(await deps.db.select().from(agentRollouts)).toEqual([]);
    });
  });

  it("lets a viewer read the rollouts but not start one", async () => {
    await closingAfter(setUp(), async ({ deps, admin, users }) => {
      const started = await admin.json("POST", "/api/agent-rollouts", {
        version: VERSION,
        rings: [{ selector: "ring=canary" }],
      });
      expect(started.status).toBe(201);
      const { id } = (await started.json()) as { id: string };
      const vic = users.vic as TestClient;
      const list = await vic.request("/agent-rollouts");
      expect(list.status).toBe(200);
      const html = await list.text();
      expect(html).toContain(`href="/agent-rollouts/${id}"`);
      expect(html).not.toContain('data-testid="rollout-start-form"');
      expect((await vic.request(`/agent-rollouts/${id}`)).status).toBe(200);
      const refused = await vic.form("/agent-rollouts", {
        _csrf: csrfFrom(html),
        version: VERSION,
        rings_0_on: "1",
        rings_0_selector: "",
      });
      expect(refused.status).toBe(403);
      expect(await deps.db.select().from(agentRollouts)).toHaveLength(1);
    });
  });
});
