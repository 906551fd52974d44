/**
 * `robot-army pause`: no new worker session is dispatched until `robot-army unpause`.
 * The pause lives in the store, so it outlives the daemon and a restart of the machine.
 */
import type { CommandDef, Write } from "../lib/cli.ts";
import { parse, runMain, stringOption, writeSaid, writeStdout } from "../lib/cli.ts";
import { pauseSaid } from "../lib/dispatch/verbs/owner-verbs.ts";
import { ensureStateDir } from "../lib/state-dir.ts";
import { withStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { CONFIG_OPTION, checkConfigOption } from "../lib/config-path.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "pause",
  summary: "Stop dispatching new worker sessions until unpause",
  usage: "pause [--reason TEXT] [--config FILE]",
  description: `\
Nothing new is dispatched (resume and restart included, unless --force) until
"robot-army unpause". Sessions already running go on: the pause governs what starts,
never what runs. It is kept in the store and written to the audit log (control.pause).
Pausing again keeps the first pause and its reason.
`,
  options: { reason: { type: "string", value: "TEXT", description: "Why, shown by capacity and holds" }, config: CONFIG_OPTION },
  examples: ["robot-army pause", 'robot-army pause --reason "the CI is down"'],
};

/** Parses argv, opens what the command reads, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  checkConfigOption(args);
  return await withStore(ensureStateDir(), async (store) => {
    return run({ reason: stringOption(args, "reason") || undefined }, { store, write: writeStdout });
  });
}

/** Pauses dispatch and says so, or says it already was. */
export function run(opts: { reason?: string }, deps: { store: Store; write: Write }): number {
  return writeSaid(deps.write, pauseSaid(deps.store, opts.reason));
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
