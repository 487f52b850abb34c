import { describe, expect, it } from "vitest";
import { parseArgv } from "./argv.js";

describe("parseArgv", () => {
  it("reads a command with space- and equals-separated flags", () => {
    expect(parseArgv(["enroll", "--server", "https://s", "--token=abc", "--config-dir", "/c"])).toEqual({
      ok: true,
      command: "enroll",
      flags: { server: "https://s", token: "abc", configDir: "/c" },
    });
    expect(parseArgv(["run", "--state-dir=/s"])).toEqual({
      ok: true,
      command: "run",
      flags: { stateDir: "/s" },
    });
  });

  it("treats no arguments, --help and -h as help and --version as version", () => {
    expect(parseArgv([])).toMatchObject({ ok: true, command: "help" });
    expect(parseArgv(["enroll", "--help"])).toMatchObject({ ok: true, command: "help" });
    expect(parseArgv(["-h"])).toMatchObject({ ok: true, command: "help" });
    expect(parseArgv(["--version"])).toMatchObject({ ok: true, command: "version" });
  });

  it("takes --label again and again, in order", () => {
    expect(parseArgv(["announce", "--server", "http://x", "--label", "env=prod", "--label=role=db"])).toEqual(
      {
        ok: true,
        command: "announce",
        flags: { server: "http://x", labels: ["env=prod", "role=db"] },
      },
    );
  });

  it.each([
    [["bogus"], 'unknown command "bogus"'],
    [["run", "--bogus", "x"], 'unknown option "--bogus" for run'],
    [["run", "--token", "x"], "run does not take --token"],
    [["announce"], "announce needs --server"],
    [["enroll", "--server"], "--server needs a value"],
    [["enroll", "--server", "--token", "t"], "--server needs a value"],
    [["status", "--config-dir", "/a", "--config-dir=/b"], "--config-dir given twice"],
    [["run", "--label", "env=prod"], "run does not take --label"],
    [["enroll", "--server", "http://x", "--label"], "--label needs a value"],
  ])("refuses %j", (argv, message) => {
    expect(parseArgv(argv)).toEqual({ ok: false, message });
  });
});
