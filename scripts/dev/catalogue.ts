/**
 * `npm run catalogue [-- --check]`: re-runs every scenario on Node and writes `catalogue/`
 * (a page per scenario, an index, a command reference from the commands' own help, the
 * dashboard's page), then runs the browser tests (lib/web/browser.test.ts), which take the
 * dashboard's screenshots into catalogue/screenshots/.
 * With `--check` it writes nothing and fails (exit 1, as CI expects of a stale build) when the committed catalogue differs.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { runMain } from "../../lib/cli.ts";
import { RobotArmyError, UsageError } from "../../lib/errors.ts";
import { buildCatalogue, compareCatalogue, renderCommandReference, writeCatalogue } from "../../lib/scenario/catalogue.ts";
import type { CatalogueDrift } from "../../lib/scenario/catalogue.ts";
import { DASHBOARD_SHOTS, SHOTS_DIR } from "../../lib/scenario/dashboard-shots.ts";
import { loadScenarios, PROJECT_ROOT } from "../../lib/scenario/load.ts";
import { resultLines } from "../../lib/scenario/report.ts";
import { runScenarios } from "../../lib/scenario/run.ts";
import { COMMANDS, overview } from "../robot-army.ts";

const USAGE = `Usage: npm run catalogue -- [--check]

Re-runs every scenario on Node and writes catalogue/ from what they printed.

Options:
  --check     Write nothing; exit 1 when the committed catalogue differs from what the code produces
  -h, --help  Show this help
`;

/** Writes (or checks) the catalogue; any failing scenario fails it before anything is written. */
export async function main(argv: string[]): Promise<number> {
  let values;
  try {
    values = parseArgs({ args: argv, options: { check: { type: "boolean" }, help: { type: "boolean", short: "h" } } }).values;
  } catch (error) {
    throw new UsageError((error as Error).message.split(". ")[0], USAGE);
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const { scenarios, problems } = await loadScenarios();
  if (problems.length) throw new RobotArmyError(`Cannot write the catalogue, a scenario is invalid:\n${problems.join("\n")}`);
  const results = await runScenarios(scenarios, { runtime: "node", jobs: 2 }, (result) => {
    if (result.failure) console.log(resultLines(result).join("\n"));
  });
  const failed = results.filter((r) => r.failure);
  if (failed.length) throw new RobotArmyError(`Cannot write the catalogue: ${failed.length} of ${results.length} scenario(s) failed`);
  if (values.check) {
    const stale = await catalogueStaleness(results);
    if (stale) throw new RobotArmyError(stale);
    console.log("catalogue is fresh");
    return 0;
  }
  const files = buildCatalogue(results, await renderCommandReference(overview(), COMMANDS));
  const drift = writeCatalogue(join(PROJECT_ROOT, "catalogue"), files);
  console.log(hasDrift(drift) ? describeDrift(drift, { stale: "updated:", missing: "added:  ", extra: "removed:" }) : "  nothing changed");
  console.log(`wrote catalogue/ (${files.size} pages)`);
  takeScreenshots();
  console.log(`took the dashboard's screenshots: catalogue/${SHOTS_DIR}/ (${DASHBOARD_SHOTS.map((s) => s.file).join(", ")})`);
  return 0;
}

/**
 * Whether the committed catalogue is what these results (every scenario, run on Node) and
 * the commands' help produce: null when it is, else what differs, in one message. The
 * scenarios stage of `npm test` asks this of its own run, so the suite runs them once.
 */
export async function catalogueStaleness(results: Parameters<typeof buildCatalogue>[0]): Promise<string | null> {
  const files = buildCatalogue(results, await renderCommandReference(overview(), COMMANDS));
  const drift = compareCatalogue(join(PROJECT_ROOT, "catalogue"), files);
  return hasDrift(drift) ? `The catalogue differs from what the code produces; run \`npm run catalogue\`:\n${describeDrift(drift)}` : null;
}

/** The browser tests on Node, told to leave their screenshots in the catalogue; a failing one fails the catalogue. */
function takeScreenshots(): void {
  const run = spawnSync(process.execPath, [join(PROJECT_ROOT, "lib", "web", "browser.test.ts")], {
    env: { ...process.env, RA_SCREENSHOTS: join(PROJECT_ROOT, "catalogue", SHOTS_DIR) }, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8",
  });
  if (run.status !== 0) throw new RobotArmyError(`Cannot take the dashboard's screenshots: the browser tests failed:\n${run.stdout}`);
}

function hasDrift(drift: CatalogueDrift): boolean {
  return drift.stale.length + drift.missing.length + drift.extra.length > 0;
}

/** One line per page that differs, in the words of a check or of a write. */
function describeDrift(drift: CatalogueDrift, words = { stale: "stale:  ", missing: "missing:", extra: "extra:  " }): string {
  const lines = [
    ...drift.stale.map((path) => `  ${words.stale} catalogue/${path}`),
    ...drift.missing.map((path) => `  ${words.missing} catalogue/${path}`),
    ...drift.extra.map((path) => `  ${words.extra} catalogue/${path}`),
  ];
  return lines.join("\n");
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
