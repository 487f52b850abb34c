/**
 * @module testing/restic-cli
 * Drives a real restic on a local repository for tests that hold our code to restic's own answers.
 * The repository's key is rewritten at a low key-derivation cost (restic-fast-key.ts) right after
 * `init`, so that a run costs tens of milliseconds instead of half a second.
 * Every run gets its own environment (no cache, no inherited RESTIC_* variables) and a zone: restic
 * reads `backup --time` in its local zone and stores the snapshot's time with that zone's offset.
 */
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeFastKey } from "./restic-fast-key.js";

export interface ResticRepository {
  /** Folder of the repository and of the one small file every snapshot holds. */
  dir: string;
}

export interface ResticRun {
  restic: string;
  repository: ResticRepository;
  args: readonly string[];
  /** The IANA zone restic runs in; UTC unless given. */
  zone?: string;
}

const PASSWORD = "retention-parity";

export function runRestic({ restic, repository, args, zone = "UTC" }: ResticRun): Promise<string> {
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: repository.dir,
    TZ: zone,
    RESTIC_REPOSITORY: join(repository.dir, "repo"),
    RESTIC_PASSWORD: PASSWORD,
  };
  return new Promise((resolve, reject) => {
    execFile(
      restic,
      ["--no-cache", ...args],
      { env, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) {
          reject(new Error(`restic ${args.join(" ")} failed: ${stderr || error.message}`));
        } else {
          resolve(stdout);
        }
      },
    );
  });
}

export async function initResticRepository(restic: string, dir: string): Promise<ResticRepository> {
  const repository = { dir };
  mkdirSync(join(dir, "data"), { recursive: true });
  writeFileSync(join(dir, "data", "file.txt"), "one small file\n");
  await runRestic({ restic, repository, args: ["init", "--quiet"] });
  const masterKey = await runRestic({ restic, repository, args: ["cat", "masterkey"] });
  writeFastKey(join(dir, "repo"), PASSWORD, masterKey);
  return repository;
}

export interface BackupAt {
  /** `YYYY-MM-DD HH:MM:SS`, the wall clock of `zone` (restic's `--time` format). */
  time: string;
  zone: string;
  host: string;
  tags: readonly string[];
}

export function backupAt(restic: string, repository: ResticRepository, backup: BackupAt): Promise<string> {
  const tags = backup.tags.flatMap((tag) => ["--tag", tag]);
  const path = join(repository.dir, "data");
  const args = ["backup", "--quiet", "--time", backup.time, "--host", backup.host, ...tags, path];
  return runRestic({ restic, repository, args, zone: backup.zone });
}

/** Runs `work` over `items`, at most `limit` at a time, results in the order of `items`. */
export async function inParallel<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}
