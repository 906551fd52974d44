/**
 * `robot-army restart <id>`: give a work item a new session in its worktree, starting without the earlier context.
 */
import type { CommandDef } from "../lib/cli.ts";
import { parse, print, runMain } from "../lib/cli.ts";
import { CONFIG_OPTION } from "../lib/config.ts";
import { EFFECT_LEVEL_OPTIONS } from "../lib/effects.ts";
import { EXIT } from "../lib/errors.ts";
import type { DispatchDeps } from "../lib/dispatch/dispatch.ts";
import { itemIdOf, withDispatchDeps } from "../lib/dispatch/verbs/_command-deps.ts";
import { relaunchItem } from "../lib/dispatch/verbs/relaunch.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "restart",
  summary: "Give a work item a new session in its worktree, starting without the earlier context",
  usage: "restart <id> [--force] [--effect-level L] [--config FILE]",
  description: `\
The worker is started afresh with its prompt in the same worktree and branch, in a session
named ra-<repo>-<issue>-<attempt> (the earlier session's record and log are kept). At the
live effect level the issue is told: "reassigned to a new session (attempt N)", where it
runs, and "Supersedes: <earlier session id>" (or that no earlier session is on record).

It refuses while a session works for the item or in its worktree (or one cannot be
checked), and when the item has no worktree ("robot-army retry" dispatches afresh). The
pause, holds and the session caps hold it back like dispatch unless --force.
`,
  options: {
    force: { type: "boolean", description: "Start it despite the pause, a hold or a full cap (never over a live session)" },
    ...EFFECT_LEVEL_OPTIONS,
    config: CONFIG_OPTION,
  },
  positionals: { min: 1, max: 1 },
  examples: ["robot-army restart 12", "robot-army restart 12 --force"],
};

/** Parses argv, wires dispatch's dependencies, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const item = itemIdOf(args);
  return await withDispatchDeps(args, (deps) => run({ item, force: args.values.force === true }, deps));
}

/** Starts the new session and says where it runs; exit 1 when it could not start. */
export async function run(opts: { item: number; force: boolean }, deps: DispatchDeps): Promise<number> {
  const outcome = await relaunchItem(deps, opts.item, { how: "restart", force: opts.force });
  if (outcome.result === "failed") {
    print(`work item ${opts.item}: the new session could not start: ${outcome.reason}`);
    return EXIT.failed;
  }
  const s = outcome.session!;
  print(
    `work item ${opts.item}: restarted as attempt ${outcome.attempt} in session ${s.name} (${s.id})`,
    `  worktree: ${s.worktree}`,
    `  branch  : ${s.branch}`,
    outcome.earlier ? `  earlier : ${outcome.earlier}` : "  earlier : none on record",
  );
  return EXIT.ok;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
