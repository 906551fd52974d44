/** `robot-army retry <id>`: a failed work item goes back to ready, so dispatch starts it afresh. */
import type { CommandDef } from "../lib/cli.ts";
import { parse, print, runMain } from "../lib/cli.ts";
import { retryItem } from "../lib/dispatch/verbs/retry.ts";
import { ensureStateDir } from "../lib/state-dir.ts";
import { openStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { itemIdArgument } from "../lib/work-items/argument.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "retry",
  summary: "Put a failed work item back in the dispatch queue",
  usage: "retry <id>",
  description: `\
A failed item goes back to ready; the next dispatch pass gives it a new worktree and
session (its failure reason stays in the audit log: robot-army show <id>). Any other
state refuses; an item whose worktree is still there is resumed, restarted or reset.
`,
  positionals: { min: 1, max: 1 },
  examples: ["robot-army retry 12"],
};

/** Parses argv, opens the store, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const item = itemIdArgument(command, args);
  const store = await openStore(ensureStateDir());
  try {
    return run({ item }, { store });
  } finally {
    store.close();
  }
}

/** Moves the item and says so. */
export function run(opts: { item: number }, deps: { store: Store }): number {
  const item = retryItem(deps.store, opts.item);
  print(`work item ${item.id} (${item.repo}#${item.issue}): failed -> ready`);
  return 0;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
