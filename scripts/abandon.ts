/** `robot-army abandon <id> [--reason TEXT]`: the owner gives up on a work item; abandoned is final. */
import type { CommandDef, Write } from "../lib/cli.ts";
import { parse, runMain, stringOption, writeSaid, writeStdout } from "../lib/cli.ts";
import { abandonSaid } from "../lib/dispatch/verbs/owner-verbs.ts";
import { sessionRoot } from "../lib/sessions/records.ts";
import { ensureStateDir } from "../lib/state-dir.ts";
import { withStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { itemIdArgument } from "../lib/work-items/argument.ts";
import { CONFIG_OPTION, checkConfigOption } from "../lib/config-path.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "abandon",
  summary: "Give up on a work item for good",
  usage: "abandon <id> [--reason TEXT] [--config FILE]",
  description: `\
The item becomes abandoned, which is final: it is never dispatched again. The reason
(default "abandoned by the owner") is kept on the item and in the audit log. A worker
session still running for the item is left running (you may be about to attach to it),
and abandon names it: "robot-army cancel <id>" is what ends it. The worktree and branch
are left as they are.
`,
  options: { reason: { type: "string", value: "TEXT", description: "Why, kept on the item and in the audit log" }, config: CONFIG_OPTION },
  positionals: { min: 1, max: 1 },
  examples: ["robot-army abandon 12", 'robot-army abandon 12 --reason "done by hand"'],
};

/** Parses argv, opens the store, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  checkConfigOption(args);
  const item = itemIdArgument(command, args);
  return await withStore(ensureStateDir(), async (store) => {
    return run({ item, reason: stringOption(args, "reason") }, { store, sessionRoot: sessionRoot(), write: writeStdout });
  });
}

/** Moves the item and says so, and names the worker it left running. */
export function run(opts: { item: number; reason?: string }, deps: { store: Store; sessionRoot: string; write: Write }): number {
  return writeSaid(deps.write, abandonSaid(deps.store, deps.sessionRoot, opts.item, opts.reason));
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
