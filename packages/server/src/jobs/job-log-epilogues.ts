/**
 * @module jobs/job-log-epilogues
 * The epilogues the job log writer still takes: for each recently ended job, the seq its own log
 * ended at and the next seq an epilogue line gets. An agent logs two or three lines after a job's
 * result (a backup's snapshot list and repository statistics); a line past EPILOGUE_LINES, or for
 * a job ended longer ago than the last REMEMBERED ones, is not kept as the job's.
 */

/** Lines an agent may log after a job's result. */
export const EPILOGUE_LINES = 50;
/** Ended jobs whose epilogue is still taken; the oldest is forgotten first. */
const REMEMBERED = 4_096;

export interface Epilogue {
  endSeq: number;
  next: number;
}

export interface Epilogues {
  get(key: string): Epilogue | undefined;
  /** The job's own log ended at `endSeq`: its epilogue starts after it. */
  remember(key: string, endSeq: number): Epilogue;
  clear(): void;
}

export function createEpilogues(remembered = REMEMBERED): Epilogues {
  const epilogues = new Map<string, Epilogue>();
  return {
    get: (key) => epilogues.get(key),
    remember(key, endSeq) {
      const epilogue = { endSeq, next: endSeq + 1 };
      epilogues.delete(key);
      epilogues.set(key, epilogue);
      if (epilogues.size > remembered) {
        const oldest = epilogues.keys().next().value;
        if (oldest !== undefined) {
          epilogues.delete(oldest);
        }
      }
      return epilogue;
    },
    clear: () => epilogues.clear(),
  };
}

/** The seq for the epilogue's next line, or undefined once it has all it may have. */
export function takeEpilogueSeq(epilogue: Epilogue): number | undefined {
  if (epilogue.next - epilogue.endSeq > EPILOGUE_LINES) {
    return undefined;
  }
  epilogue.next += 1;
  return epilogue.next - 1;
}
