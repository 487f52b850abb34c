/**
 * @module auth/user-view
 * A user as the JSON API shows it: never the password hash or anything else of the row.
 */
import type { UserRole } from "@fleetback/db";

export function userView(user: { id: string; username: string; role: UserRole; ssoSubject: string | null }) {
  // `sso`: the user signs in through the OpenID provider and has no local password.
  return { id: user.id, username: user.username, role: user.role, sso: user.ssoSubject !== null };
}
