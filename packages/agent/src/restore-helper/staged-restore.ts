/**
 * @module restore-helper/staged-restore
 * Where the helper lets restic write. restic follows a symlink that exists where it writes: a
 * file's link before 0.16, and a directory's link in every version tried (0.14 and 0.18).
 * Checking the target first is not enough (issue 34): a directory swapped for a symlink after the
 * check, by a local user or by a compromised agent in its own writable restore dir, redirected a
 * restore as root. So a restore to a new directory goes into a staging directory of the helper's
 * own (under its state directory, which only it writes), and the result is renamed into place: a
 * rename never follows the link it replaces, and the parents are checked again right before it.
 *
 * A target on another filesystem cannot be renamed into, nor can a directory that holds files
 * already: restic 0.16 and later then restore into the target (created root-only when missing,
 * so only root can plant anything there), and older restic is refused. In-place restores cannot be staged: they need restic 0.16 or later.
 */
import { lstat, mkdir, readdir, realpath, rename, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { isAtLeast, type ToolVersion } from "../restic/version.js";
import { oldResticRefusal } from "./restore-safety.js";

export interface Staging {
  dir: string;
  /** restic's argv with the staging directory as its target. */
  args: string[];
  /** restic names the staging directory in its output; the job log names the target. */
  mapLine(text: string): string;
  /** Moves the restored tree into place; the error is a sentence, the files stay staged then. */
  finish(): Promise<string | undefined>;
}

function code(cause: unknown): string | undefined {
  return cause instanceof Error && "code" in cause ? String(cause.code) : undefined;
}

type Placed = { ok: true; staging: Staging | undefined } | { ok: false; error: string };

/** How restic writes this restore: staged, straight into a created target, or not at all. */
export async function placeRestore(input: {
  stateDir: string;
  jobId: string;
  plan: { target: string; args: readonly string[]; includes: readonly string[] };
  version: ToolVersion | undefined;
}): Promise<Placed> {
  const { plan } = input;
  const followsFileLinks = input.version === undefined || !isAtLeast(input.version, 0, 16);
  if (plan.target === "/") {
    return followsFileLinks
      ? {
          ok: false,
          error:
            "restic before 0.16 follows symbolic links where it writes, so the restore helper restores in place only with restic 0.16 or later: upgrade restic on this host, or restore to a new directory",
        }
      : { ok: true, staging: undefined };
  }
  if (followsFileLinks) {
    const refusal = await oldResticRefusal(false, plan.target, plan.includes);
    if (refusal !== undefined) {
      return { ok: false, error: refusal };
    }
  }
  // An operator may restore into a directory that holds files already (restic 0.16 and later):
  // a rename cannot merge into it, so restic writes there itself.
  const holdsFiles = ((await readdir(plan.target).catch(() => [])) as string[]).length > 0;
  if (!holdsFiles) {
    const staged = await prepareStaging(input.stateDir, input.jobId, plan);
    if (staged.ok || staged.otherFilesystem !== true || followsFileLinks) {
      return staged;
    }
  }
  try {
    await mkdir(plan.target, { recursive: true, mode: 0o700 });
    return { ok: true, staging: undefined };
  } catch (cause) {
    return {
      ok: false,
      error: `cannot create the restore directory ${plan.target}: ${cause instanceof Error ? cause.message : String(cause)}`,
    };
  }
}

async function prepareStaging(
  root: string,
  jobId: string,
  plan: { target: string; args: readonly string[] },
): Promise<{ ok: true; staging: Staging } | { ok: false; error: string; otherFilesystem?: boolean }> {
  const stagingRoot = join(root, "staging");
  const dir = join(stagingRoot, jobId);
  const parent = dirname(plan.target);
  let parentReal: string;
  try {
    await mkdir(stagingRoot, { recursive: true, mode: 0o700 });
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { mode: 0o700 });
    await mkdir(parent, { recursive: true, mode: 0o700 });
    parentReal = await realpath(parent);
    const [staged, landing] = await Promise.all([stat(stagingRoot), stat(parentReal)]);
    if (staged.dev !== landing.dev) {
      await rm(dir, { recursive: true, force: true });
      return {
        ok: false,
        otherFilesystem: true,
        error: `restic before 0.16 restores through the helper's staging directory ${stagingRoot}, which is on another filesystem than ${plan.target}: restore below a directory on that filesystem, or upgrade restic to 0.16 or later`,
      };
    }
  } catch (cause) {
    return {
      ok: false,
      error: `cannot prepare the staging directory ${dir}: ${cause instanceof Error ? cause.message : String(cause)}`,
    };
  }
  const targetAt = plan.args.indexOf("--target") + 1;
  const args = plan.args.map((arg, index) => (index === targetAt ? dir : arg));
  const target = plan.target;
  return {
    ok: true,
    staging: {
      dir,
      args,
      mapLine: (text) => text.split(dir).join(target),
      async finish() {
        try {
          // A parent swapped for a link during the restore would move the tree elsewhere.
          if ((await realpath(parent)) !== parentReal) {
            return `a directory above ${target} was replaced during the restore; the restored files stay in ${dir}`;
          }
          const existing = await lstat(target).catch((cause: unknown) => {
            if (code(cause) === "ENOENT") {
              return undefined;
            }
            throw cause;
          });
          if (existing?.isDirectory() && (await readdir(target)).length > 0) {
            return `${target} is no longer empty; the restored files stay in ${dir}`;
          }
          if (existing !== undefined && !existing.isDirectory()) {
            // A link or file planted where the restore goes: replaced, never followed.
            await rm(target, { force: true });
          }
          await rename(dir, target);
          return undefined;
        } catch (cause) {
          return `cannot move the restored files into ${target}: ${cause instanceof Error ? cause.message : String(cause)}; they stay in ${dir}`;
        }
      },
    },
  };
}
