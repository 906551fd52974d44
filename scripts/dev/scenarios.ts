/**
 * `npm run scenarios [-- <filter>] [--runtime node|deno] [--jobs N] [--keep] [--check-catalogue]`:
 * runs every scenario under `scenarios/` (or those whose path contains the filter) against
 * the real binary, one line each, and ends with `N passed, N failed`. With
 * `--check-catalogue` (every scenario, on Node) the same run also checks that the committed
 * catalogue is what it produces, counted as one more check: `npm test` runs the scenarios
 * once for both.
 */
import { parseArgs } from "node:util";
import { runMain } from "../../lib/cli.ts";
import { UsageError } from "../../lib/errors.ts";
import { loadScenarios } from "../../lib/scenario/load.ts";
import { resultLines } from "../../lib/scenario/report.ts";
import { runScenarios } from "../../lib/scenario/run.ts";
import type { Runtime } from "../../lib/scenario/setup.ts";
import { catalogueStaleness } from "./catalogue.ts";

const USAGE = `Usage: npm run scenarios -- [filter] [options]

Runs the scenarios under scenarios/ whose path contains the filter (all of them without one).

Options:
  --runtime node|deno  The runtime that runs each step's robot-army (default node)
  --jobs N             How many scenarios run at once (default 2)
  --keep               Keep each scenario's temp dir and print where it is
  --check-catalogue    Also check that catalogue/ is what this run produces (all scenarios, on node)
  -h, --help           Show this help
`;

/** Runs the scenarios; exit 1 when any failed or none matched. */
export async function main(argv: string[]): Promise<number> {
  const options = parseOptions(argv);
  if (!options) {
    process.stdout.write(USAGE);
    return 0;
  }
  const { scenarios, problems } = await loadScenarios(undefined, options.filter);
  if (problems.length) {
    for (const problem of problems) console.log(problem);
    console.log(`0 passed, ${problems.length} failed`);
    return 1;
  }
  if (!scenarios.length) {
    console.log(options.filter ? `No scenario path contains "${options.filter}"` : "No scenarios under scenarios/");
    console.log("0 passed, 0 failed");
    return 1;
  }
  const results = await runScenarios(scenarios, options, (result) => console.log(resultLines(result).join("\n")));
  let failed = results.filter((r) => r.failure).length;
  let passed = results.length - failed;
  if (options.checkCatalogue) {
    // Pages are made only from a run where every scenario passed; a failure already fails the run.
    const stale = failed ? "the catalogue was not checked: a scenario failed" : await catalogueStaleness(results);
    console.log(stale ?? "catalogue is fresh");
    if (stale) failed++;
    else passed++;
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

function parseOptions(argv: string[]): { filter?: string; runtime: Runtime; jobs: number; keep: boolean; checkCatalogue: boolean } | undefined {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        runtime: { type: "string", default: "node" },
        jobs: { type: "string", default: "2" },
        keep: { type: "boolean", default: false },
        "check-catalogue": { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message.split(". ")[0], USAGE);
  }
  const { values, positionals } = parsed;
  if (values.help) return undefined;
  if (values.runtime !== "node" && values.runtime !== "deno") throw new UsageError(`--runtime must be node or deno, got "${values.runtime}"`, USAGE);
  if (!/^[1-9]\d*$/.test(values.jobs)) throw new UsageError(`--jobs must be a whole number of at least 1, got "${values.jobs}"`, USAGE);
  if (positionals.length > 1) throw new UsageError(`Unexpected argument "${positionals[1]}"`, USAGE);
  const checkCatalogue = values["check-catalogue"];
  if (checkCatalogue && (positionals.length || values.runtime !== "node")) {
    throw new UsageError("--check-catalogue needs every scenario, run on node: the catalogue is made from that run", USAGE);
  }
  return { filter: positionals[0], runtime: values.runtime, jobs: Number(values.jobs), keep: values.keep, checkCatalogue };
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
