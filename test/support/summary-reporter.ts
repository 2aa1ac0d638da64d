import type { Reporter, TestModule } from "vitest/node";

// CI reads one closing line "N passed, N failed"; vitest does not print it by itself.
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>, reason: string): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const testModule of testModules) {
      for (const test of testModule.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else skipped++;
      }
      // A file that failed to load (or whose hooks threw) has no tests to count: count it as a failure.
      if (testModule.state() === "failed" && ![...testModule.children.allTests()].some((t) => t.result().state === "failed")) failed++;
    }
    failed += unhandledErrors.length;
    // A run that failed before any test (say, the global setup's build) must not read as green.
    if (reason === "failed" && failed === 0) failed = 1;
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`);
  }
}
