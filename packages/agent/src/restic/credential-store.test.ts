import { type CommandRun, JOB_CREDENTIALS_MAX } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { createCredentialStore } from "./credential-store.js";

const own = { url: "rest:http://host/own/", password: "own-pw" };
const kept = { url: "rest:http://keeper/full/", password: "kept-pw" };
const mirror = { url: "rest:http://offsite/m/", password: "mirror-pw" };

function command(jobId: string, extra: Partial<CommandRun> = {}): CommandRun {
  return { job_id: jobId, kind: "prune", requires_admin_creds: true, ...extra } as CommandRun;
}

describe("credentials for one job (protocol 12)", () => {
  it("serves a kept job its own set only: admin as its repository too, mirror apart", () => {
    const store = createCredentialStore();
    store.setRepository("repo", own);
    store.setRepository("admin", own);
    store.setRepository("mirror", own);
    store.setJobRepository("J1", "admin", kept);
    store.setJobRepository("J1", "mirror", mirror);
    const view = store.forCommand(command("J1", { kept: true }));
    expect(view.repository("admin")).toEqual(kept);
    expect(view.repository("repo")).toEqual(kept);
    expect(view.repository("mirror")).toEqual(mirror);
    // Never the agent's own, not for a kept job without its set.
    const bare = store.forCommand(command("J2", { kept: true }));
    expect(bare.repository("repo")).toBeUndefined();
    expect(bare.repository("admin")).toBeUndefined();
    expect(bare.repository("mirror")).toBeUndefined();
  });

  it("never lets a job's set become the agent's own, and drops it with the job", () => {
    const store = createCredentialStore();
    store.setRepository("admin", own);
    store.setJobRepository("J1", "admin", kept);
    expect(store.repository("admin")).toEqual(own);
    expect(store.forCommand(command("J1")).repository("admin")).toEqual(own);
    store.dropJob("J1");
    expect(store.forCommand(command("J1", { kept: true })).repository("admin")).toBeUndefined();
  });

  it(`holds at most ${JOB_CREDENTIALS_MAX} sets, dropping the oldest`, () => {
    const store = createCredentialStore();
    for (let i = 0; i <= JOB_CREDENTIALS_MAX; i += 1) {
      store.setJobRepository(`J${i}`, "admin", kept);
    }
    expect(store.forCommand(command("J0", { kept: true })).repository("admin")).toBeUndefined();
    expect(store.forCommand(command("J1", { kept: true })).repository("admin")).toEqual(kept);
    expect(store.forCommand(command(`J${JOB_CREDENTIALS_MAX}`, { kept: true })).repository("admin")).toEqual(
      kept,
    );
  });

  it("shows no credential when serialised", () => {
    const store = createCredentialStore();
    store.setJobRepository("J1", "admin", kept);
    expect(JSON.stringify(store.forCommand(command("J1", { kept: true })))).not.toContain("kept-pw");
  });
});
