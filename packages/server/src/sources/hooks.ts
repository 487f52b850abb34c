/**
 * @module sources/hooks
 * Pre/post hooks are shell text run as root on the host, so they are secrets at rest: sealed with
 * the host id as additional data (like the host's credentials), opened only to build a
 * `command.run` or to show an admin. A group without a hook falls back to the host default.
 */
import { openString, sealString } from "@fleetback/crypto";
import type { Logger } from "../log.js";

export function hookAad(hostId: string): string {
  return `host:${hostId}`;
}

/** null and "" both mean "no hook". */
export function sealHook(key: Uint8Array, hostId: string, text: string | null): Uint8Array | null {
  return text === null || text === "" ? null : sealString(key, text, hookAad(hostId));
}

/** The hook text; undefined when absent or unreadable (logged without content). */
export function openHook(
  key: Uint8Array,
  hostId: string,
  sealed: Uint8Array | null,
  log?: Logger,
): string | undefined {
  if (sealed === null) {
    return undefined;
  }
  const opened = openString(key, sealed, hookAad(hostId));
  if (!opened.ok) {
    log?.error({ host_id: hostId, reason: opened.reason }, "a stored hook cannot be opened; it is skipped");
    return undefined;
  }
  return opened.plaintext;
}

export interface SealedHooks {
  preHook: Uint8Array | null;
  postHook: Uint8Array | null;
}

/** The hooks a backup of the group runs: the group's own, else the host's defaults. */
export function resolveHooks(
  key: Uint8Array,
  hostId: string,
  group: SealedHooks,
  host: { preHookDefault: Uint8Array | null; postHookDefault: Uint8Array | null },
  log?: Logger,
): { pre_hook?: string; post_hook?: string } {
  const pre = openHook(key, hostId, group.preHook ?? host.preHookDefault, log);
  const post = openHook(key, hostId, group.postHook ?? host.postHookDefault, log);
  return {
    ...(pre === undefined ? {} : { pre_hook: pre }),
    ...(post === undefined ? {} : { post_hook: post }),
  };
}
