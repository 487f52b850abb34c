import { hosts } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { AGENT_DIRS_PROTOCOL_VERSION, PROTOCOL_VERSION } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { messageOf } from "../testing/http.js";
import {
  jobsOf,
  type RestoreWizard,
  SNAP_NEW,
  startRestoreWizard,
  submitWizard,
} from "../testing/restore-wizard.js";

/** Posts a restore from SNAP_NEW to the API, as a script would. */
function postRestore(s: RestoreWizard, body: Record<string, unknown>): Promise<Response> {
  return s.client.json("POST", `/api/hosts/${s.hostId}/restore`, { snapshot_id: SNAP_NEW, ...body });
}

runDbSuite("restore wizard: invalid input", (getDb) => {
  it("re-renders every Errors row with the operator's input kept and sends nothing", async () => {
    const s = await startRestoreWizard(getDb());
    const cases: Array<{ fields: Array<[string, string]>; field: string; kept: string[] }> = [
      {
        fields: [
          ["snapshot_id", ""],
          ["paths", "/srv/lab/src/tree/docs"],
          ["in_place", "false"],
          ["target_dir", "/srv/restore-here"],
        ],
        field: "snapshot_id",
        kept: ['value="/srv/lab/src/tree/docs"', 'value="/srv/restore-here"'],
      },
      {
        fields: [
          ["snapshot_id", "deadbeef"],
          ["paths", "/srv/lab/src/tree/docs"],
          ["in_place", "false"],
          ["target_dir", "/srv/x"],
        ],
        field: "snapshot_id",
        kept: ['value="deadbeef"', 'value="/srv/lab/src/tree/docs"'],
      },
      {
        fields: [
          ["snapshot_id", SNAP_NEW],
          ["paths", ""],
          ["in_place", "false"],
          ["target_dir", "/srv/restore-here"],
        ],
        field: "paths",
        kept: ['value="/srv/restore-here"'],
      },
      {
        fields: [
          ["snapshot_id", SNAP_NEW],
          ["paths", "/srv/lab/src/tree/docs"],
          ["paths", "etc/hosts"],
          ["in_place", "false"],
          ["target_dir", "/srv/x"],
        ],
        field: "paths",
        kept: ['value="etc/hosts"', 'value="/srv/lab/src/tree/docs"'],
      },
      {
        fields: [
          ["snapshot_id", SNAP_NEW],
          ["paths", "/srv/lab/src/tree/docs"],
          ["in_place", "true"],
          ["confirm_hostname", "web-2"],
        ],
        field: "confirm_hostname",
        kept: ['value="web-2"', 'value="true" checked'],
      },
      {
        fields: [
          ["snapshot_id", SNAP_NEW],
          ["paths", "/srv/lab/src/tree/docs"],
          ["in_place", "false"],
          ["target_dir", "restore/here"],
        ],
        field: "target_dir",
        kept: ['value="restore/here"'],
      },
      {
        fields: [
          ["snapshot_id", SNAP_NEW],
          ["paths", "/srv/lab/src/tree/docs"],
          ["in_place", "false"],
          ["target_dir", "$TMPDIR/restore"],
        ],
        field: "target_dir",
        kept: ['value="$TMPDIR/restore"'],
      },
      {
        fields: [
          ["snapshot_id", SNAP_NEW],
          ["paths", "/srv/lab/src/tree/docs"],
          ["in_place", "false"],
          ["target_dir", "$HOME/$USER/restore"],
        ],
        field: "target_dir",
        kept: ['value="$HOME/$USER/restore"'],
      },
      {
        fields: [
          ["snapshot_id", SNAP_NEW],
          ["paths", "/srv/lab/src/tree/docs"],
          ["in_place", "false"],
          ["target_dir", "~user/restore"],
        ],
        field: "target_dir",
        kept: ['value="~user/restore"'],
      },
    ];
    for (const { fields, field, kept } of cases) {
      for (const action of ["review", "restore"]) {
        const res = await submitWizard(s, [...fields, ["action", action]]);
        const label = `${JSON.stringify(fields)} ${action}`;
        expect(res.status, label).toBe(400);
        const html = await res.text();
        expect(html, label).toContain(`data-testid="restore-error" data-field="${field}"`);
        expect(html, label).toContain('data-testid="restore-form"');
        for (const fragment of kept) {
          expect(html, label).toContain(fragment);
        }
      }
    }
    expect(s.agent.frames).toEqual([]);
    expect(await jobsOf(s)).toEqual([]);
  });

  it("refuses targets in or over the agent's own directories and / (page and API), input kept", async () => {
    const s = await startRestoreWizard(getDb());
    const refused = [
      "/etc/fleetback-agent",
      "/var/lib/fleetback-agent/",
      "/var/lib/fleetback-agent/update",
      "/opt/fleetback-agent",
      "/opt//fleetback-agent/x/..",
      "/tmp/../etc/fleetback-agent",
      "/var/lib",
      "/",
    ];
    for (const target of refused) {
      const res = await submitWizard(s, [
        ["snapshot_id", SNAP_NEW],
        ["paths", "/srv/lab/src/tree/docs"],
        ["in_place", "false"],
        ["target_dir", target],
        ["action", "restore"],
      ]);
      expect(res.status, target).toBe(400);
      const html = await res.text();
      expect(html, target).toContain('data-testid="restore-error" data-field="target_dir"');
      expect(html, target).toContain(`value="${target}"`);
      const api = await postRestore(s, {
        paths: ["/srv/lab/src/tree/docs"],
        in_place: false,
        target_dir: target,
      });
      expect(api.status, target).toBe(400);
      expect(await messageOf(api), target).toMatch(/^target_dir: /);
    }
    // A path that reaches the state dir from a harmless-looking target, and an in-place path over it.
    const deep = await postRestore(s, {
      paths: ["/fleetback-agent/agent.json"],
      in_place: false,
      target_dir: "/etc",
    });
    expect(deep.status).toBe(400);
    const inPlace = await postRestore(s, {
      paths: ["/var/lib/fleetback-agent/update/boot.json"],
      in_place: true,
      confirm_hostname: "web-1",
    });
    expect(inPlace.status).toBe(400);
    expect(await messageOf(inPlace)).toMatch(/^paths: /);
    expect(s.agent.frames).toEqual([]);
    expect(await jobsOf(s)).toEqual([]);
  });

  it("refuses paths in the agent's own directories, also those its hello named, wherever they go (issue 33)", async () => {
    const s = await startRestoreWizard(getDb());
    await s.deps.db
      .update(hosts)
      .set({ agentDirs: ["/srv/lab/src/tree/.state/"], protocolVersion: PROTOCOL_VERSION })
      .where(eq(hosts.id, s.hostId));
    const restore = (paths: string[], target_dir = "$HOME/fleetback-restore/<job-id>/") =>
      postRestore(s, {
        paths,
        in_place: false,
        target_dir,
      });
    for (const [path, dir] of [
      ["/etc/fleetback-agent/agent.json", "/etc/fleetback-agent"],
      ["/etc/fleetback-agent", "/etc/fleetback-agent"],
      ["/var/lib/fleetback-agent/", "/var/lib/fleetback-agent"],
      ["/opt/fleetback-agent/../fleetback-agent/current.mjs", "/opt/fleetback-agent"],
      ["/srv/lab/src/tree/.state/update/boot.json", "/srv/lab/src/tree/.state"],
    ] as const) {
      for (const target of ["$HOME/fleetback-restore/<job-id>/", "/srv/restored"]) {
        const res = await restore(["/srv/lab/src/tree/docs", path], target);
        expect(res.status, path).toBe(400);
        expect(await messageOf(res), path).toBe(
          `paths: ${path} is the agent's own directory ${dir} or lies inside it, which holds the host's agent token and is never backed up, restored, listed or downloaded`,
        );
      }
    }
    const page = await submitWizard(s, [
      ["snapshot_id", SNAP_NEW],
      ["paths", "/etc/fleetback-agent/agent.json"],
      ["in_place", "false"],
      ["target_dir", "$HOME/fleetback-restore/<job-id>/"],
      ["action", "review"],
    ]);
    expect(page.status).toBe(400);
    expect(await page.text()).toContain('data-testid="restore-error" data-field="paths"');
    expect(s.agent.frames).toEqual([]);
    expect(await jobsOf(s)).toEqual([]);

    // A folder above one: a protocol-12 agent restores around it; an older one would hand it over,
    // when the snapshot holds it (this one backed up /srv/lab/src/tree only).
    expect((await restore(["/srv/lab"])).status).toBe(201);
    await s.deps.db
      .update(hosts)
      .set({ protocolVersion: AGENT_DIRS_PROTOCOL_VERSION - 1 })
      .where(eq(hosts.id, s.hostId));
    const older = await restore(["/srv/lab"]);
    expect(older.status).toBe(400);
    expect(await messageOf(older)).toBe(
      `paths: /srv/lab holds the agent's own directory /srv/lab/src/tree/.state, which this host's agent (protocol ${AGENT_DIRS_PROTOCOL_VERSION - 1}) does not leave out; update the agent to protocol ${AGENT_DIRS_PROTOCOL_VERSION}, or pick the paths around it`,
    );
    expect((await restore(["/"])).status).toBe(400);
    expect((await restore(["/etc"])).status).toBe(201);
  });
});
