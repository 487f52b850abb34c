/**
 * @module hosts/login-password-gate
 * A slot with a repository server login apart from its repository password (`login_password`,
 * protocol 11) goes only to agents that know the field. An older agent ignores it and logs in
 * with the repository password: rest-server refuses that login, or, while its htpasswd still
 * holds that password, the very login the operator meant to retire keeps working. Sending the
 * slot without the field would be the same mistake, so such a slot is not sent at all: a
 * credential edit for a connected older agent is refused, the hello leaves the slot out and
 * logs why, a job that needs the slot is not started, and the host page says why.
 */
import { type CredentialSlot, type Repository, SNAPSHOT_OWNER_PROTOCOL_VERSION } from "@fleetback/protocol";

/** Null (the agent never said hello) counts as older: nothing is known to speak protocol 11. */
export function speaksLoginPassword(protocolVersion: number | null): boolean {
  return (protocolVersion ?? 0) >= SNAPSHOT_OWNER_PROTOCOL_VERSION;
}

/** The end of a refusal's sentence, where the agent's own protocol is not at hand. */
export const LOGIN_NEEDS_UPGRADE = `its repository server login apart from the repository password (login_password) needs an agent of protocol ${SNAPSHOT_OWNER_PROTOCOL_VERSION} or later: update the host's agent, or remove login_password`;

/** The documented 409 of every credential slot's edit (the host's slots and the mirror's). */
export const LOGIN_PASSWORD_CONFLICT = `A login_password while an agent older than protocol ${SNAPSHOT_OWNER_PROTOCOL_VERSION} is connected.`;

/** Why `repository` may not go to an agent of `protocolVersion`; undefined when it may. */
export function loginWithheldReason(
  repository: Pick<Repository, "login_password">,
  protocolVersion: number | null,
): string | undefined {
  if (repository.login_password === undefined || speaksLoginPassword(protocolVersion)) {
    return undefined;
  }
  return `a repository server login apart from the repository password (login_password) needs an agent of protocol ${SNAPSHOT_OWNER_PROTOCOL_VERSION} or later; this host's agent speaks protocol ${protocolVersion ?? "unknown"}: update the agent, or remove login_password`;
}

export interface GatedSlots {
  pushable: Partial<Record<CredentialSlot, Repository>>;
  withheld: Array<{ slot: CredentialSlot; reason: string }>;
}

/** Splits a host's slots into those its agent may receive and those it may not, with why. */
export function gateSlots(
  credentials: Partial<Record<CredentialSlot, Repository>>,
  protocolVersion: number | null,
): GatedSlots {
  const gated: GatedSlots = { pushable: {}, withheld: [] };
  for (const slot of ["repo", "admin", "mirror"] as const) {
    const repository = credentials[slot];
    if (repository === undefined) {
      continue;
    }
    const reason = loginWithheldReason(repository, protocolVersion);
    if (reason === undefined) {
      gated.pushable[slot] = repository;
    } else {
      gated.withheld.push({ slot, reason });
    }
  }
  return gated;
}
