import { describe, expect, it } from "vitest";
import { createErrorCollector } from "./error-collector.js";

/**
 * The end of restic 0.14's `forget <id>` against rest-server --append-only (after ~45 s of
 * retries): the error, then a Go stack trace, exit 1, no `Fatal:` line (issue 31).
 */
const FORGET_0_14_APPEND_ONLY = `Remove(<snapshot/7148b69d08>) returned error, retrying after 15.394871241s: blob not removed, server response: 403 Forbidden (403)
blob not removed, server response: 403 Forbidden (403)
github.com/restic/restic/internal/backend/rest.(*Backend).Remove
\tgithub.com/restic/restic/internal/backend/rest/rest.go:399
github.com/restic/restic/internal/backend.(*RetryBackend).Remove.func1
\tgithub.com/restic/restic/internal/backend/backend_retry.go:108
github.com/cenkalti/backoff.RetryNotifyWithTimer
\tgithub.com/cenkalti/backoff/retry.go:55
main.deleteFiles.func2
\tgithub.com/restic/restic/cmd/restic/delete.go:47
golang.org/x/sync/errgroup.(*Group).Go.func1
\tgolang.org/x/sync/errgroup/errgroup.go:75
runtime.goexit
\truntime/asm_amd64.s:1594`;

function bestOf(stderr: string): string | undefined {
  const errors = createErrorCollector();
  for (const line of stderr.split("\n")) {
    errors.observe("stderr", line);
  }
  return errors.best();
}

describe("the error collector", () => {
  it("takes restic's sentence before a Go stack trace, never the trace's last line", () => {
    expect(bestOf(FORGET_0_14_APPEND_ONLY)).toBe("blob not removed, server response: 403 Forbidden (403)");
  });

  it("takes a panic's message, not its goroutine or frames", () => {
    const panic = [
      "panic: runtime error: index out of range [3] with length 3",
      "",
      "goroutine 1 [running]:",
      "main.main()",
      "\t/home/build/restic/cmd/restic/main.go:12 +0x1d",
      "exit status 2",
    ].join("\n");
    expect(bestOf(panic)).toBe("exit status 2");
    expect(bestOf(panic.replace("\nexit status 2", ""))).toBe(
      "panic: runtime error: index out of range [3] with length 3",
    );
  });

  it("still prefers a Fatal: line and the JSON exit_error, and otherwise the last line", () => {
    expect(bestOf(`Fatal: unable to open repository\n${FORGET_0_14_APPEND_ONLY}`)).toBe(
      "Fatal: unable to open repository",
    );
    expect(
      bestOf(
        '{"message_type":"exit_error","code":1,"message":"Fatal: unexpected HTTP response (403)"}\nlast',
      ),
    ).toBe("Fatal: unexpected HTTP response (403)");
    expect(bestOf("first\nsecond")).toBe("second");
  });
});
