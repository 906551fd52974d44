/**
 * `robot-army attach <id>`: opens the work item's worker where its launcher put it (the
 * tmux window or kitty tab found by its marker). A headless worker has nothing to open:
 * attach says how to read its output instead.
 */
import { spawnSync } from "node:child_process";
import { CONFIG_OPTION, configFromArgs } from "../lib/config.ts";
import { parse, print, runMain } from "../lib/cli.ts";
import type { CommandDef } from "../lib/cli.ts";
import { launcherFor } from "../lib/boundaries/launchers/select.ts";
import { attachCommandFor } from "../lib/dispatch/attach-command.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { openExistingStore } from "../lib/store/open.ts";
import { itemIdArgument } from "../lib/work-items/argument.ts";

/** The `attach` command. */
export const command: CommandDef = {
  name: "attach",
  summary: "Open a work item's worker session where its launcher put it",
  usage: "attach <id> [--print] [--config FILE]",
  description:
    "Finds the item's tmux window or kitty tab by the marker its launch wrote (never by a window's\n" +
    "number) and opens it. A worker started by the process launcher runs headless: attach prints\n" +
    "how to read its output instead.",
  options: {
    print: { type: "boolean", description: "Print the command that opens it instead of running it" },
    config: CONFIG_OPTION,
  },
  positionals: { min: 1, max: 1 },
};

export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const id = itemIdArgument(command, args);
  const config = await configFromArgs(args);
  const store = await openExistingStore(stateDirPath());
  try {
    const found = await attachCommandFor(store, id, launcherFor(config));
    if (found.argv === null) {
      print(found.message);
      return 0;
    }
    if (args.values.print) {
      print(found.argv.join(" "));
      return 0;
    }
    const result = spawnSync(found.argv[0], found.argv.slice(1), { stdio: "inherit" });
    return result.status ?? 1;
  } finally {
    store?.close();
  }
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
