import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withTempDir } from "../../lib/testing/fixtures.ts";
import { fileCounts, runTestFiles, startOrder } from "./unit.ts";
import { closingLines, readCounts } from "./_counts.ts";

/** uvu's closing summary, as a test file's process prints it. */
const summary = (total: number, passed: number, skipped = 0) =>
  `\n  Total:     ${total}\n  Passed:    ${passed}\n  Skipped:   ${skipped}\n  Duration:  1.00ms\n\n`;

/**
 * A stand-in test file: it says it started, waits up to `waitMs` for `other` to have
 * started too, and prints uvu's summary of one test, passed only if it saw the other.
 */
const waitingFile = (dir: string, name: string, other: string, waitMs: number) => {
  const file = join(dir, `${name}.test.ts`);
  writeFileSync(file, [
    'import { existsSync, writeFileSync } from "node:fs";',
    `writeFileSync(${JSON.stringify(join(dir, `${name}.started`))}, "");`,
    `const deadline = Date.now() + ${waitMs};`,
    `while (!existsSync(${JSON.stringify(join(dir, `${other}.started`))}) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));`,
    `const saw = existsSync(${JSON.stringify(join(dir, `${other}.started`))});`,
    `console.log("${name} " + (saw ? "saw ${other}" : "ran alone"));`,
    `process.stdout.write(${JSON.stringify(summary(1, 1))}.replace("Passed:    1", "Passed:    " + (saw ? 1 : 0)));`,
    "if (!saw) process.exitCode = 1;",
  ].join("\n"));
  return file;
};

test("test files run each in a process of its own, side by side, each one's output printed whole under its name", () => withTempDir(async (dir) => {
  const files = [waitingFile(dir, "a", "b", 30_000), waitingFile(dir, "b", "a", 30_000)];
  const printed: string[] = [];
  const results = await runTestFiles(files, 2, (text) => printed.push(text));
  assert.equal(results.map((r) => [r.passed, r.failed]), [[1, 0], [1, 0]], printed.join(""));
  assert.equal(printed.length, 2);
  for (const name of ["a", "b"]) {
    const block = printed.find((text) => text.includes(`${name}.test.ts (`))!;
    assert.match(block, `${name} saw ${name === "a" ? "b" : "a"}`);
    assert.not.match(block, "Total:", "uvu's summary is counted, not printed per file");
  }
}));

test("with one job the files run one after another", () => withTempDir(async (dir) => {
  const files = [waitingFile(dir, "a", "b", 300), waitingFile(dir, "b", "a", 300)];
  const results = await runTestFiles(files, 1, () => {});
  assert.ok(existsSync(join(dir, "b.started")));
  // a waited for b in vain; b found a's mark, left before it began.
  assert.equal(results.map((r) => [r.passed, r.failed]), [[0, 1], [1, 0]]);
}));

test("each test file leads a process group of its own, so a foreground session it runs never waits on the files beside it", () => withTempDir(async (dir) => {
  const file = join(dir, "group.test.ts");
  writeFileSync(file, [
    'import { readFileSync } from "node:fs";',
    'const stat = readFileSync("/proc/self/stat", "utf8");',
    'const own = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]) === process.pid;',
    `process.stdout.write(${JSON.stringify(summary(1, 1))}.replace("Passed:    1", "Passed:    " + (own ? 1 : 0)));`,
  ].join("\n"));
  const [result] = await runTestFiles([file], 1, () => {});
  assert.equal([result.passed, result.failed], [1, 0], result.output);
}));

test("a file's counts come from uvu's summary; a process that ends without one, or fails with none failed, is one failure", () => {
  assert.equal(fileCounts(`• ✘   (1 / 2)${summary(2, 1)}`, "exited 1"), { passed: 1, failed: 1, skipped: 0, output: "• ✘   (1 / 2)\n" });
  assert.equal(fileCounts(`• •${summary(2, 2, 3)}`, "exited 0").skipped, 3, "skipped tests are apart from uvu's total");
  assert.equal(fileCounts(`\x1b[32m• •\x1b[39m${summary(2, 2).replace("Passed", "\x1b[32mPassed")}`, "exited 0").failed, 0);
  const none = fileCounts("Error: Cannot find module\n", "exited 1");
  assert.equal([none.passed, none.failed], [0, 1]);
  assert.match(none.output, "this file's process exited 1 before uvu reported its counts");
  const early = fileCounts(`• •${summary(2, 2)}Exiting early\n`, "was ended by SIGKILL");
  assert.equal([early.passed, early.failed], [2, 1]);
  assert.match(early.output, "this file's process was ended by SIGKILL though every test passed");
});

test("a test the machine cannot run is skipped with its reason printed, and counted apart: never passed, never failed", () => withTempDir(async (dir) => {
  const file = join(dir, "skips.test.ts");
  writeFileSync(file, [
    `import { test } from ${JSON.stringify(new URL("../../node_modules/uvu/dist/index.mjs", import.meta.url).href)};`,
    `import { skipWhen } from ${JSON.stringify(new URL("../../lib/testing/skip.ts", import.meta.url).href)};`,
    'skipWhen(test, "no browser: none for this platform")("drives the browser", () => { throw new Error("ran"); });',
    'skipWhen(test, null)("runs here", () => {});',
    "test.run();",
  ].join("\n"));
  const [result] = await runTestFiles([file], 1, () => {});
  assert.equal([result.passed, result.failed, result.skipped], [1, 0, 1], result.output);
  assert.match(result.output, /^skipped, no browser: none for this platform$/m);
}));

test("npm test's closing lines: the skipped with their reasons above `N passed, N failed`, which stays last", () => {
  const unit = readCounts("lib/web/browser.test.ts (1.0 s)\nunit tests on node: 5 passed, 0 failed, 2 skipped\nskipped, no browser: RA_CHROMIUM names \"/x\", which does not exist\n");
  assert.equal(unit, { passed: 5, failed: 0, skipped: { count: 2, reasons: ['skipped, no browser: RA_CHROMIUM names "/x", which does not exist'] } });
  assert.equal(readCounts("unit tests on deno: 7 passed, 1 failed\n"), { passed: 7, failed: 1 });
  assert.is(readCounts("no counts here"), undefined);
  const lines = closingLines([unit!, { passed: 3, failed: 0 }, { passed: 1, failed: 0, skipped: { count: 2, reasons: unit!.skipped!.reasons } }]);
  assert.is(lines, '4 skipped: skipped, no browser: RA_CHROMIUM names "/x", which does not exist\n9 passed, 0 failed');
  assert.is(closingLines([{ passed: 2, failed: 1 }]), "2 passed, 1 failed");
});

test("the files known to take longest start first, then larger files before smaller", () => withTempDir(async (dir) => {
  const small = join(dir, "small.test.ts");
  const large = join(dir, "large.test.ts");
  writeFileSync(small, "x");
  writeFileSync(large, "x".repeat(100));
  const crash = new URL("../../lib/crash/crash.test.ts", import.meta.url).pathname;
  assert.equal(startOrder([small, large, crash]), [crash, large, small]);
}));

test.run();
