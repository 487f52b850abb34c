/**
 * Where the restore browser opens (the backed-up paths, not "/"), which paths a download may
 * name, and the file name a download is saved under.
 */
import { describe, expect, it } from "vitest";
import { contentDisposition, downloadFilename, downloadPathProblem } from "./download-names.js";
import { openingPath } from "./restore-wizard.js";

describe("openingPath", () => {
  it("opens at the one backed-up path, or the deepest folder holding all of them", () => {
    expect(openingPath(["/srv/docs"])).toBe("/srv/docs");
    expect(openingPath(["/srv/docs/", "/srv/mail"])).toBe("/srv");
    expect(openingPath(["/home/ann", "/home/annette"])).toBe("/home");
    expect(openingPath(["/etc", "/srv"])).toBe("/");
  });
  it("falls back to / for no paths, Windows drives and '..'", () => {
    expect(openingPath([])).toBe("/");
    expect(openingPath(["C:\\Users\\ann"])).toBe("/");
    expect(openingPath(["/srv/../etc"])).toBe("/");
  });
});

describe("downloadPathProblem", () => {
  const snapshot = { paths: ["/srv/docs", "/etc/nginx"] };
  it("accepts paths inside a backed-up path and folders above them", () => {
    expect(downloadPathProblem(snapshot, "/srv/docs/a b.txt")).toBeUndefined();
    expect(downloadPathProblem(snapshot, "/srv/docs")).toBeUndefined();
    expect(downloadPathProblem(snapshot, "/srv")).toBeUndefined();
    expect(downloadPathProblem(snapshot, "/")).toBeUndefined();
    expect(downloadPathProblem({ paths: ["C:\\Users\\ann"] }, "/C/Users/ann/x.txt")).toBeUndefined();
  });
  it("refuses '..', relative paths, NUL and paths outside the snapshot", () => {
    expect(downloadPathProblem(snapshot, "/srv/docs/../../etc/shadow")).toContain("..");
    expect(downloadPathProblem(snapshot, "srv/docs")).toContain("absolute");
    expect(downloadPathProblem(snapshot, "/srv/docs/\u0000")).toContain("NUL");
    expect(downloadPathProblem(snapshot, "/srv/docsx")).toContain("not inside");
    expect(downloadPathProblem(snapshot, "/etc/shadow")).toContain("not inside");
  });
});

describe("download file names", () => {
  it("names a file after itself and a folder after itself with the archive's extension", () => {
    expect(downloadFilename({ id: "abcdef0123" }, "/srv/docs/a.txt")).toBe("a.txt");
    expect(downloadFilename({ id: "abcdef0123" }, "/srv/docs", "zip")).toBe("docs.zip");
    expect(downloadFilename({ id: "abcdef0123" }, "/", "tar")).toBe("snapshot-abcdef01.tar");
  });
  it("keeps quotes, line breaks and non-ASCII out of the header's plain name", () => {
    const header = contentDisposition('x"\r\nSet-Cookie: a=b ü.txt');
    expect(header).not.toMatch(/[\r\n]/);
    expect(header).toBe(
      `attachment; filename="x___Set-Cookie_ a_b _.txt"; filename*=UTF-8''x%22%0D%0ASet-Cookie%3A%20a%3Db%20%C3%BC.txt`,
    );
    expect(contentDisposition("..hidden")).toContain('filename="_hidden"');
  });
});
