/**
 * @module update/platform
 * What differs between Linux (and other POSIX systems) and Windows when an agent replaces
 * itself. Artefacts are versioned files in the update dir (`agent-<version>.mjs`, `agent-<version>`,
 * `agent-<version>.exe`), so no running file is ever overwritten; the platforms differ in when
 * the boot record changes and when old files may go.
 */
import { createPosixPlatform } from "./posix-platform.js";
import type { PlatformOptions } from "./update-dir.js";
import type { UpdatePlatform } from "./update-platform.js";
import { createWindowsPlatform } from "./windows-platform.js";

export function createUpdatePlatform(
  options: PlatformOptions,
  platform: NodeJS.Platform = process.platform,
): UpdatePlatform {
  return platform === "win32" ? createWindowsPlatform(options) : createPosixPlatform(options);
}
