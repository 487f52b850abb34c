import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { localRepositoryPath, localRepositoryProblem, readOnlyRepositoryError } from "./local-repository.js";

describe("local repositories", () => {
  it.each([
    { url: "/srv/restic", path: "/srv/restic" },
    { url: "local:/mnt/usb", path: "/mnt/usb" },
    { url: "rest:https://h/repo", path: undefined },
    { url: "sftp:host:/srv", path: undefined },
    { url: "s3:s3.amazonaws.com/bucket", path: undefined },
  ])("knows a local path from the other backends: $url", ({ url, path }) => {
    expect(localRepositoryPath(url)).toBe(path);
  });

  it("finds no problem where the agent can write, even before the directory exists", async () => {
    const dir = mkdtempSync(join(tmpdir(), "local-repo-"));
    expect(await localRepositoryProblem(join(dir, "not", "yet"))).toBeUndefined();
    expect(await localRepositoryProblem("rest:http://127.0.0.1:1/x")).toBeUndefined();
  });

  it("names the installer option and the drop-in in one sentence", () => {
    expect(readOnlyRepositoryError("/srv/restic")).toBe(
      "the repository /srv/restic is on a path this agent may not write (its systemd unit keeps everything but its own directories read-only): re-run the installer with --repo-path /srv/restic, or add ReadWritePaths=/srv/restic with systemctl edit fleetback-agent",
    );
  });
  // EROFS itself needs a read-only mount: e2e/src/agent-sandbox.test.ts runs it under the unit's sandbox.
});
