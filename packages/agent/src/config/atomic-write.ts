/**
 * @module config/atomic-write
 * Writes a file so that readers see the old or the new content, never half of it, and so that
 * the content is never readable by others, not even for a moment: the temporary file is created
 * with the final mode, then renamed over the target. Content may come in pieces, so that a large
 * file (the file catalogue's base, tree/catalog-state.ts) never needs one string of its own size.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // mkdir leaves an existing directory's mode alone; the agent's own dirs are private regardless.
  await chmod(dir, 0o700);
}

export async function writeFileAtomic(
  path: string,
  content: string | Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>,
  mode = 0o600,
): Promise<void> {
  const dir = dirname(path);
  await ensurePrivateDir(dir);
  const temp = join(dir, `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  const handle = await open(temp, "wx", mode);
  try {
    if (typeof content === "string") {
      await handle.writeFile(content, "utf8");
    } else {
      // Each writeFile goes on from where the last ended, and writes its piece whole; pieces may be
      // made as they are written (the catalogue's base, streamed from an index), and a byte piece's
      // buffer reused for the next once written.
      for await (const piece of content) {
        await handle.writeFile(piece, "utf8");
      }
    }
    await handle.sync();
  } catch (cause) {
    await handle.close();
    await rm(temp, { force: true });
    throw cause;
  }
  await handle.close();
  // The umask may have narrowed the mode further; make it exactly what was asked for.
  await chmod(temp, mode);
  try {
    await rename(temp, path);
  } catch (cause) {
    await rm(temp, { force: true });
    throw cause;
  }
}
