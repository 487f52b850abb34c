/**
 * @module Foreign-key columns to the two tables most others point at: hosts and users.
 *
 * A host's rows go with the host (cascade); a user's deletion leaves what the user did in place
 * and forgets who did it (set null).
 */
import { text } from "drizzle-orm/pg-core";
import { users } from "./auth.js";
import { hosts } from "./hosts.js";

/** `host_id text not null references hosts(id) on delete cascade`: one of many rows of a host. */
export function hostIdColumn() {
  return text("host_id")
    .notNull()
    .references(() => hosts.id, { onDelete: "cascade" });
}

/** `host_id text primary key references hosts(id) on delete cascade`: the host's one row. */
export function hostIdKey() {
  return text("host_id")
    .primaryKey()
    .references(() => hosts.id, { onDelete: "cascade" });
}

/** A nullable `references users(id) on delete set null`: the user who acted, if still there. */
export function userRef(name: string) {
  return text(name).references(() => users.id, { onDelete: "set null" });
}
