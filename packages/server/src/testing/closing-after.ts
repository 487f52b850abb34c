/**
 * @module testing/closing-after
 * For tests that start their own app inside the test, on the database their suite hands them,
 * rather than in a hook: what they started is closed when the test ends, passed or failed.
 */

/** Awaits `started`, runs `test` on it, then closes its deps whether the test passed or not. */
export async function closingAfter<S extends { deps: { close(): Promise<void> } }>(
  started: Promise<S>,
  test: (started: S) => Promise<void>,
): Promise<void> {
  const opened = await started;
  try {
    await test(opened);
  } finally {
    await opened.deps.close();
  }
}
