/**
 * `robot-army send <id> TEXT`: type a message into an interactive worker's terminal, as the
 * owner would at its prompt, and press Enter (lib/dispatch/verbs/send.ts holds the rules).
 */
import type { CommandDef, Write } from "../lib/cli.ts";
import { parse, runMain, writeSaid, writeStdout } from "../lib/cli.ts";
import { CONFIG_OPTION, configFromArgs, hostName } from "../lib/config.ts";
import { SEND_LIMIT } from "../lib/dispatch/verbs/send.ts";
import { sendSaid } from "../lib/dispatch/verbs/owner-verbs.ts";
import type { SendDeps } from "../lib/dispatch/verbs/send.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { sessionRoot } from "../lib/sessions/records.ts";
import { withExistingStore } from "../lib/store/open.ts";
import { itemIdArgument } from "../lib/work-items/argument.ts";
import { noSuchItem } from "../lib/work-items/queries.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "send",
  summary: "Type a message into a worker's terminal, as you would at its prompt",
  usage: "send <id> TEXT... [--config FILE]",
  description: `\
Types TEXT into the terminal of the item's worker (its tmux window or kitty window, found by
the markers its launch wrote) and presses Enter, as you would attached at its prompt: an
answer to its question, a choice at a permission prompt, a follow-up. Several words are
joined with one space. One line of at most ${SEND_LIMIT} characters: a control character
(a newline, Escape, Ctrl-C) is refused, so nothing but the text reaches the worker.

Refused, with nothing typed (exit 3): an item whose latest session has ended ("robot-army
resume <id>" starts it again), a session on another host, a headless worker (launcher
"process": it has no terminal), and a window that is gone or whose worker no longer runs.
Each message is written to the audit log (session.send) with its length, not its text.
`,
  options: { config: CONFIG_OPTION },
  positionals: { min: 2, max: 1000 },
  examples: ['robot-army send 12 "yes, go ahead"', "robot-army send 12 2"],
};

/** Parses argv, opens what the command reads, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const item = itemIdArgument(command, args);
  const config = await configFromArgs(args);
  const text = args.positionals.slice(1).join(" ");
  // With no store there is no item, and nothing is created to say so.
  return await withExistingStore(stateDirPath(), async (store) => {
    if (!store) throw noSuchItem(item);
    return await run({ item, text }, { store, sessionRoot: sessionRoot(), host: hostName(config), write: writeStdout });
  });
}

/** Types the message and says where. */
export async function run(opts: { item: number; text: string }, deps: SendDeps & { write: Write }): Promise<number> {
  return writeSaid(deps.write, await sendSaid(deps, opts.item, opts.text));
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
