/** What `resume` and `restart` share as commands: options, the run, and what they print. */
import type { CommandDef } from "../../cli.ts";
import { parse, print } from "../../cli.ts";
import { CONFIG_OPTION } from "../../config.ts";
import { EFFECT_LEVEL_OPTIONS } from "../../effects.ts";
import { EXIT } from "../../errors.ts";
import type { Relaunch } from "../comments.ts";
import type { DispatchDeps } from "../dispatch.ts";
import { withDispatchDeps } from "./command-deps.ts";
import { relaunchItem } from "./relaunch.ts";
import { itemIdArgument } from "../../work-items/argument.ts";

const REFUSALS = `
It refuses while a session works for the item or in its worktree (or one cannot be
checked), and when the item has no worktree ("robot-army retry" dispatches afresh). The
pause, holds and the session caps hold it back like dispatch unless --force.
`;

/** The command definition, main and run of `resume` or `restart`. */
export function relaunchCommand(how: Relaunch, summary: string, description: string) {
  const command: CommandDef = {
    name: how,
    summary,
    usage: `${how} <id> [--force] [--effect-level L] [--config FILE]`,
    description: description + REFUSALS,
    options: {
      force: { type: "boolean", description: "Start it despite the pause, a hold or a full cap (never over a live session)" },
      ...EFFECT_LEVEL_OPTIONS,
      config: CONFIG_OPTION,
    },
    positionals: { min: 1, max: 1 },
    examples: [`robot-army ${how} 12`, `robot-army ${how} 12 --force`],
  };

  /** Starts the new session and says where it runs; exit 1 when it could not start. */
  async function run(opts: { item: number; force: boolean }, deps: DispatchDeps): Promise<number> {
    const outcome = await relaunchItem(deps, opts.item, { how, force: opts.force });
    if (outcome.result === "failed") {
      print(`work item ${opts.item}: the new session could not start: ${outcome.reason}`);
      return EXIT.failed;
    }
    const s = outcome.session!;
    print(
      `work item ${opts.item}: ${how === "resume" ? "resumed" : "restarted"} as attempt ${outcome.attempt} in session ${s.name} (${s.id})`,
      `  worktree: ${s.worktree}`,
      `  branch  : ${s.branch}`,
      outcome.earlier ? `  earlier : ${outcome.earlier}` : "  earlier : none on record",
    );
    return EXIT.ok;
  }

  /** Parses argv, wires dispatch's dependencies, and runs it. */
  async function main(argv: string[]): Promise<number> {
    const args = parse(command, argv);
    const item = itemIdArgument(command, args);
    return await withDispatchDeps(args, (deps) => run({ item, force: args.values.force === true }, deps));
  }

  return { command, main, run };
}
