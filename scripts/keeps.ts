/** `robot-army keeps`: every keep in force, with the session it covers or `no live session`. */
import type { CommandDef, Write } from "../lib/cli.ts";
import { JSON_OPTION, parse, runMain, writeStdout } from "../lib/cli.ts";
import { CONFIG_OPTION, checkConfigOption } from "../lib/config-path.ts";
import { describeKeep, listKeeps } from "../lib/ending/keeps.ts";
import type { KeepEntry } from "../lib/ending/keeps.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { withExistingStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "keeps",
  summary: "List every keep in force, including those with no live session",
  usage: "keeps [--json] [--config FILE]",
  description: `\
Oldest first, each with its item, the item's state, when it was placed and the session it
covers: the item's current session while that is open. A keep whose session is gone is
shown as "no live session": it is inert (it holds no slot and blocks nothing) and stays
until "robot-army unkeep <id>".
`,
  options: { json: JSON_OPTION, config: CONFIG_OPTION },
  examples: ["robot-army keeps", "robot-army keeps --json"],
};

/** What `keeps --json` prints. */
export interface KeepsReport {
  keeps: KeepEntry[];
}

/** Parses argv, opens what the command reads, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  checkConfigOption(args);
  return await withExistingStore(stateDirPath(), async (store) => run({ json: args.values.json === true }, { store, write: writeStdout }));
}

/** Prints the keeps. */
export function run(opts: { json: boolean }, deps: { store: Store | undefined; write: Write }): number {
  const report: KeepsReport = { keeps: deps.store ? listKeeps(deps.store) : [] };
  deps.write(opts.json ? JSON.stringify(report, null, 2) + "\n" : formatKeeps(report).map((line) => line + "\n").join(""));
  return 0;
}

/** The report as lines of text. */
export function formatKeeps(report: KeepsReport): string[] {
  if (report.keeps.length === 0) return ["no keeps"];
  const lines = report.keeps.map((keep) => `kept since ${keep.placed_at}: ${describeKeep(keep)}`);
  if (report.keeps.some((keep) => keep.session === null && keep.state === "done")) {
    lines.push("", 'A keep with no live session holds nothing: "robot-army unkeep <id>" releases it');
  }
  return lines;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
