import { describe, expect, it } from "vitest";
import { computeConflictDimensions, pathsOverlap } from "./conflict-dimension.js";

describe("conflict dimension", () => {
  it("overlaps equal paths and containment, not siblings with a common prefix", () => {
    expect(pathsOverlap("/etc", "/etc/")).toBe(true);
    expect(pathsOverlap("/var/lib", "/var/lib/postgres")).toBe(true);
    expect(pathsOverlap("/", "/home")).toBe(true);
    expect(pathsOverlap("/var/lib", "/var/libvirt")).toBe(false);
  });

  it("names the first shared include of each group, null for a group that shares none", () => {
    const dims = computeConflictDimensions([
      { id: "a", includes: ["/srv", "/etc"] },
      { id: "b", includes: ["/etc/nginx"] },
      { id: "c", includes: ["/home"] },
    ]);
    expect(Object.fromEntries(dims)).toEqual({ a: "/etc", b: "/etc/nginx", c: null });
  });
});
