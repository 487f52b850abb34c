import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { acceptsUrlCredentials, mergeUrlCredentials, redactUrl } from "./url-credentials.js";

describe("mergeUrlCredentials", () => {
  it.each([
    ["rest:http://127.0.0.1:53105/alice/", "rest:http://alice:alicepw@127.0.0.1:53105/alice/"],
    ["rest:https://backup.example.com/alice/", "rest:https://alice:alicepw@backup.example.com/alice/"],
    ["rest:http://[::1]:8000/", "rest:http://alice:alicepw@[::1]:8000/"],
    ["rest:http://host:8000", "rest:http://alice:alicepw@host:8000"],
    ["rest:http://host?x=1", "rest:http://alice:alicepw@host?x=1"],
    ["s3:https://s3.example.com/bucket/prefix", "s3:https://alice:alicepw@s3.example.com/bucket/prefix"],
    ["s3:http://minio:9000/bucket", "s3:http://alice:alicepw@minio:9000/bucket"],
  ])("puts user:password@ before the host of %s", (url, merged) => {
    expect(acceptsUrlCredentials(url)).toBe(true);
    expect(mergeUrlCredentials(url, "alice", "alicepw")).toBe(merged);
  });

  it.each([
    "/srv/restic-repo",
    "relative/repo",
    "C:\\restic\\repo",
    "sftp:bob@backup.example.com:/srv/restic-repo",
    "sftp://bob@backup.example.com:22//srv/restic-repo",
    "b2:bucket:path",
    "azure:container:/path",
    "gs:bucket:/path",
    "swift:container:/path",
    "rclone:remote:path",
    "s3:s3.amazonaws.com/bucket",
    "rest:http+unix:///run/rest.sock:/alice/",
    "rest:http:///no-host",
    "REST:http://host/",
    "http://host/",
  ])("leaves %s untouched", (url) => {
    expect(acceptsUrlCredentials(url)).toBe(false);
    expect(mergeUrlCredentials(url, "alice", "alicepw")).toBe(url);
  });

  it("percent-encodes special and non-ASCII characters in both fields", () => {
    expect(mergeUrlCredentials("rest:http://host/", "al@ce:x", "p@ss:w/rd?#%é")).toBe(
      "rest:http://al%40ce%3Ax:p%40ss%3Aw%2Frd%3F%23%25%C3%A9@host/",
    );
  });

  it("writes user@ for a username without password, and :password@ for the reverse", () => {
    expect(mergeUrlCredentials("rest:http://host/", "alice")).toBe("rest:http://alice@host/");
    expect(mergeUrlCredentials("rest:http://host/", undefined, "pw")).toBe("rest:http://:pw@host/");
    expect(mergeUrlCredentials("rest:http://host/", "", "")).toBe("rest:http://host/");
    expect(mergeUrlCredentials("rest:http://host/")).toBe("rest:http://host/");
  });

  it("replaces existing userinfo field by field; omitted or empty fields keep the URL's", () => {
    const url = "rest:http://bob:old%40pw@host/bob/";
    expect(mergeUrlCredentials(url, "alice", "new")).toBe("rest:http://alice:new@host/bob/");
    expect(mergeUrlCredentials(url, "alice")).toBe("rest:http://alice:old%40pw@host/bob/");
    expect(mergeUrlCredentials(url, undefined, "new")).toBe("rest:http://bob:new@host/bob/");
    expect(mergeUrlCredentials(url, "", "")).toBe(url);
    expect(mergeUrlCredentials("rest:http://bob@host/", undefined, "pw")).toBe("rest:http://bob:pw@host/");
  });

  it("takes the host after the last @ of the authority, and ignores @ in the path", () => {
    expect(mergeUrlCredentials("rest:http://a@b:c@host/x", "alice", "pw")).toBe(
      "rest:http://alice:pw@host/x",
    );
    expect(mergeUrlCredentials("rest:http://host/path@x/", "alice", "pw")).toBe(
      "rest:http://alice:pw@host/path@x/",
    );
  });

  it("throws URIError for a password that is not well-formed Unicode", () => {
    expect(() => mergeUrlCredentials("rest:http://host/", "alice", "bad\uD800pw")).toThrow(URIError);
  });
});

describe("redactUrl", () => {
  it("prints user:***@ like restic does", () => {
    expect(redactUrl("rest:http://alice:alicepw@127.0.0.1:53105/alice/")).toBe(
      "rest:http://alice:***@127.0.0.1:53105/alice/",
    );
  });

  it("redacts every URL inside a longer line and leaves the rest alone", () => {
    expect(
      redactUrl(
        "Fatal: create repository at rest:http://alice:pw1@h/alice/ failed; s3:https://k:pw2@s3/b ok",
      ),
    ).toBe("Fatal: create repository at rest:http://alice:***@h/alice/ failed; s3:https://k:***@s3/b ok");
    expect(redactUrl("a http://u:p@h1,http://v:q@h2 b")).toBe("a http://u:***@h1,http://v:***@h2 b");
  });

  it("covers raw and encoded @ and : in the password", () => {
    expect(redactUrl("rest:http://alice:p@ss:w@host/")).toBe("rest:http://alice:***@host/");
    expect(redactUrl("rest:http://alice:p%40ss%3Aw@host:8000/")).toBe("rest:http://alice:***@host:8000/");
    expect(redactUrl("rest:http://:pw@host/")).toBe("rest:http://:***@host/");
  });

  it("leaves URLs without a password alone", () => {
    for (const text of [
      "rest:http://alice@host:8000/",
      "rest:http://host:8000/",
      "rest:http://alice:@host/",
      "sftp:bob@host:/srv",
      "/srv/repo",
      "mailto:someone@example.com",
      "",
    ]) {
      expect(redactUrl(text)).toBe(text);
    }
  });
});

describe("merge then redact (properties)", () => {
  const bases = fc.constantFrom(
    "rest:http://127.0.0.1:53105/alice/",
    "rest:https://backup.example.com/",
    "rest:http://[::1]:8000/repo",
    "s3:https://s3.example.com/bucket",
    "s3:http://minio:9000/bucket?region=x",
  );
  const username = fc.string({ unit: "binary", maxLength: 20 });
  const password = fc.string({ unit: "binary", minLength: 8, maxLength: 40 });
  const punctuated = fc
    .array(fc.constantFrom(..."@:/?#%&=+ $!'()*[]\\^|\"<>{}`~".split(""), "pw", "é", "🔑"), {
      minLength: 8,
      maxLength: 30,
    })
    .map((parts) => parts.join(""));

  const withoutBackend = (url: string) => new URL(url.replace(/^(rest|s3):/, ""));

  function spellings(secret: string): string[] {
    const whatwg = new URL("http://h/");
    whatwg.password = secret;
    return [secret, encodeURIComponent(secret), whatwg.password];
  }

  it("never shows the password, raw or encoded", () => {
    fc.assert(
      fc.property(bases, username, fc.oneof(password, punctuated), (base, user, secret) => {
        // The visible parts must not contain the password by coincidence.
        const visible = `${base} ${user} ${encodeURIComponent(user)} ***`;
        fc.pre(spellings(secret).every((spelling) => !visible.includes(spelling)));
        const shown = redactUrl(mergeUrlCredentials(base, user, secret));
        for (const spelling of spellings(secret)) {
          expect(shown).not.toContain(spelling);
        }
        expect(shown).toContain(":***@");
      }),
      { numRuns: 500 },
    );
  });

  it("parses with the WHATWG URL parser to the same username and password", () => {
    fc.assert(
      fc.property(bases, username, fc.oneof(password, punctuated), (base, user, secret) => {
        const parsed = withoutBackend(mergeUrlCredentials(base, user, secret));
        const original = withoutBackend(base);
        expect(decodeURIComponent(parsed.username)).toBe(user);
        expect(decodeURIComponent(parsed.password)).toBe(secret);
        expect(parsed.host + parsed.pathname + parsed.search).toBe(
          original.host + original.pathname + original.search,
        );
      }),
      { numRuns: 500 },
    );
  });

  it("is idempotent", () => {
    fc.assert(
      fc.property(bases, username, password, (base, user, secret) => {
        const once = redactUrl(mergeUrlCredentials(base, user, secret));
        expect(redactUrl(once)).toBe(once);
      }),
    );
  });
});
