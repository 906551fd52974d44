/** `robot-army unhold <id> | --repo R`: lifts a hold, so dispatch may take the item or repository again. */
import type { CommandDef, Write } from "../lib/cli.ts";
import { parse, runMain, stringOption, withHelp, writeSaid, writeStdout } from "../lib/cli.ts";
import { parseHoldTarget } from "../lib/dispatch/controls.ts";
import { unholdSaid } from "../lib/dispatch/verbs/owner-verbs.ts";
import type { HoldTarget } from "../lib/dispatch/controls.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { withExistingStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { CONFIG_OPTION, checkConfigOption } from "../lib/config-path.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "unhold",
  summary: "Lift the hold on a work item or a repository",
  usage: "unhold <id> | --repo R [--config FILE]",
  description: "Written to the audit log (control.unhold). An item of a held repository stays held until the repository is unheld.",
  options: { repo: { type: "string", value: "R", description: "Lift the hold on repository R (owner/name)" }, config: CONFIG_OPTION },
  positionals: { max: 1 },
  examples: ["robot-army unhold 12", "robot-army unhold --repo demo/widgets"],
};

/** Parses argv, opens what the command reads, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  checkConfigOption(args);
  const target = withHelp(command, () => parseHoldTarget(args.positionals[0], stringOption(args, "repo")));
  // With no store there is no hold to lift, and nothing is created to say so.
  return await withExistingStore(stateDirPath(), async (store) => {
    return run({ target }, { store, write: writeStdout });
  });
}

/** Lifts the hold and says so, or says there was none. */
export function run(opts: { target: HoldTarget }, deps: { store: Store | undefined; write: Write }): number {
  return writeSaid(deps.write, unholdSaid(deps.store, opts.target));
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
