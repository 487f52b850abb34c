/**
 * @module keepers/protection-push
 * What a protected host's agent is told about the slots it must not hold (admin: delete authority
 * over its repository; mirror: over the mirror). An agent of protocol 12 forgets them
 * (`config.update` `clear`); an older one cannot, so its admin and mirror slots are overwritten
 * with the host's own append-and-read credential, which leaves it no authority its `repo` slot
 * lacks. Sent on every hello and when the host becomes protected.
 */
import { type ConfigUpdate, KEEPER_PROTOCOL_VERSION, type Repository } from "@fleetback/protocol";

const GUARDED_SLOTS = ["admin", "mirror"] as const;

export function withdrawalFrames(
  protocolVersion: number | null,
  hostCredential: Repository | undefined,
): ConfigUpdate[] {
  if ((protocolVersion ?? 0) >= KEEPER_PROTOCOL_VERSION) {
    return GUARDED_SLOTS.map((slot) => ({ slot, clear: true as const }));
  }
  if (hostCredential === undefined) {
    return [];
  }
  return GUARDED_SLOTS.map((slot) => ({ slot, repository: hostCredential }));
}
