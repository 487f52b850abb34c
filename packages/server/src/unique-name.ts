/**
 * @module unique-name
 * Names unique by a database constraint: the write that would take a name already taken answers
 * 409 on the name field, decided by the constraint itself, so two requests racing for one name
 * cannot both win.
 */
import { isUniqueViolation } from "@fleetback/db";
import { conflict } from "./errors.js";

/** Runs `write`; a violation of `constraint` becomes "name: `thing` named `name` already exists". */
export async function withUniqueName<T>(
  constraint: string,
  thing: string,
  name: string,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err, constraint)) {
      throw conflict(`name: ${thing} named ${name} already exists`, [{ field: "name", message: "is taken" }]);
    }
    throw err;
  }
}
