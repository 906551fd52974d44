/** `robot-army unhold <id> | --repo R`: lifts a hold, so dispatch may take the item or repository again. */
import type { CommandDef, Write } from "../lib/cli.ts";
import { parse, runMain, stringOption, withHelp, writeStdout } from "../lib/cli.ts";
import { describeHold, parseHoldTarget, unhold } from "../lib/dispatch/controls.ts";
import type { HoldTarget } from "../lib/dispatch/controls.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { withExistingStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { noSuchItem } from "../lib/work-items/queries.ts";
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
  const { store } = deps;
  if (!store) {
    if ("item" in opts.target) throw noSuchItem(opts.target.item);
    deps.write(`not held: repository ${opts.target.repo}\n`);
    return 0;
  }
  const lifted = unhold(store, opts.target);
  const what = describeHold(store, "item" in opts.target ? { item: opts.target.item, repo: null } : { item: null, repo: opts.target.repo });
  deps.write(lifted ? `unheld: ${what} (held since ${lifted.current.set_at})\n` : `not held: ${what}\n`);
  return 0;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
