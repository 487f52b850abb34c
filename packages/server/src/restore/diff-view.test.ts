import { describe, expect, it } from "vitest";
import { recordedOutput } from "../testing/restic-binaries.js";
import { parseDiffLines } from "./diff-view.js";

/**
 * restic's recorded output in testdata/restic (made by scripts/record-restic-fixtures.mjs and
 * committed): `diff` of the snapshots S1 and S4, between which one file was added, one removed
 * and two changed. A missing recording fails the test.
 */
function stdoutOf(version: string, name: string): string[] {
  return recordedOutput(version, `${name}.stdout`).split("\n");
}

/** The backed-up tree's path, the same in every recording. */
function recordedTree(version: string): string {
  const scenario = JSON.parse(recordedOutput(version, "_scenario.json"));
  return scenario.tree;
}

/** Bytes added and removed, from the statistics line of the JSON diff (they vary per recording run). */
function recordedBytes(version: string): { added: number; removed: number } {
  const line = stdoutOf(version, "diff").find((text) => text.includes('"message_type":"statistics"'));
  const statistics = JSON.parse(line ?? "{}");
  return { added: statistics.added?.bytes, removed: statistics.removed?.bytes };
}

function changes(tree: string) {
  return [
    { path: `${tree}/docs/new.txt`, modifier: "+", change: "added", isDir: false },
    { path: `${tree}/docs/notes.md`, modifier: "-", change: "removed", isDir: false },
    { path: `${tree}/docs/readme.txt`, modifier: "M", change: "modified", isDir: false },
    { path: `${tree}/docs/sub/deep.txt`, modifier: "M", change: "modified", isDir: false },
  ];
}

describe("diff output parsed from restic's recorded runs", () => {
  for (const version of ["0.18.0", "0.14.0"]) {
    it(`reads diff --json of ${version}: rows and the statistics`, () => {
      const view = parseDiffLines(stdoutOf(version, "diff"));
      expect(view.rows).toEqual(changes(recordedTree(version)));
      expect(view.counts).toEqual({ added: 1, removed: 1, modified: 2, other: 0 });
      expect(view.raw).toEqual([]);
      const bytes = recordedBytes(version);
      // Both are a few KiB, which the page prints with two decimals.
      for (const value of [bytes.added, bytes.removed]) {
        expect(value).toBeGreaterThanOrEqual(1024);
        expect(value).toBeLessThan(10 * 1024);
      }
      expect(view.summary).toEqual(
        expect.arrayContaining([
          { label: "Files", value: "1 new, 1 removed, 2 changed" },
          { label: "Dirs", value: "0 new, 0 removed" },
          { label: "Added", value: `${(bytes.added / 1024).toFixed(2)} KiB` },
          { label: "Removed", value: `${(bytes.removed / 1024).toFixed(2)} KiB` },
        ]),
      );
    });

    it(`reads the text output of ${version}: rows and the stats block`, () => {
      const view = parseDiffLines(stdoutOf(version, "diff-text"));
      expect(view.rows).toEqual(changes(recordedTree(version)));
      expect(view.raw).toEqual([]);
      expect(view.summary).toEqual(
        expect.arrayContaining([{ label: "Files", value: "1 new, 1 removed, 2 changed" }]),
      );
      // restic prints KiB with three decimals; the same diff's JSON gives the exact byte counts.
      const bytes = recordedBytes(version);
      for (const [label, exact] of [
        ["Added", bytes.added],
        ["Removed", bytes.removed],
      ] as const) {
        const value = view.summary.find((entry) => entry.label === label)?.value ?? "";
        expect(value).toMatch(/^\d+\.\d{3} KiB$/);
        expect(Number.parseFloat(value)).toBeCloseTo(exact / 1024, 2);
      }
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
