/**
 * `robot-army keep <id>`: the owner's "do not end this one" on a work item. While the item
 * is done and its current session is open, the pass does not retire its worker or close
 * its tab. Starts, stops and signals nothing (lib/ending/keeps.ts holds the rules).
 */
import type { CommandDef, Write } from "../lib/cli.ts";
import { parse, runMain, writeSaid, writeStdout } from "../lib/cli.ts";
import type { Config } from "../lib/config.ts";
import { CONFIG_OPTION, configFromArgs } from "../lib/config.ts";
import { keepSaid } from "../lib/dispatch/verbs/owner-verbs.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { withExistingStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { itemIdArgument } from "../lib/work-items/argument.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "keep",
  summary: "Keep a work item's worker session running after its issue closes",
  usage: "keep <id> [--config FILE]",
  description: `\
While a done item is kept and its current session is open, the pass does not retire its
worker and does not close its tab; the kept session holds its slot. That is all a keep
does: it starts, stops and signals nothing, works with the daemon stopped, and takes
effect on the next pass. Place it before merging: a merged item's idle worker is retired
on the next pass.

A keep can go on an item in any state and waits for done. On a done item with no session
open it is refused (exit 3) with the command that resumes its transcript; on an abandoned
item it is refused, since abandoned never becomes done ("robot-army cancel <id>" ends its
worker). It never expires and is not cleared when the session ends: "robot-army keeps"
shows one whose session is gone as "no live session", and "robot-army unkeep <id>"
releases it. Placing and releasing are written to the audit log (keep.placed, keep.released).
`,
  options: { config: CONFIG_OPTION },
  positionals: { min: 1, max: 1 },
  examples: ["robot-army keep 12"],
};

/** Parses argv, opens what the command reads, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const item = itemIdArgument(command, args);
  const config = await configFromArgs(args);
  // With no store there is no item to keep, and nothing is created to say so.
  return await withExistingStore(stateDirPath(), async (store) => run({ item }, { config, store, write: writeStdout }));
}

/** Places the keep and says what it covers, or that it was already placed. */
export function run(opts: { item: number }, deps: { config: Config; store: Store | undefined; write: Write }): number {
  return writeSaid(deps.write, keepSaid(deps.store, deps.config, opts.item));
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
