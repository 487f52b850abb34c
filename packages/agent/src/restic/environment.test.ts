import { describe, expect, it } from "vitest";
import { buildToolEnvironment, isDroppedVariable } from "./environment.js";

describe("buildToolEnvironment", () => {
  const parent = {
    PATH: "/usr/bin",
    HOME: "/root",
    LANG: "C.UTF-8",
    HTTPS_PROXY: "http://proxy:3128",
    RESTIC_REPOSITORY: "/tmp/attacker-repo",
    RESTIC_PASSWORD: "parent-password",
    RESTIC_PASSWORD_FILE: "/etc/pw",
    RESTIC_PASSWORD_COMMAND: "cat /etc/pw",
    restic_password: "lowercase-too",
    AWS_ACCESS_KEY_ID: "AKIA...",
    AWS_SECRET_ACCESS_KEY: "secret",
    B2_ACCOUNT_KEY: "b2",
    AZURE_ACCOUNT_KEY: "az",
    GOOGLE_APPLICATION_CREDENTIALS: "/gcp.json",
    OS_PASSWORD: "openstack",
    ST_KEY: "swift",
    RCLONE_CONFIG: "/rclone.conf",
  };

  it("keeps neutral variables and only the pushed repository settings", () => {
    const env = buildToolEnvironment({
      parent,
      repository: "rest:http://u:p@host/u/",
      password: "pushed",
      cacheDir: "/var/lib/fleetback-agent/cache",
    });
    expect(env).toEqual({
      PATH: "/usr/bin",
      HOME: "/root",
      LANG: "C.UTF-8",
      HTTPS_PROXY: "http://proxy:3128",
      RESTIC_REPOSITORY: "rest:http://u:p@host/u/",
      RESTIC_PASSWORD: "pushed",
      RESTIC_CACHE_DIR: "/var/lib/fleetback-agent/cache",
      RESTIC_PROGRESS_FPS: "1",
    });
  });

  it("sets the source repository of a copy only when one is pushed, never the parent's", () => {
    const withFrom = {
      ...parent,
      RESTIC_FROM_REPOSITORY: "/tmp/attacker-source",
      RESTIC_FROM_PASSWORD: "parent-from",
      RESTIC_FROM_PASSWORD_FILE: "/etc/from-pw",
      RESTIC_FROM_PASSWORD_COMMAND: "cat /etc/from-pw",
      RESTIC_FROM_KEY_HINT: "hint",
    };
    const base = { parent: withFrom, repository: "/srv/mirror", password: "mirror", cacheDir: "/c" };
    const copy = buildToolEnvironment({ ...base, from: { repository: "/srv/repo", password: "source" } });
    expect(Object.entries(copy).filter(([name]) => name.startsWith("RESTIC_FROM_"))).toEqual([
      ["RESTIC_FROM_REPOSITORY", "/srv/repo"],
      ["RESTIC_FROM_PASSWORD", "source"],
    ]);
    expect(Object.keys(buildToolEnvironment(base)).filter((name) => name.startsWith("RESTIC_FROM_"))).toEqual(
      [],
    );
  });

  it.each([
    "RESTIC_PACK_SIZE",
    "AWS_PROFILE",
    "GOOGLE_PROJECT_ID",
    "RCLONE_BWLIMIT",
    "OS_AUTH_URL",
    "ST_AUTH",
  ])("drops %s", (name) => {
    expect(isDroppedVariable(name)).toBe(true);
  });

  it.each(["PATH", "HOME", "TMPDIR", "LC_ALL", "HTTP_PROXY", "NO_PROXY"])("keeps %s", (name) => {
    expect(isDroppedVariable(name)).toBe(false);
  });
});
