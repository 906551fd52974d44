/** What `resume` and `restart` share as commands: options, the run, and what they print. */
import type { CommandDef, Write } from "../../cli.ts";
import { parse, writeSaid, writeStdout } from "../../cli.ts";
import { CONFIG_OPTION } from "../../config.ts";
import { EFFECT_LEVEL_OPTIONS } from "../../effects.ts";
import { itemIdArgument } from "../../work-items/argument.ts";
import type { Relaunch } from "../comments.ts";
import type { DispatchDeps } from "../dispatch-deps.ts";
import { withDispatchDeps } from "./command-deps.ts";
import { relaunchSaid } from "./owner-verbs.ts";

const REFUSALS = `
It refuses while a session works for the item or in its worktree (or one cannot be
checked), and when the item has no worktree ("robot-army retry" dispatches afresh). It
passes the same gate as dispatch: the pause, holds and the session caps hold it back
unless --force; a repository that is not onboarded or needs reapproval, capacity that
cannot be observed and a missing worker program refuse it even with --force. A worker
that could not start fails the item (exit 1) and the issue is told so once.
`;

/** The command definition, main and run of `resume` or `restart`. */
export function relaunchCommand(how: Relaunch, summary: string, description: string) {
  const command: CommandDef = {
    name: how,
    summary,
    usage: `${how} <id> [--force] [--effect-level L] [--config FILE]`,
    description: description + REFUSALS,
    options: {
      force: { type: "boolean", description: "Start it despite the pause, a hold or a full cap (never over a live session or an untrusted repository)" },
      ...EFFECT_LEVEL_OPTIONS,
      config: CONFIG_OPTION,
    },
    positionals: { min: 1, max: 1 },
    examples: [`robot-army ${how} 12`, `robot-army ${how} 12 --force`],
  };

  /** Starts the new session and says where it runs; a worker that could not start throws RelaunchFailedError (exit 1). */
  async function run(opts: { item: number; force: boolean }, deps: DispatchDeps & { write: Write }): Promise<number> {
    return writeSaid(deps.write, await relaunchSaid(deps, how, opts.item, opts.force));
  }

  /** Parses argv, wires dispatch's dependencies, and runs it. */
  async function main(argv: string[]): Promise<number> {
    const args = parse(command, argv);
    const item = itemIdArgument(command, args);
    const force = args.values.force === true;
    return await withDispatchDeps(args, (deps) => run({ item, force }, { ...deps, write: writeStdout }));
  }

  return { command, main, run };
}
