import { hostCredentials } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createRecordingConnection } from "../testing/recording-connection.js";
import { bindCredentials, seedAuditContext, seedHost } from "../testing/seed.js";
import { createTestDeps } from "../testing/test-deps.js";
import { mergeCredentialPatch, readHostCredentials, updateHostCredentials } from "./credentials.js";

describe("mergeCredentialPatch", () => {
  const stored = { url: "rest:https://b.example/h", username: "h", password: "old" };

  it("keeps stored fields the patch leaves out", () => {
    expect(mergeCredentialPatch(stored, { password: "new" })).toEqual({
      ok: true,
      credentials: { ...stored, password: "new" },
    });
  });

  it("removes the username on null or empty", () => {
    expect(mergeCredentialPatch(stored, { username: null })).toEqual({
      ok: true,
      credentials: { url: stored.url, password: "old" },
    });
    expect(mergeCredentialPatch(stored, { username: "" })).toMatchObject({
      credentials: { url: stored.url },
    });
  });

  it("keeps, replaces and removes a login password, which goes with the username", () => {
    const withLogin = { ...stored, login_password: "login" };
    expect(mergeCredentialPatch(withLogin, { password: "new" })).toMatchObject({
      credentials: { ...withLogin, password: "new" },
    });
    expect(mergeCredentialPatch(stored, { login_password: "l2" })).toMatchObject({
      credentials: { ...stored, login_password: "l2" },
    });
    for (const removal of [null, ""]) {
      expect(mergeCredentialPatch(withLogin, { login_password: removal })).toEqual({
        ok: true,
        credentials: stored,
      });
    }
    expect(mergeCredentialPatch(withLogin, { username: null })).toEqual({
      ok: true,
      credentials: { url: stored.url, password: "old" },
    });
    expect(mergeCredentialPatch({ url: stored.url, password: "old" }, { login_password: "l3" })).toEqual({
      ok: false,
      errors: ["login_password: needs a username, whose login on the repository server it is"],
    });
  });

  it("names every missing or empty field", () => {
    expect(mergeCredentialPatch(undefined, { username: "x" })).toEqual({
      ok: false,
      errors: [
        "url: required, as no repository URL is stored yet",
        "password: required, as no password is stored yet",
      ],
    });
    expect(mergeCredentialPatch(stored, { url: "", password: "" })).toEqual({
      ok: false,
      errors: ["url: must not be empty", "password: must not be empty"],
    });
  });
});

runDbSuite("host credentials", (getDb) => {
  it("merges an edit with the stored slot, stores it sealed and pushes it to a connected agent", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const audit = await seedAuditContext(deps);
    const { host } = await seedHost(deps);
    await bindCredentials(deps, host.id, {
      repo: { url: "rest:https://b.example/h", username: "h", password: "old" },
    });
    const connection = createRecordingConnection(host.id);
    deps.hub.register(connection);

    const result = await updateHostCredentials(deps, audit, host.id, "repo", { password: "new-secret" });
    const expected = { url: "rest:https://b.example/h", username: "h", password: "new-secret" };
    expect(result).toEqual({ ok: true, credentials: expected, pushed: true });
    expect(connection.frames.map((frame) => frame.payload)).toEqual([{ slot: "repo", repository: expected }]);
    expect(await readHostCredentials(deps, host.id)).toEqual({ repo: expected });
    const [row] = await deps.db.select().from(hostCredentials).where(eq(hostCredentials.hostId, host.id));
    expect(Buffer.from(row?.repoSealed ?? new Uint8Array()).toString("latin1")).not.toContain("new-secret");
  });

  it("seals and opens a login password with the slot, never readable in the row", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const { host } = await seedHost(deps);
    const repo = {
      url: "rest:https://b.example/h",
      username: "h",
      password: "pw-1",
      login_password: "Login-Canary-31",
    };
    await bindCredentials(deps, host.id, { repo });
    expect(await readHostCredentials(deps, host.id)).toEqual({ repo });
    const [row] = await deps.db.select().from(hostCredentials).where(eq(hostCredentials.hostId, host.id));
    expect(Buffer.from(row?.repoSealed ?? new Uint8Array()).toString("latin1")).not.toContain(
      "Login-Canary-31",
    );
  });

  it("keeps both of two concurrent edits of different fields", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const audit = await seedAuditContext(deps);
    const { host } = await seedHost(deps);
    const first = await updateHostCredentials(deps, audit, host.id, "admin", {
      url: "s3:https://s3.example/b",
      password: "p",
    });
    expect(first).toMatchObject({ ok: true, pushed: false });
    await Promise.all([
      updateHostCredentials(deps, audit, host.id, "admin", { username: "root" }),
      updateHostCredentials(deps, audit, host.id, "admin", { password: "rotated" }),
    ]);
    expect(await readHostCredentials(deps, host.id)).toEqual({
      admin: { url: "s3:https://s3.example/b", username: "root", password: "rotated" },
    });
  });

  it("answers an unknown host and an incomplete first edit as values", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const audit = await seedAuditContext(deps);
    const { host } = await seedHost(deps);
    expect(
      await updateHostCredentials(deps, audit, "01JD0000000000000000000000", "repo", { password: "x" }),
    ).toEqual({
      ok: false,
      reason: "host_not_found",
    });
    expect(await updateHostCredentials(deps, audit, host.id, "repo", { password: "x" })).toMatchObject({
      ok: false,
      reason: "invalid",
    });
  });

  it("skips and logs, without its content, a slot sealed for another host", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const audit = await seedAuditContext(deps);
    const { host } = await seedHost(deps);
    const other = await seedHost(deps, { name: "other" });
    await bindCredentials(deps, other.host.id, {
      repo: { url: "rest:https://b.example/o", password: "foreign-pw" },
    });
    const [foreign] = await deps.db
      .select()
      .from(hostCredentials)
      .where(eq(hostCredentials.hostId, other.host.id));
    await deps.db
      .insert(hostCredentials)
      .values({ hostId: host.id, repoSealed: foreign?.repoSealed ?? null });

    expect(await readHostCredentials(deps, host.id)).toEqual({});
    const lines = deps.logLines.join("\n");
    expect(lines).toContain("stored credentials cannot be opened");
    expect(lines).not.toContain("foreign-pw");
    // An edit can still replace it, given the whole record.
    const replaced = await updateHostCredentials(deps, audit, host.id, "repo", {
      url: "rest:https://b.example/h",
      password: "mine",
    });
    expect(replaced).toMatchObject({ ok: true });
  });
});
