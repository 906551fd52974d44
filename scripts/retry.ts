/** `robot-army retry <id>`: a failed work item goes back to ready, so dispatch starts it afresh. */
import type { CommandDef, Write } from "../lib/cli.ts";
import { parse, runMain, writeSaid, writeStdout } from "../lib/cli.ts";
import { CONFIG_OPTION, configFromArgs } from "../lib/config.ts";
import { retrySaid } from "../lib/dispatch/verbs/owner-verbs.ts";
import type { RetryDeps } from "../lib/dispatch/verbs/retry.ts";
import { ensureStateDir } from "../lib/state-dir.ts";
import { withStore } from "../lib/store/open.ts";
import { itemIdArgument } from "../lib/work-items/argument.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "retry",
  summary: "Put a failed work item back in the dispatch queue",
  usage: "retry <id> [--config FILE]",
  description: `\
A failed item goes back to ready; the next dispatch pass gives it a new worktree and
session (its failure reason stays in the audit log: robot-army show <id>). Any other
state refuses. So does an item whose worktree is still on disk or whose branch is still
in the clone, since dispatch would fail on it again: resume or restart carry on in that
worktree, reset discards it.
`,
  options: { config: CONFIG_OPTION },
  positionals: { min: 1, max: 1 },
  examples: ["robot-army retry 12"],
};

/** Parses argv, opens what the command reads, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const item = itemIdArgument(command, args);
  const config = await configFromArgs(args);
  const stateDir = ensureStateDir();
  return await withStore(stateDir, async (store) => {
    return await run({ item }, { store, config, stateDir, write: writeStdout });
  });
}

/** Moves the item and says so; a refusal is a PreconditionError (exit 3). */
export async function run(opts: { item: number }, deps: RetryDeps & { write: Write }): Promise<number> {
  return writeSaid(deps.write, await retrySaid(deps, opts.item));
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
