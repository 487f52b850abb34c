/**
 * @module fleet/poll-fetch
 * fetch for the bench's polls (is the job done, is the list there): a connection reset under a
 * storm of 50,000 frames is retried, since a poll that fails says nothing about what is measured.
 * Answers, whatever their status, are returned as they are.
 */
export async function pollFetch(url: string, init: RequestInit, attempts = 5): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(url, init);
    } catch (error) {
      if (attempt >= attempts) {
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}
