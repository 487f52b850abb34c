/**
 * @module testing/fake-restic
 * Shell scripts that stand in for restic where real restic cannot show the behaviour under test:
 * a job that runs long and starts children of its own (process-group kill on cancel), or one
 * that prints its environment (what reaches the tool).
 */
import { chmod, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitUntil } from "./processes.js";

const VERSION_BRANCH = `for arg in "$@"; do
  if [ "$arg" = version ]; then echo "restic 0.18.0 compiled with go1.24.4 on linux/amd64"; exit 0; fi
done`;

async function writeScript(body: string): Promise<{ dir: string; path: string }> {
  const dir = await mkdtemp(join(tmpdir(), "fleetback-fake-restic-"));
  const path = join(dir, "restic");
  await writeFile(path, `#!/bin/sh\n${VERSION_BRANCH}\n${body}\n`);
  await chmod(path, 0o755);
  return { dir, path };
}

/**
 * Writes its own pid and its child's pid to `<dir>/pids`, one per line, then waits on a
 * `sleep 60` child: a cancel must take both down. `ignoreStops` ignores SIGINT and SIGTERM (only
 * SIGKILL ends it); `cleanupOnInt` behaves as restic before 0.17: only SIGINT runs its cleanup
 * (it writes `<dir>/cleaned`, as restic removes its lock), SIGTERM kills it without.
 */
export async function createSleepingRestic(
  options: { ignoreStops?: boolean; cleanupOnInt?: boolean } = {},
): Promise<{ path: string; pidFile: string; cleanedFile: string }> {
  const pidFile = "pids";
  const cleanedFile = "cleaned";
  // An ignored signal stays ignored in children: the whole group then needs SIGKILL.
  const trap = options.ignoreStops
    ? "trap '' INT TERM\n"
    : options.cleanupOnInt
      ? `trap 'echo cleaned > "$(dirname "$0")/${cleanedFile}"; exit 130' INT\n`
      : "";
  const { dir, path } = await writeScript(`${trap}echo started
sleep 60 &
echo $$ > "$(dirname "$0")/${pidFile}.tmp"
echo $! >> "$(dirname "$0")/${pidFile}.tmp"
mv "$(dirname "$0")/${pidFile}.tmp" "$(dirname "$0")/${pidFile}"
wait`);
  return { path, pidFile: join(dir, pidFile), cleanedFile: join(dir, cleanedFile) };
}

/** The two pids a sleeping restic wrote (itself, its child), once both are there. */
export async function sleepingPids(pidFile: string): Promise<number[]> {
  await waitUntil(
    async () => (await readFile(pidFile, "utf8").catch(() => "")).trim().split("\n").length === 2,
  );
  return (await readFile(pidFile, "utf8")).trim().split("\n").map(Number);
}

/** Prints its argv and environment, then the given text, and exits with `exitCode`. */
export async function createEchoRestic(text = "", exitCode = 0): Promise<string> {
  const { path } = await writeScript(`echo "argv: $*"
env | sort | sed 's/^/env: /'
printf '%s' '${text.replaceAll("'", "'\\''")}'
exit ${exitCode}`);
  return path;
}
