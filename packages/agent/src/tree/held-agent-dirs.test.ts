import { describe, expect, it } from "vitest";
import { pathsAround } from "./held-agent-dirs.js";

describe("pathsAround", () => {
  const children = new Map([
    ["/", ["/etc", "/srv", "/var"]],
    ["/etc", ["/etc/fleetback-agent", "/etc/nginx"]],
    ["/var", ["/var/lib", "/var/log"]],
    ["/var/lib", ["/var/lib/fleetback-agent", "/var/lib/postgresql"]],
  ]);
  const held = ["/etc/fleetback-agent", "/var/lib/fleetback-agent"];

  it("restores every entry on the way down but the held directories", () => {
    expect(pathsAround("/", held, children)).toEqual([
      "/etc/nginx",
      "/srv",
      "/var/lib/postgresql",
      "/var/log",
    ]);
    expect(pathsAround("/var", held, children)).toEqual(["/var/lib/postgresql", "/var/log"]);
  });

  it("keeps a path above no held directory as it is", () => {
    expect(pathsAround("/srv", held, children)).toEqual(["/srv"]);
    expect(pathsAround("/etc", [], children)).toEqual(["/etc"]);
  });
});
