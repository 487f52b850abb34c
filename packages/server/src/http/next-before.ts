/**
 * @module http/next-before
 * Lists paged newest first by id (alerts, jobs, the audit trail), as JSON and as pages: a full
 * page may have more behind it, so the next one starts before its last row; a short page is the
 * end, and says so by having no cursor at all.
 */

/** The `before` of the page after `rows`, a page of at most `limit`; none after the last. */
export function nextBefore(rows: readonly { id: string }[], limit: number): string | undefined {
  return rows.length === limit ? rows.at(-1)?.id : undefined;
}
