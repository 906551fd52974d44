/** `robot-army holds`: what dispatch is told to leave alone: the pause, held repositories and held items. */
import type { CommandDef, Write } from "../lib/cli.ts";
import { JSON_OPTION, parse, runMain, writeStdout } from "../lib/cli.ts";
import { describeHold, listHolds, pauseState, reasonText } from "../lib/dispatch/controls.ts";
import type { Hold, Pause } from "../lib/dispatch/controls.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { withExistingStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { CONFIG_OPTION, checkConfigOption } from "../lib/config-path.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "holds",
  summary: "List held work items and repositories, and the pause",
  usage: "holds [--json] [--config FILE]",
  description: "Repositories first, then items, each oldest first, with when and why they were held.",
  options: { json: JSON_OPTION, config: CONFIG_OPTION },
  examples: ["robot-army holds", "robot-army holds --json"],
};

/** What `holds --json` prints. */
export interface HoldsReport {
  paused: Pause | null;
  holds: Array<Hold & { what: string }>;
}

/** Parses argv, opens what the command reads, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  checkConfigOption(args);
  return await withExistingStore(stateDirPath(), async (store) => {
    return run({ json: args.values.json === true }, { store, write: writeStdout });
  });
}

/** Prints the pause and the holds. */
export function run(opts: { json: boolean }, deps: { store: Store | undefined; write: Write }): number {
  const { store } = deps;
  const report: HoldsReport = {
    paused: store ? pauseState(store) ?? null : null,
    holds: store ? listHolds(store).map((h) => ({ ...h, what: describeHold(store, h) })) : [],
  };
  deps.write(opts.json ? JSON.stringify(report, null, 2) + "\n" : formatHolds(report).map((line) => line + "\n").join(""));
  return 0;
}

/** The report as lines of text. */
export function formatHolds(report: HoldsReport): string[] {
  const reason = reasonText;
  const lines: string[] = [];
  if (report.paused) lines.push(`dispatch paused since ${report.paused.since}${reason(report.paused.reason)}`);
  if (report.holds.length === 0) lines.push("no holds");
  for (const hold of report.holds) lines.push(`${hold.what}: held since ${hold.set_at}${reason(hold.reason)}`);
  return lines;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
