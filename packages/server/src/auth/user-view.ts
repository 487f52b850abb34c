/**
 * @module auth/user-view
 * A user as the JSON API shows it: never the password hash or anything else of the row.
 */
import type { UserRole } from "@fleetback/db";

export function userView(user: { id: string; username: string; role: UserRole }) {
  return { id: user.id, username: user.username, role: user.role };
}
