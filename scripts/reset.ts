/**
 * `robot-army reset <id> [--force]`: discard a work item's unfinished worktree and branch and
 * put it back in the queue. `--force` (over uncommitted work or commits origin does not have) is taken
 * only when typed at a terminal.
 */
import type { CommandDef, Write } from "../lib/cli.ts";
import { parse, runMain, writeSaid, writeStdout } from "../lib/cli.ts";
import { CONFIG_OPTION } from "../lib/config.ts";
import { EFFECT_LEVEL_OPTIONS } from "../lib/effects.ts";
import { PreconditionError } from "../lib/errors.ts";
import type { DispatchDeps } from "../lib/dispatch/dispatch-deps.ts";
import { withDispatchDeps } from "../lib/dispatch/verbs/command-deps.ts";
import { resetSaid } from "../lib/dispatch/verbs/owner-verbs.ts";
import { itemIdArgument } from "../lib/work-items/argument.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "reset",
  summary: "Discard a work item's unfinished worktree and branch and put it back in the queue",
  usage: "reset <id> [--force] [--effect-level L] [--config FILE]",
  description: `\
Re-reads the issue first (a closed issue refuses), then removes the item's worktree and
branch under the same guards as any removal: a session still working there (or one that
cannot be checked) refuses; git's refusal over uncommitted work stands; the branch is
kept unless origin, asked live, has every commit of it. With both gone the item is ready
again. --force discards that work too, and is taken only when typed at a terminal (stdin
a TTY), never from a script. Each removal is written to the audit log (worktree.remove).
Below effect level local, worktrees are simulated and reset refuses, removing nothing.
`,
  options: {
    force: { type: "boolean", description: "Discard uncommitted work and commits origin does not have too (only at a terminal)" },
    ...EFFECT_LEVEL_OPTIONS,
    config: CONFIG_OPTION,
  },
  positionals: { min: 1, max: 1 },
  examples: ["robot-army reset 12", "robot-army reset 12 --effect-level local"],
};

/** What reset works with: dispatch's dependencies, whether stdin is a terminal, and where its output goes. */
export type ResetDeps = DispatchDeps & { atTerminal: boolean; write: Write };

/** Parses argv, wires the dependencies, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const item = itemIdArgument(command, args);
  const force = args.values.force === true;
  const atTerminal = process.stdin.isTTY === true;
  // Refused before anything is opened or read: a script's --force never reaches the work.
  if (force && !atTerminal) throw forceNeedsTerminal();
  return await withDispatchDeps(args, (deps) => run({ item, force }, { ...deps, atTerminal, write: writeStdout }));
}

/** Resets the item and says what became of the worktree and branch; exit 3 when a guard kept them. */
export async function run(opts: { item: number; force: boolean }, deps: ResetDeps): Promise<number> {
  if (opts.force && !deps.atTerminal) throw forceNeedsTerminal();
  return writeSaid(deps.write, await resetSaid(deps, opts.item, opts.force));
}

function forceNeedsTerminal(): PreconditionError {
  return new PreconditionError("--force discards work, so it is taken only when typed at a terminal; stdin is not one");
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
