/**
 * `robot-army attach <id>`: opens the work item's worker where its launcher put it (the
 * tmux window or kitty tab found by its marker). A headless worker has nothing to open:
 * attach says how to read its output instead.
 */
import { spawnSync } from "node:child_process";
import { CONFIG_OPTION, configFromArgs } from "../lib/config.ts";
import { helpText, parse, print, runMain } from "../lib/cli.ts";
import type { CommandDef } from "../lib/cli.ts";
import { launcherFor } from "../lib/boundaries/launchers/select.ts";
import type { Launcher } from "../lib/boundaries/launchers/types.ts";
import { sessionsOf } from "../lib/dispatch/sessions.ts";
import { PreconditionError, UsageError } from "../lib/errors.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { openExistingStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { getItem } from "../lib/work-items/queries.ts";

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
  const id = args.positionals[0];
  if (!/^\d+$/.test(id)) throw new UsageError(`A work item is an id such as 12, got "${id}"`, helpText(command));
  const config = await configFromArgs(args);
  const store = await openExistingStore(stateDirPath());
  try {
    const found = await attachCommandFor(store, Number(id), launcherFor(config));
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

/** The argv that opens the item's worker, or why there is none to open. */
export async function attachCommandFor(store: Store | undefined, id: number, launcher: Launcher): Promise<{ argv: string[] | null; message: string }> {
  const item = store ? getItem(store, id) : undefined;
  if (!item) throw new PreconditionError(`No work item ${id}; "robot-army status" lists them`);
  const session = sessionsOf(store!, id).filter((s) => s.ended_at === null).at(-1);
  if (!session) throw new PreconditionError(`Work item ${id} has no running session (state ${item.state})`);
  const argv = await launcher.attachCommand(id);
  if (argv) return { argv, message: "" };
  if (launcher.name === "process") {
    return { argv: null, message: `Work item ${id} runs headless as session ${session.name}; "robot-army session peek ${session.name}" shows its output` };
  }
  throw new PreconditionError(`The ${launcher.name} window of work item ${id} (marker ${session.marker}) cannot be found`);
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
