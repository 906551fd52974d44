/**
 * `robot-army hold <id> | --repo R`: dispatch leaves a work item, or every item of a
 * repository, alone until `robot-army unhold`. Kept in the store and audited.
 */
import type { CommandDef, Write } from "../lib/cli.ts";
import { parse, runMain, stringOption, withHelp, writeSaid, writeStdout } from "../lib/cli.ts";
import { parseHoldTarget } from "../lib/dispatch/controls.ts";
import { holdSaid } from "../lib/dispatch/verbs/owner-verbs.ts";
import type { HoldTarget } from "../lib/dispatch/controls.ts";
import { ensureStateDir } from "../lib/state-dir.ts";
import { withStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { CONFIG_OPTION, checkConfigOption } from "../lib/config-path.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "hold",
  summary: "Keep dispatch away from a work item or a repository",
  usage: "hold <id> | --repo R [--reason TEXT] [--config FILE]",
  description: `\
A held item, or any item of a held repository, is not dispatched (resume and restart
included, unless --force) until "robot-army unhold". A session already running goes on:
a hold governs what starts, never what runs. Written to the audit log (control.hold).
Holding again keeps the first hold and its reason.
`,
  options: {
    repo: { type: "string", value: "R", description: "Hold every item of repository R (owner/name)" },
    reason: { type: "string", value: "TEXT", description: "Why, shown by holds" },
    config: CONFIG_OPTION,
  },
  positionals: { max: 1 },
  examples: ["robot-army hold 12", 'robot-army hold --repo demo/widgets --reason "release freeze"'],
};

/** Parses argv, opens what the command reads, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  checkConfigOption(args);
  const target = withHelp(command, () => parseHoldTarget(args.positionals[0], stringOption(args, "repo")));
  return await withStore(ensureStateDir(), async (store) => {
    return run({ target, reason: stringOption(args, "reason") || undefined }, { store, write: writeStdout });
  });
}

/** Holds the target and says so, or says it already was. */
export function run(opts: { target: HoldTarget; reason?: string }, deps: { store: Store; write: Write }): number {
  return writeSaid(deps.write, holdSaid(deps.store, opts.target, opts.reason));
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
