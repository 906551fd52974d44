/** Checking one step's outcome against its `expect`: exit code, output fragments, files. */
import { readFileSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { isGlob, matchPaths } from "./glob.ts";
import type { Expectation } from "./load.ts";

/** What a step did, with stdout and stderr already normalised. */
export interface StepOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Every way the outcome differs from the expectation (empty when it matches). File paths
 * are relative to `cwd`; `normalise` turns a file's content into what fragments are matched against.
 */
export function checkExpectation(expect: Expectation, outcome: StepOutcome, cwd: string, normalise: (text: string) => string): string[] {
  const failures: string[] = [];
  if (outcome.code !== expect.exit) failures.push(`exit: expected ${expect.exit}, got ${outcome.code}`);
  for (const stream of ["stdout", "stderr"] as const) {
    for (const fragment of expect[`${stream}_contains`] ?? []) {
      if (!outcome[stream].includes(fragment)) failures.push(`${stream}: expected to contain ${JSON.stringify(fragment)}`);
    }
    for (const fragment of expect[`${stream}_not_contains`] ?? []) {
      if (outcome[stream].includes(fragment)) failures.push(`${stream}: expected not to contain ${JSON.stringify(fragment)}`);
    }
  }
  for (const path of expect.files_exist ?? []) {
    if (!matchPaths(cwd, path).length) failures.push(`files_exist: ${describe(path)} ${isGlob(path) ? "matches nothing" : "does not exist"}`);
  }
  for (const path of expect.files_absent ?? []) {
    const found = matchPaths(cwd, path);
    if (found.length) failures.push(`files_absent: ${describe(path)} ${isGlob(path) ? `matches ${found.map(describe).join(", ")}` : "exists"}`);
  }
  for (const [path, fragments] of Object.entries(expect.files_contain ?? {})) {
    failures.push(...checkFileContains(cwd, path, fragments, normalise));
  }
  return failures;
}

function checkFileContains(cwd: string, path: string, fragments: string[], normalise: (text: string) => string): string[] {
  const found = matchPaths(cwd, path);
  if (found.length !== 1) {
    if (!found.length) return [`files_contain: ${describe(path)} ${isGlob(path) ? "matches nothing" : "does not exist"}`];
    return [`files_contain: ${describe(path)} matches ${found.length} files (${found.map(describe).join(", ")}), expected exactly one`];
  }
  const full = isAbsolute(found[0]) ? found[0] : join(cwd, found[0]);
  if (!statSync(full).isFile()) return [`files_contain: ${describe(found[0])} is not a file`];
  const content = normalise(readFileSync(full, "utf8"));
  return fragments
    .filter((fragment) => !content.includes(fragment))
    .map((fragment) => `files_contain: ${describe(found[0])} does not contain ${JSON.stringify(fragment)}`);
}

function describe(path: string): string {
  return JSON.stringify(path);
}
