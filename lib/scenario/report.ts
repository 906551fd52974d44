/** How a failed scenario reads in the runner's output: what was expected beside what came. */
import type { Expectation } from "./load.ts";
import type { ScenarioResult } from "./run.ts";
import { commandLine } from "./render.ts";

/** What the runner prints for a scenario: `ok <path>`, or `FAIL <path> step <id>` and the details. */
export function resultLines(result: ScenarioResult): string[] {
  const lines = result.failure
    ? [`FAIL ${result.scenario.file} step ${result.failure.step}`, ...describeFailure(result)]
    : [`ok ${result.scenario.file}`];
  if (result.kept) lines.push(`    kept ${result.kept}`);
  return lines;
}

/** The lines after `FAIL <path> step <id>`: the command, the mismatches, the expectation and the output. */
export function describeFailure(result: ScenarioResult): string[] {
  const failure = result.failure;
  if (!failure) return [];
  const lines: string[] = [];
  if (failure.argv) lines.push(`$ ${commandLine(failure.argv)}`);
  for (const message of failure.messages) lines.push(`- ${message}`);
  if (failure.expect && failure.outcome) {
    lines.push(`expected: ${describeExpectation(failure.expect)}`);
    lines.push(`came:     exit ${failure.outcome.code}`);
    lines.push(...block("stdout", failure.outcome.stdout), ...block("stderr", failure.outcome.stderr));
  }
  return lines.map((line) => `    ${line}`.trimEnd());
}

function describeExpectation(expect: Expectation): string {
  const parts = [`exit ${expect.exit}`];
  const list = (values: string[]) => values.map((v) => JSON.stringify(v)).join(", ");
  if (expect.stdout_contains?.length) parts.push(`stdout contains ${list(expect.stdout_contains)}`);
  if (expect.stdout_not_contains?.length) parts.push(`stdout lacks ${list(expect.stdout_not_contains)}`);
  if (expect.stderr_contains?.length) parts.push(`stderr contains ${list(expect.stderr_contains)}`);
  if (expect.stderr_not_contains?.length) parts.push(`stderr lacks ${list(expect.stderr_not_contains)}`);
  return parts.join("; ");
}

function block(name: string, text: string): string[] {
  if (text === "") return [`${name}: (empty)`];
  return [`${name}:`, ...text.replace(/\n$/, "").split("\n").map((line) => `  | ${line}`.trimEnd())];
}
