import { describe, expect, it } from "vitest";
import { createWindowsFs } from "../testing/windows-fs.js";
import { readBootRecord } from "./boot-record.js";

const ref = { version: "0.2.0", file: "agent-0.2.0.mjs", sha256: "22".repeat(32), kind: "bundle" };

async function read(value: unknown) {
  const fs = createWindowsFs();
  fs.put("/u/boot.json", typeof value === "string" ? value : JSON.stringify(value));
  return readBootRecord(fs, "/u/boot.json");
}

describe("boot record", () => {
  it("reads what newer agents add to format 1 (older launchers ignore unknown fields)", async () => {
    const record = { format: 1, active: { ...ref, size: 12 }, extra: { anything: true } };
    expect(await read(record)).toEqual({ ok: true, record });
  });

  it("is absent when there is no file", async () => {
    expect(await readBootRecord(createWindowsFs(), "/u/boot.json")).toEqual({ ok: true, record: undefined });
  });

  it.each([
    ["another format", { format: 2, active: ref }],
    ["a file name that is a path", { format: 1, active: { ...ref, file: "agent-../../bin/sh" } }],
    ["a path as file name", { format: 1, active: { ...ref, file: "/usr/bin/agent-x" } }],
    ["an unknown kind", { format: 1, active: { ...ref, kind: "wasm" } }],
    ["not JSON", "{"],
  ])("refuses %s", async (_name, value) => {
    expect((await read(value)).ok).toBe(false);
  });
});
