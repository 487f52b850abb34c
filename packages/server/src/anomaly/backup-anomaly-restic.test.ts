/**
 * The detector on real restic 0.14 and 0.18 summaries: sources of 200 small text files backed up
 * through ordinary days (a few appends, one file added, one deleted), then encrypted by a locker
 * that replaces 90% of them with random `.locked` files, rewritten in place, touched without a
 * change, or mostly wiped. Only the encrypted and wiped backups may be flagged, and the removed
 * files derived from restic's counts must be the ones the test deleted.
 */
import { randomBytes } from "node:crypto";
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RESTIC_VERSIONS, requireRestic, resticSuite } from "../testing/restic-binaries.js";
import { initResticRepository, inParallel, type ResticRepository, runRestic } from "../testing/restic-cli.js";
import { judgeBackup } from "./backup-anomaly.js";
import { type BackupFacts, backupFactsOf, filesRemovedSince } from "./backup-facts.js";

const FILES = 200;
const START = Date.parse("2026-11-01T02:00:00Z");
const DAY = 86_400_000;
const WORDS = "invoice ledger quarterly budget payroll contract shipment customer report draft".split(" ");

/** Compressible text, the same for the same seed. */
function text(seed: number, words: number): string {
  let state = seed;
  const out: string[] = [];
  for (let index = 0; index < words; index += 1) {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    out.push(WORDS[state % WORDS.length] ?? "");
  }
  return `${out.join(" ")}\n`;
}

interface Backed {
  facts: BackupFacts;
  /** Files the test deleted or renamed away since the previous backup. */
  removed: number;
}

class Source {
  readonly backups: Backed[] = [];
  private removedSince = 0;

  constructor(
    private readonly restic: string,
    private readonly repository: ResticRepository,
    readonly dir: string,
  ) {
    mkdirSync(dir, { recursive: true });
    for (let index = 0; index < FILES; index += 1) {
      writeFileSync(this.path(index), text(index + 1, 2_000 + index * 10));
    }
  }

  path(index: number): string {
    return join(this.dir, `doc-${String(index).padStart(3, "0")}.txt`);
  }

  files(): string[] {
    return readdirSync(this.dir).sort();
  }

  remove(name: string): void {
    rmSync(join(this.dir, name));
    this.removedSince += 1;
  }

  /** An ordinary day: three files appended to, one added, one deleted. */
  ordinaryDay(day: number): void {
    for (const index of [day, day + 40, day + 80]) {
      appendFileSync(this.path(index), text(1_000 + index, 300));
    }
    writeFileSync(join(this.dir, `new-${day}.txt`), text(5_000 + day, 2_500));
    this.remove(`doc-${String(150 + day).padStart(3, "0")}.txt`);
  }

  /** What a locker does to most files: random bytes of the same size, the original gone. */
  encrypt(share: number, rename: boolean): void {
    const names = this.files();
    for (const name of names.slice(0, Math.round(names.length * share))) {
      const path = join(this.dir, name);
      writeFileSync(path, randomBytes(statSync(path).size));
      if (rename) {
        renameSync(path, `${path}.locked`);
        this.removedSince += 1;
      }
    }
  }

  async backUp(): Promise<BackupFacts> {
    const args = ["backup", "--json", "--host=anomaly", this.dir];
    const output = await runRestic({ restic: this.restic, repository: this.repository, args });
    const summary = output
      .split("\n")
      .filter((line) => line.includes('"message_type":"summary"'))
      .map((line): unknown => JSON.parse(line))[0];
    const facts = backupFactsOf(summary, new Date(START + this.backups.length * DAY));
    if (facts === undefined) {
      throw new Error(`no backup summary in: ${output}`);
    }
    this.backups.push({ facts, removed: this.removedSince });
    this.removedSince = 0;
    return facts;
  }

  /** The detector's verdict on each backup, given the ones before it. */
  verdicts(): ReturnType<typeof judgeBackup>[] {
    const history = this.backups.map(({ facts }) => facts);
    return history.map((facts, index) => judgeBackup(facts, history.slice(0, index)));
  }
}

/** What happens to each source after its ordinary days, each followed by a backup. */
const EVENTS = {
  async locked(source: Source): Promise<void> {
    const touched = new Date(START + 10 * DAY);
    for (const name of source.files()) {
      utimesSync(join(source.dir, name), touched, touched);
    }
    await source.backUp();
    source.encrypt(0.9, true);
    await source.backUp();
  },
  async inPlace(source: Source): Promise<void> {
    source.encrypt(0.9, false);
    await source.backUp();
  },
  async wiped(source: Source): Promise<void> {
    for (const name of source.files().slice(0, Math.round(FILES * 0.6))) {
      source.remove(name);
    }
    await source.backUp();
  },
};
type SourceName = keyof typeof EVENTS;
const SOURCE_NAMES: readonly SourceName[] = ["locked", "inPlace", "wiped"];

const temps: string[] = [];
afterAll(() => {
  for (const dir of temps) {
    rmSync(dir, { recursive: true, force: true });
  }
});

for (const version of RESTIC_VERSIONS) {
  const suite = resticSuite(`backup anomalies on restic ${version}`, version);

  describe.skipIf(suite.skip)(suite.title, () => {
    const sources = new Map<SourceName, Source>();
    const sourceOf = (name: SourceName): Source => {
      const source = sources.get(name);
      if (source === undefined) {
        throw new Error(`the ${name} source was not backed up`);
      }
      return source;
    };

    beforeAll(async () => {
      const restic = requireRestic(version);
      const dir = mkdtempSync(join(tmpdir(), "fleetback-anomaly-"));
      temps.push(dir);
      const repository = await initResticRepository(restic, dir);
      // One repository, as hosts share one, so a source's first backup deduplicates against the
      // others'. restic before 0.16 retries, for some forty seconds, reading the lock of a
      // concurrent backup that has just removed it, so 0.14 backs up one source at a time.
      await inParallel(SOURCE_NAMES, version === "0.14" ? 1 : 3, async (name) => {
        const source = new Source(restic, repository, join(dir, name));
        await source.backUp();
        for (let day = 1; day <= 3; day += 1) {
          source.ordinaryDay(day);
          await source.backUp();
        }
        await EVENTS[name](source);
        sources.set(name, source);
      });
    }, 120_000);

    it("derives removed files that match the ones deleted", () => {
      expect(sources.size).toBe(SOURCE_NAMES.length);
      for (const { backups } of sources.values()) {
        const derived = backups.slice(1).map(({ facts }, index) => {
          const previous = backups[index]?.facts;
          return previous === undefined ? undefined : filesRemovedSince(previous, facts);
        });
        expect(derived).toEqual(backups.slice(1).map(({ removed }) => removed));
      }
    });

    it("judges the ordinary days from the fourth backup on and flags none of them", () => {
      const verdicts = sourceOf("wiped").verdicts().slice(0, 4);
      expect(verdicts.map(({ anomalous }) => anomalous)).toEqual([false, false, false, false]);
      expect(verdicts.map(({ baseline }) => baseline !== undefined)).toEqual([false, false, false, true]);
    });

    it("stays quiet when every file is touched, and flags the files replaced by `.locked` ones", () => {
      const verdicts = sourceOf("locked").verdicts();
      expect(verdicts.map(({ anomalous }) => anomalous)).toEqual([false, false, false, false, false, true]);
      const touched = sourceOf("locked").backups[4]?.facts;
      expect(touched?.filesChanged).toBe(FILES);
      expect(verdicts[5]?.reasons[0]).toMatch(
        /^90% of the 200 files .* \(0 changed, 180 removed, 180 new; usual: 2%\)$/,
      );
    });

    it("flags the files encrypted in place", () => {
      const verdicts = sourceOf("inPlace").verdicts();
      expect(verdicts.map(({ anomalous }) => anomalous)).toEqual([false, false, false, false, true]);
      expect(verdicts[4]?.reasons[0]).toMatch(/\(180 changed, 0 removed, 0 new; usual: 2%\)$/);
    });

    it("flags the wipe", () => {
      const verdicts = sourceOf("wiped").verdicts();
      expect(verdicts.map(({ anomalous }) => anomalous)).toEqual([false, false, false, false, true]);
      expect(verdicts[4]?.reasons[0]).toBe("the source shrank from 200 files to 80 (usual: 200)");
    });
  });
}
