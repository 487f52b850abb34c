import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EMPTY_OK, fixture, linesOf } from "../testing/job-run.js";
import {
  DOCS,
  restoreCommand,
  runRestore,
  SNAPSHOT,
  withHelp,
  writingIncludes,
} from "../testing/restore-run.js";

describe("a restore that restores nothing fails (issue 31)", () => {
  const nothing = (paths: string[]) =>
    `nothing in snapshot ${SNAPSHOT} matches ${paths.join(", ")}: no file was restored`;

  it("0.18: restic's bare summary (includes matched nothing, exit 0) fails the job with a sentence", async () => {
    // What restic 0.18 prints for `--json restore <id> --include /srv/x` when nothing matches.
    const ran = await runRestore(
      restoreCommand({ paths: ["/srv/x"] }),
      withHelp({ stdout: '{"message_type":"summary"}\n', stderr: "", exitCode: 0 }),
    );
    expect(ran.outcome).toMatchObject({ status: "failed", exit_code: 0, error: nothing(["/srv/x"]) });
    expect(linesOf(ran, "agent")).toContain(nothing(["/srv/x"]));
  });

  it("0.14: a new-directory restore that wrote nothing fails; one that wrote its path succeeds", async () => {
    const recording = fixture("0.14.0", "restore-include-text");
    const none = await runRestore(restoreCommand({ paths: [DOCS, "/srv/x"] }), () => recording, {
      version: "0.14.0",
    });
    expect(none.outcome).toEqual({ status: "failed", exit_code: 0, error: nothing([DOCS, "/srv/x"]) });
    const some = await runRestore(restoreCommand(), writingIncludes(recording), { version: "0.14.0" });
    expect(some.outcome).toEqual({ status: "succeeded", exit_code: 0 });
  });

  it("0.14 in place: a path that exists but restic left untouched counts as not restored", async () => {
    const base = await mkdtemp(join(tmpdir(), "fleetback-inplace-"));
    const existing = join(base, "kept.txt");
    await writeFile(existing, "already here\n");
    const command = restoreCommand({ in_place: true, target_dir: "/", paths: [existing] });
    const untouched = await runRestore(command, () => EMPTY_OK, { version: "0.14.0" });
    expect(untouched.outcome).toMatchObject({ status: "failed", error: nothing([existing]) });
    const rewritten = await runRestore(command, writingIncludes(EMPTY_OK), { version: "0.14.0" });
    expect(rewritten.outcome).toMatchObject({ status: "succeeded" });
  });

  it("names at most five paths", async () => {
    const paths = ["/a", "/b", "/c", "/d", "/e", "/f", "/g"];
    const ran = await runRestore(restoreCommand({ paths }), () => EMPTY_OK, { version: "0.14.0" });
    expect(ran.outcome.error).toBe(
      `nothing in snapshot ${SNAPSHOT} matches /a, /b, /c, /d, /e and 2 more: no file was restored`,
    );
  });
});

describe("restore output", () => {
  it("status lines become progress (first at once, files clamped, agent ETA), never log lines", async () => {
    const recording = fixture("0.18.0", "restore-big-json");
    const ran = await runRestore(restoreCommand(), withHelp(recording), { msPerLine: 400 });
    // restic's summary of 5,000 restored files counts the directories too, beyond total_files.
    const { message_type: _type, ...summary } = JSON.parse(
      recording.stdout.trimEnd().split("\n").at(-1) ?? "",
    );
    expect(summary.total_files).toBe(5001);
    expect(summary.files_restored).toBeGreaterThan(summary.total_files);
    expect(ran.outcome).toMatchObject({ status: "succeeded", summary });
    expect(linesOf(ran, "stdout").some((line) => line.includes('"status"'))).toBe(false);
    expect(ran.progress[0]?.progress).toMatchObject({ percent_done: 0, files_done: 0 });
    const last = ran.progress.at(-1)?.progress;
    expect(last).toMatchObject({ percent_done: 1, files_done: 5001, files_total: 5001, eta_seconds: 0 });
    expect(last?.files_done).toBeLessThanOrEqual(last?.files_total ?? 0);
  });

  it("per-file lines set current_file and are logged as they are", async () => {
    const recording = fixture("0.18.0", "restore-include-vv-json");
    const ran = await runRestore(restoreCommand(), withHelp(recording), { msPerLine: 1_000 });
    const stdout = linesOf(ran, "stdout");
    // 3 files, sub/, docs/ and the 4 folders above it, then the summary.
    expect(stdout).toHaveLength(10);
    expect(stdout).toEqual(recording.stdout.trimEnd().split("\n"));
    const first = JSON.parse(stdout[0] ?? "") as { message_type: string; action: string; item: string };
    expect(first).toMatchObject({ message_type: "verbose_status", action: "restored" });
    expect(first.item.startsWith(`${DOCS}/`)).toBe(true);
    expect(ran.progress.some((p) => p.progress.current_file === first.item)).toBe(true);
    expect(ran.outcome.summary).toEqual({
      total_files: 5,
      files_restored: 9,
      total_bytes: 38,
      bytes_restored: 38,
    });
  });

  it("an unknown flag error fails the job with restic's message", async () => {
    const ran = await runRestore(restoreCommand(), withHelp(fixture("0.18.0", "restore-no-ownership")));
    expect(ran.outcome).toMatchObject({
      status: "failed",
      exit_code: 1,
      error: "unknown flag: --no-ownership",
    });
  });
});
