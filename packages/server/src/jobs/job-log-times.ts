/**
 * @module jobs/job-log-times
 * The time a log line is stored and streamed with, read from the agent's `ts`. Lines come in
 * bursts within one millisecond, so the last time read is kept and a line with the same text
 * reuses it rather than parsing and printing it again (issue 40, B3).
 */

export interface LineTime {
  ts: Date;
  /** `ts` as the database takes it (ISO 8601). */
  text: string;
}

/** `now`: the time of a line whose own ts is no real time. */
export function createLineTimes(now: () => number): (sent: string) => LineTime {
  let last: { sent: string | undefined; time: LineTime } = {
    sent: undefined,
    time: { ts: new Date(0), text: "" },
  };
  return (sent) => {
    if (sent !== last.sent) {
      // The protocol's pattern admits a few times JavaScript cannot read (second 60): such a line
      // would fail its whole batch, so it takes the time it arrived (and is not remembered).
      const given = new Date(sent);
      const valid = !Number.isNaN(given.getTime());
      const ts = valid ? given : new Date(now());
      last = { sent: valid ? sent : undefined, time: { ts, text: ts.toISOString() } };
    }
    return last.time;
  };
}
