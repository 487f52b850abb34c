// A vitest reporter that records each finished test's time beside its timeout, for
// scripts/test-summary.mjs to name the tests that took more than half of it. A timeout is a hang
// guard, not a budget (issue 32): a test that needs half of it on one machine fails on a busier
// one. The JSON report vitest writes has each test's time but not its timeout.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

export class TimeoutMarginReporter {
  /** @param {string} outputFile @param {number} defaultTimeoutMs */
  constructor(outputFile, defaultTimeoutMs) {
    this.outputFile = outputFile;
    this.defaultTimeoutMs = defaultTimeoutMs;
    /** @type {Array<{ file: string, name: string, durationMs: number, timeoutMs: number }>} */
    this.tests = [];
  }

  onTestCaseResult(testCase) {
    const diagnostic = testCase.diagnostic();
    if (!diagnostic || testCase.result().state !== "passed") {
      return;
    }
    this.tests.push({
      file: testCase.module.moduleId,
      name: testCase.fullName,
      durationMs: Math.round(diagnostic.duration),
      timeoutMs: testCase.options.timeout ?? this.defaultTimeoutMs,
    });
  }

  onTestRunEnd() {
    mkdirSync(dirname(this.outputFile), { recursive: true });
    writeFileSync(this.outputFile, `${JSON.stringify(this.tests)}\n`);
  }
}
