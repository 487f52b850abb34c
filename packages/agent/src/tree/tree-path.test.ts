import { describe, expect, it } from "vitest";
import { childPath, isBelow, normaliseTreePath, parentOf } from "./tree-path.js";

describe("normaliseTreePath", () => {
  it.each([
    ["/", "/"],
    ["//", "/"],
    ["/srv/", "/srv"],
    ["/srv//data/./x", "/srv/data/x"],
    ["/srv/data/../logs", "/srv/logs"],
    ["/srv/..", "/"],
    ["/a/b/../../c", "/c"],
    ["/we ird/ü ber[1]", "/we ird/ü ber[1]"],
    ["/a/...", "/a/..."],
  ])("%s -> %s", (input, path) => {
    expect(normaliseTreePath(input)).toEqual({ ok: true, path });
  });

  it.each(["/..", "/../etc", "/srv/../../etc", "/a/./../.."])("refuses the escape %s", (input) => {
    expect(normaliseTreePath(input)).toEqual({
      ok: false,
      error: `path ${JSON.stringify(input)} leads above /`,
    });
  });

  it.each(["", "srv", "./srv", "~/x"])("refuses the relative path %j", (input) => {
    expect(normaliseTreePath(input)).toMatchObject({
      ok: false,
      error: expect.stringContaining("not absolute"),
    });
  });
});

describe("path helpers", () => {
  it("parents, children and containment", () => {
    expect(parentOf("/tmp")).toBe("/");
    expect(parentOf("/tmp/a b")).toBe("/tmp");
    expect(childPath("/", "tmp")).toBe("/tmp");
    expect(childPath("/tmp", "x")).toBe("/tmp/x");
    expect(isBelow("/", "/tmp")).toBe(true);
    expect(isBelow("/tmp", "/tmp")).toBe(false);
    expect(isBelow("/tmp", "/tmpx")).toBe(false);
    expect(isBelow("/tmp", "/tmp/x/y")).toBe(true);
  });
});
