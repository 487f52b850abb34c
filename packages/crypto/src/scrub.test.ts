import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createScrubber, scrubSecrets } from "./scrub.js";
import { mergeUrlCredentials } from "./url-credentials.js";

describe("scrubSecrets", () => {
  it("replaces every occurrence of each secret", () => {
    expect(scrubSecrets("pw=hunter22 again hunter22.", ["hunter22"])).toBe("pw=*** again ***.");
  });

  it("catches percent-encoded spellings, whichever characters were escaped and in either hex case", () => {
    const secret = "p@ss:wörd /x";
    const line = [
      encodeURIComponent(secret),
      encodeURIComponent(secret).toLowerCase(),
      "p%40ss:w%C3%B6rd%20/x",
      "p@ss%3aw%c3%b6rd+%2Fx",
    ].join(" | ");
    expect(scrubSecrets(line, [secret])).toBe("*** | *** | *** | ***");
  });

  it("scrubs the password out of a merged restic URL", () => {
    const url = mergeUrlCredentials("rest:http://127.0.0.1:8000/alice/", "alice", "s3cr:t/p@ss");
    expect(scrubSecrets(`Fatal: unable to open ${url}`, ["s3cr:t/p@ss"])).toBe(
      "Fatal: unable to open rest:http://alice:***@127.0.0.1:8000/alice/",
    );
  });

  it("prefers the longest secret when one contains another", () => {
    expect(scrubSecrets("token abcd-efgh-ijkl", ["abcd", "abcd-efgh-ijkl"])).toBe("token ***");
    expect(scrubSecrets("token abcd-efgh-ijkl", ["abcd-efgh-ijkl", "abcd"])).toBe("token ***");
  });

  it("ignores empty, missing and shorter-than-4-character secrets", () => {
    expect(scrubSecrets("abc ab a", ["abc", "", undefined, null])).toBe("abc ab a");
    expect(scrubSecrets("🔑🔑🔑 🔑🔑🔑🔑", ["🔑🔑🔑🔑"])).toBe("🔑🔑🔑 ***");
  });

  it("treats regular-expression characters literally", () => {
    expect(scrubSecrets("a.*b a.*b axxb", ["a.*b"])).toBe("*** *** axxb");
    expect(scrubSecrets("x(?:)[]{}|\\^$ ok", ["(?:)[]{}|\\^$"])).toBe("x*** ok");
  });

  it("is reusable across lines", () => {
    const scrub = createScrubber(["first-secret", "second-secret"]);
    expect(scrub("first-secret")).toBe("***");
    expect(scrub("then second-secret and first-secret")).toBe("then *** and ***");
    expect(scrub("nothing here")).toBe("nothing here");
  });

  it("never leaves a secret of 4+ characters in any line (property)", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", minLength: 4, maxLength: 24 }),
        fc.string({ maxLength: 30 }),
        fc.string({ maxLength: 30 }),
        (secret, before, after) => {
          // A "*" in the secret could re-form it from "***" and its neighbours.
          fc.pre(!secret.includes("*"));
          const line = `${before}${secret}${after} ${encodeURIComponent(secret)}`;
          const scrubbed = scrubSecrets(line, [secret]);
          expect(scrubbed).not.toContain(secret);
          expect(scrubbed).not.toContain(encodeURIComponent(secret));
        },
      ),
    );
  });
});
