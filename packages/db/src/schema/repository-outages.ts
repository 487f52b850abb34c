/**
 * @module A host's repository that does not answer (issue 31): at most one ongoing outage per
 * host, from the first job that failed with `job.finished.repository_unreachable` until a job of
 * the host reaches the repository again, when the row is deleted.
 */
import { sql } from "drizzle-orm";
import { check, integer, pgTable, text } from "drizzle-orm/pg-core";
import { timestamptz } from "./columns.js";
import { jobs } from "./jobs.js";
import { hostIdKey } from "./references.js";

export const repositoryOutages = pgTable(
  "repository_outages",
  {
    hostId: hostIdKey(),
    // When the first failing job of this outage ended.
    since: timestamptz("since").notNull(),
    lastFailedAt: timestamptz("last_failed_at").notNull(),
    lastError: text("last_error").notNull(),
    lastJobId: text("last_job_id").references(() => jobs.id, { onDelete: "set null" }),
    failedJobs: integer("failed_jobs").notNull().default(1),
  },
  (t) => [check("repository_outages_failed_jobs_check", sql`${t.failedJobs} > 0`)],
);

export type RepositoryOutage = typeof repositoryOutages.$inferSelect;
export type NewRepositoryOutage = typeof repositoryOutages.$inferInsert;
