/**
 * @module agent/credential-store
 * Repository and admin credentials and host-wide caps, as the server pushed them. They live in
 * this process's memory only: never written to disk, never logged, never echoed. After a restart
 * the server pushes them again on hello, before any command can arrive.
 */
import type { Caps, CommandRun, CredentialSlot, Repository } from "@fleetback/protocol";
import type { BandwidthCaps } from "../restic/restic.js";

export interface CredentialStore {
  setRepository(slot: CredentialSlot, repository: Repository): void;
  repository(slot: CredentialSlot): Repository | undefined;
  setCaps(caps: Caps): void;
  /** Per-job caps override the host-wide ones, direction by direction. */
  capsFor(command: CommandRun): BandwidthCaps;
  /** The host-wide caps alone, for work that is not a job (tree browsing). */
  hostCaps(): BandwidthCaps;
}

export function createCredentialStore(): CredentialStore {
  // Closure state rather than object fields: JSON.stringify or util.inspect of the store
  // (say, in a careless debug log) shows no credentials.
  const slots = new Map<CredentialSlot, Repository>();
  let hostCaps: Caps = { bandwidth_up_kbps: null, bandwidth_down_kbps: null };
  return {
    setRepository(slot, repository) {
      slots.set(slot, { ...repository });
    },
    repository(slot) {
      return slots.get(slot);
    },
    setCaps(caps) {
      hostCaps = { ...caps };
    },
    hostCaps() {
      return { up: hostCaps.bandwidth_up_kbps, down: hostCaps.bandwidth_down_kbps };
    },
    capsFor(command) {
      return {
        up: command.bandwidth_up_kbps ?? hostCaps.bandwidth_up_kbps,
        down: command.bandwidth_down_kbps ?? hostCaps.bandwidth_down_kbps,
      };
    },
  };
}
