/**
 * @module hosts/slot-view
 * What the host page and GET /api/hosts/{id} show of a credential slot: bound or not, the URL
 * without credentials, the user, and whether a separate login password is set; never a password.
 * A slot the host's agent is too old to receive says why, as the hello that left it out logged.
 */
import { redactUrl } from "@fleetback/crypto";
import type { SlotState } from "./credentials.js";
import { loginWithheldReason } from "./login-password-gate.js";

export interface SlotView {
  state: "absent" | "bound" | "unreadable";
  url?: string;
  username?: string;
  /** Bound slots only: the repository server login is apart from the repository password. */
  login_password_set?: boolean;
  /** Why the slot is not sent to the host's agent (hosts/login-password-gate.ts). */
  withheld_reason?: string;
}

/** `protocolVersion` null: no agent has said hello yet, so none was refused anything. */
export function slotView(slot: SlotState, protocolVersion: number | null): SlotView {
  if (slot.state !== "bound") {
    return { state: slot.state };
  }
  const { credentials } = slot;
  const view: SlotView = { state: "bound", url: redactUrl(credentials.url) };
  if (credentials.username) {
    view.username = credentials.username;
  }
  view.login_password_set = credentials.login_password !== undefined;
  const withheld = protocolVersion === null ? undefined : loginWithheldReason(credentials, protocolVersion);
  if (withheld !== undefined) {
    view.withheld_reason = withheld;
  }
  return view;
}
