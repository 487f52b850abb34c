/**
 * @module restic/repository-probe
 * Asks a repository directly whether it answers: `restic cat --no-lock config`, the smallest
 * request that opens it (~0.6 s against a healthy rest-server; no lock, so it never meets the
 * job's). It stops at the first failure line restic prints (0.18 would retry for 15 minutes) or
 * after `timeoutMs` (a network that drops packets answers nothing at all).
 */
import type { Timers } from "../time/timers.js";
import { readBackendLine } from "./backend-failure.js";
import type { Restic, ResticRequest } from "./restic.js";
import type { ProbeAnswer } from "./unreachable-watch.js";

export async function probeRepository(
  restic: Restic,
  request: Pick<ResticRequest, "repository" | "fromRepository">,
  options: { timers: Timers; timeoutMs: number; signal: AbortSignal },
): Promise<ProbeAnswer> {
  // A copy reads one repository and writes another: either one failing is what restic waits on.
  const repositories = [request.repository, request.fromRepository].filter((repo) => repo !== undefined);
  for (const repository of repositories) {
    const controller = new AbortController();
    const stop = () => controller.abort();
    options.signal.addEventListener("abort", stop, { once: true });
    const cancelTimer = options.timers.after(options.timeoutMs, stop, { unref: true });
    let cause: string | undefined;
    const result = await restic.run({
      subcommand: "cat",
      args: ["--no-lock", "config"],
      repository,
      signal: controller.signal,
      onLine: (line) => {
        const read = line.stream === "stderr" ? readBackendLine(line.text) : undefined;
        if (read?.kind === "failure") {
          cause = read.cause;
          stop();
        }
      },
    });
    cancelTimer();
    options.signal.removeEventListener("abort", stop);
    if (result.kind !== "exited" || result.exitCode !== 0) {
      return { answered: false, cause };
    }
  }
  return { answered: true };
}
