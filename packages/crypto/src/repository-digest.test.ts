import { describe, expect, it } from "vitest";
import { repositoryDigest } from "./repository-digest.js";
import { mergeUrlCredentials, repositoryLocation } from "./url-credentials.js";

describe("repositoryDigest", () => {
  it("names one repository whatever login is merged into its URL", () => {
    const url = "rest:https://backup.example.net:8000/web-01/";
    const merged = mergeUrlCredentials(url, "web-01", "login-p@ss:word");
    expect(repositoryLocation(merged)).toBe(url);
    expect(repositoryDigest(merged)).toBe(repositoryDigest(url));
    expect(repositoryDigest(url)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("tells repositories apart, and leaves forms without a host part as they are", () => {
    expect(repositoryDigest("rest:https://h/a/")).not.toBe(repositoryDigest("rest:https://h/b/"));
    expect(repositoryLocation("/srv/restic/web-01")).toBe("/srv/restic/web-01");
    expect(repositoryLocation("sftp:user@host:/srv/x")).toBe("sftp:user@host:/srv/x");
    expect(repositoryDigest("/srv/a")).not.toBe(repositoryDigest("/srv/b"));
  });
});
