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
