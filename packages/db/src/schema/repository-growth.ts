/**
 * @module How big each host's repository was, day by day: the history behind the fleet's
 * repository growth chart (repo_stats holds only the latest size).
 */
import { bigint, date, index, pgTable, primaryKey } from "drizzle-orm/pg-core";
import { timestamptz } from "./columns.js";
import { hostIdColumn } from "./references.js";

/** One row per host and UTC day; the day's last repo.stats carrying a size overwrites it. */
export const repositorySizes = pgTable(
  "repository_sizes",
  {
    hostId: hostIdColumn(),
    // "YYYY-MM-DD" in UTC, so a change of FLEETBACK_TZ never splits or merges recorded days.
    day: date("day", { mode: "string" }).notNull(),
    rawSizeBytes: bigint("raw_size_bytes", { mode: "number" }),
    totalSizeBytes: bigint("total_size_bytes", { mode: "number" }),
    recordedAt: timestamptz("recorded_at").notNull(),
  },
  (t) => [
    primaryKey({ name: "repository_sizes_pkey", columns: [t.hostId, t.day] }),
    index("repository_sizes_day_idx").on(t.day),
  ],
);

export type RepositorySize = typeof repositorySizes.$inferSelect;
export type NewRepositorySize = typeof repositorySizes.$inferInsert;
