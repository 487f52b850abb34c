/**
 * @module restore/restore-fields
 * The formats of the fields the restore wizard and its JSON twin accept, so a page and its API
 * refuse the same values.
 */
import { SNAPSHOT_ID_PATTERN } from "@fleetback/protocol";
import { Type } from "typebox";
import { WIZARD_SESSION_PATTERN } from "./restore-wizard.js";

export const WizardSession = Type.String({
  pattern: WIZARD_SESSION_PATTERN,
  description: "wizard session id",
});
export const SnapshotIdField = Type.String({ pattern: SNAPSHOT_ID_PATTERN, description: "hex snapshot id" });
export const TreePath = Type.String({ pattern: "^/", maxLength: 4096, description: "absolute path" });
export const PathText = Type.String({ maxLength: 4096 });
