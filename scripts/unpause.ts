/** `robot-army unpause`: lifts `robot-army pause`, so dispatch starts worker sessions again. */
import type { CommandDef, Write } from "../lib/cli.ts";
import { parse, runMain, writeSaid, writeStdout } from "../lib/cli.ts";
import { unpauseSaid } from "../lib/dispatch/verbs/owner-verbs.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { withExistingStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { CONFIG_OPTION, checkConfigOption } from "../lib/config-path.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "unpause",
  summary: "Let dispatch start worker sessions again",
  usage: "unpause [--config FILE]",
  options: { config: CONFIG_OPTION },
  description: "Lifts the pause (written to the audit log as control.unpause). Holds stay as they are.",
  examples: ["robot-army unpause"],
};

/** Parses argv, opens what the command reads, and runs it. */
export async function main(argv: string[]): Promise<number> {
  checkConfigOption(parse(command, argv));
  // With no store there is no pause to lift, and nothing is created to say so.
  return await withExistingStore(stateDirPath(), async (store) => {
    return run({}, { store, write: writeStdout });
  });
}

/** Lifts the pause and says so, or says there was none. */
export function run(_opts: Record<string, never>, deps: { store: Store | undefined; write: Write }): number {
  return writeSaid(deps.write, unpauseSaid(deps.store));
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
