/**
 * @module restic/credential-store
 * Repository and admin credentials and host-wide caps, as the server pushed them. They live in
 * this process's memory only: never written to disk, never logged, never echoed. After a restart
 * the server pushes them again on hello, before any command can arrive.
 */
import {
  type Caps,
  type CommandRun,
  type CredentialSlot,
  JOB_CREDENTIALS_MAX,
  type Repository,
} from "@fleetback/protocol";
import type { BandwidthCaps } from "./restic.js";

export interface CredentialStore {
  setRepository(slot: CredentialSlot, repository: Repository): void;
  repository(slot: CredentialSlot): Repository | undefined;
  /** The slot holds nothing after (protocol 12: the host became protected). */
  clearRepository(slot: CredentialSlot): void;
  setCaps(caps: Caps): void;
  /** Per-job caps override the host-wide ones, direction by direction. */
  capsFor(command: CommandRun): BandwidthCaps;
  /** The host-wide caps alone, for work that is not a job (tree browsing). */
  hostCaps(): BandwidthCaps;
  /** Credentials pushed for one job (protocol 12, `config.update.job_id`): never the agent's own. */
  setJobRepository(jobId: string, slot: CredentialSlot, repository: Repository): void;
  /** Forgets what was pushed for the job; called whenever the job ends. */
  dropJob(jobId: string): void;
  /**
   * The store a job's steps read: a `kept` job sees only its own credentials, the `admin` set
   * serving as its repository too (a keeper works with delete authority), except for a restore
   * from another host's repository, which reads with the `repo` set alone (it never needs more);
   * any other job the agent's own slots.
   */
  forCommand(command: CommandRun): CredentialStore;
}

export function createCredentialStore(): CredentialStore {
  // Closure state rather than object fields: JSON.stringify or util.inspect of the store
  // (say, in a careless debug log) shows no credentials.
  const slots = new Map<CredentialSlot, Repository>();
  // Insertion order is age: past the bound the oldest job's set goes, so a server that pushes
  // and never follows with the command cannot grow this without end.
  const jobSlots = new Map<string, Map<CredentialSlot, Repository>>();
  let hostCaps: Caps = { bandwidth_up_kbps: null, bandwidth_down_kbps: null };
  const store: CredentialStore = {
    setRepository(slot, repository) {
      slots.set(slot, { ...repository });
    },
    repository(slot) {
      return slots.get(slot);
    },
    clearRepository(slot) {
      slots.delete(slot);
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
    setJobRepository(jobId, slot, repository) {
      const held = jobSlots.get(jobId) ?? new Map<CredentialSlot, Repository>();
      held.set(slot, { ...repository });
      jobSlots.set(jobId, held);
      while (jobSlots.size > JOB_CREDENTIALS_MAX) {
        const oldest = jobSlots.keys().next().value;
        if (oldest === undefined) {
          break;
        }
        jobSlots.delete(oldest);
      }
    },
    dropJob(jobId) {
      jobSlots.delete(jobId);
    },
    forCommand(command) {
      if (command.kept !== true) {
        return store;
      }
      const jobId = command.job_id;
      return {
        ...store,
        repository(slot) {
          const held = jobSlots.get(jobId);
          if (command.kind === "restore") {
            return slot === "repo" ? held?.get("repo") : undefined;
          }
          return slot === "mirror" ? held?.get("mirror") : (held?.get(slot) ?? held?.get("admin"));
        },
        forCommand: () => store.forCommand(command),
      };
    },
  };
  return store;
}
