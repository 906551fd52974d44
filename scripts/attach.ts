/**
 * `robot-army attach <id>`: opens the work item's worker where its launcher put it (the
 * tmux window or kitty tab found by its marker). A headless worker has nothing to open:
 * attach says how to read its output instead.
 */
import { spawnSync } from "node:child_process";
import { CONFIG_OPTION, configFromArgs } from "../lib/config.ts";
import { asLines, parse, runMain, writeStdout } from "../lib/cli.ts";
import type { CommandDef, Write } from "../lib/cli.ts";
import type { Launcher } from "../lib/boundaries/launchers/types.ts";
import { launcherFor } from "../lib/boundaries/launchers/select.ts";
import { attachCommandFor } from "../lib/dispatch/attach-command.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { withExistingStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
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

/** What `attach` works with: the store (if there is one), the launcher of the config, and where its output goes. */
export interface AttachDeps {
  store: Store | undefined;
  launcher: Launcher;
  write: Write;
}

/** Parses argv, opens what the command reads, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const item = itemIdArgument(command, args);
  const config = await configFromArgs(args);
  return await withExistingStore(stateDirPath(), async (store) => {
    return await run({ item, print: args.values.print === true }, { store, launcher: launcherFor(config), write: writeStdout });
  });
}

/**
 * Opens the item's worker in this terminal and returns when it is left; with `print`, or
 * for a headless worker, says instead what opens it or how to read its output.
 */
export async function run(opts: { item: number; print: boolean }, deps: AttachDeps): Promise<number> {
  const found = await attachCommandFor(deps.store, opts.item, deps.launcher);
  if (found.argv === null) {
    deps.write(asLines(found.message));
    return 0;
  }
  if (opts.print) {
    deps.write(asLines(found.argv.join(" ")));
    return 0;
  }
  const result = spawnSync(found.argv[0], found.argv.slice(1), { stdio: "inherit" });
  return result.status ?? 1;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
