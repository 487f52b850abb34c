import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseDiffLines } from "./diff-view.js";

/** restic's recorded output (shared/restic/fixtures beside the repository, or inside it in CI). */
const fixturesDir = [
  fileURLToPath(new URL("../../../../../shared/restic/fixtures/", import.meta.url)),
  fileURLToPath(new URL("../../../../shared/restic/fixtures/", import.meta.url)),
].find((dir) => existsSync(dir));

function stdoutOf(version: string, name: string): string[] {
  return readFileSync(`${fixturesDir}/${version}/local/${name}.stdout`, "utf8").split("\n");
}

const CHANGES = [
  { path: "/srv/lab/src/tree/docs/new.txt", modifier: "+", change: "added", isDir: false },
  { path: "/srv/lab/src/tree/docs/notes.md", modifier: "-", change: "removed", isDir: false },
  { path: "/srv/lab/src/tree/docs/readme.txt", modifier: "M", change: "modified", isDir: false },
  { path: "/srv/lab/src/tree/docs/sub/deep.txt", modifier: "M", change: "modified", isDir: false },
];

describe.skipIf(!fixturesDir)("diff output parsed from restic's recorded runs", () => {
  for (const version of ["0.18.0", "0.14.0"]) {
    it(`reads diff --json of ${version}: rows and the statistics`, () => {
      const view = parseDiffLines(stdoutOf(version, "diff"));
      expect(view.rows).toEqual(CHANGES);
      expect(view.counts).toEqual({ added: 1, removed: 1, modified: 2, other: 0 });
      expect(view.raw).toEqual([]);
      expect(view.summary).toEqual(
        expect.arrayContaining([
          { label: "Files", value: "1 new, 1 removed, 2 changed" },
          { label: "Dirs", value: "0 new, 0 removed" },
          { label: "Added", value: "4.34 KiB" },
          { label: "Removed", value: "4.26 KiB" },
        ]),
      );
    });

    it(`reads the text output of ${version}: rows and the stats block`, () => {
      const view = parseDiffLines(stdoutOf(version, "diff-text"));
      expect(view.rows).toEqual(CHANGES);
      expect(view.raw).toEqual([]);
      expect(view.summary).toEqual(
        expect.arrayContaining([
          { label: "Files", value: "1 new, 1 removed, 2 changed" },
          { label: "Added", value: "4.343 KiB" },
          { label: "Removed", value: "4.265 KiB" },
        ]),
      );
      expect(view.summary[0]?.label).toBe("Compared");
    });
  }
});

describe("diff output", () => {
  it("keeps unknown lines raw and maps combined modifiers", () => {
    const view = parseDiffLines([
      '{"message_type":"change","path":"/etc/","modifier":"TU"}',
      '{"message_type":"change","path":"/etc/passwd","modifier":"M?"}',
      '{"message_type":"error","message":"boom"}',
      "{not json",
      'Fatal: no matching ID found for prefix "latest"',
      "U    /etc/hosts",
    ]);
    expect(view.rows.map((row) => [row.path, row.change, row.isDir])).toEqual([
      ["/etc/", "type changed", true],
      ["/etc/passwd", "modified", false],
      ["/etc/hosts", "metadata", false],
    ]);
    expect(view.counts).toEqual({ added: 0, removed: 0, modified: 1, other: 2 });
    expect(view.raw).toEqual([
      '{"message_type":"error","message":"boom"}',
      "{not json",
      'Fatal: no matching ID found for prefix "latest"',
    ]);
    expect(view.summary).toEqual([]);
  });
});
