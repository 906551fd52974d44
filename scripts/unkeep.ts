/**
 * `robot-army unkeep <id>`: releases a work item's keep, handing its running worker back to
 * the ordinary rules. Starts, stops and signals nothing; the next pass applies the rules.
 */
import type { CommandDef, Write } from "../lib/cli.ts";
import { parse, runMain, writeSaid, writeStdout } from "../lib/cli.ts";
import { CONFIG_OPTION, checkConfigOption } from "../lib/config-path.ts";
import { unkeepSaid } from "../lib/dispatch/verbs/owner-verbs.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { withExistingStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { itemIdArgument } from "../lib/work-items/argument.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "unkeep",
  summary: "Release a work item's keep: its worker goes back to the ordinary rules",
  usage: "unkeep <id> [--config FILE]",
  description: `\
Releases the keep "robot-army keep" placed (written to the audit log as keep.released). A
done item's worker that still runs is then retired like any other: with a merged pull
request on the next pass that finds it idle, otherwise once it has been idle 30 minutes;
never while it is busy. Nothing is stopped by this command itself.
`,
  options: { config: CONFIG_OPTION },
  positionals: { min: 1, max: 1 },
  examples: ["robot-army unkeep 12"],
};

/** Parses argv, opens what the command reads, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  checkConfigOption(args);
  const item = itemIdArgument(command, args);
  // With no store there is no keep to release, and nothing is created to say so.
  return await withExistingStore(stateDirPath(), async (store) => run({ item }, { store, write: writeStdout }));
}

/** Releases the keep and says what happens now, or says there was none. */
export function run(opts: { item: number }, deps: { store: Store | undefined; write: Write }): number {
  return writeSaid(deps.write, unkeepSaid(deps.store, opts.item));
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
