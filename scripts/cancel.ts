/**
 * `robot-army cancel <id> [--force]`: stop the session working on an item. It asks first:
 * the item's id must be typed to confirm. No stdin at all, Ctrl-C at the question or a
 * wrong answer stops with nothing signalled, and says so in the audit log.
 */
import { hostname } from "node:os";
import { ask, parse, runMain, writeSaid, writeStdout } from "../lib/cli.ts";
import type { Ask, CommandDef, Write } from "../lib/cli.ts";
import { cancelTarget, recordGaveUp } from "../lib/dispatch/verbs/cancel.ts";
import { cancelSaid } from "../lib/dispatch/verbs/owner-verbs.ts";
import type { CancelDeps, Confirmation } from "../lib/dispatch/verbs/cancel.ts";
import { PreconditionError } from "../lib/errors.ts";
import { ensureSessionRoot } from "../lib/sessions/records.ts";
import { spoolDir } from "../lib/sessions/spool.ts";
import { ensureStateDir } from "../lib/state-dir.ts";
import { withStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { itemIdArgument } from "../lib/work-items/argument.ts";
import { CONFIG_OPTION, checkConfigOption } from "../lib/config-path.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "cancel",
  summary: "Stop the session working on a work item, after you confirm",
  usage: "cancel <id> [--force] [--config FILE]",
  description:
    "Asks you to type the item's id to confirm, then stops its session's command (SIGTERM, then SIGKILL),\n" +
    "known by pid and start time, and nothing else. The session ends as cancelled and an unfinished item\n" +
    "is interrupted: resume it, or give it up with abandon; a done or abandoned item stays as it is. A\n" +
    "session that had already ended is not signalled: its row is closed from its own exit record, and\n" +
    "cancel says how it ended. With no stdin, Ctrl-C at the question or a wrong answer, nothing is\n" +
    "signalled (exit 3) and the audit log says how it gave up.",
  options: { force: { type: "boolean", description: "Do not ask" }, config: CONFIG_OPTION },
  positionals: { min: 1, max: 1 },
  examples: ["robot-army cancel 12"],
};

/** What `cancel` was asked for. */
export interface CancelOptions {
  item: number;
  force: boolean;
}

/** What `cancel` works with: the store, where sessions and their exits are, the question, and the output. */
export interface CancelCommandDeps extends CancelDeps {
  store: Store;
  ask: Ask;
  write: Write;
}

/** Parses argv, opens what the command reads, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  checkConfigOption(args);
  const item = itemIdArgument(command, args);
  return await withStore(ensureStateDir(), async (store) => {
    const deps = { store, sessionRoot: ensureSessionRoot(), spoolDir: spoolDir(), host: hostname(), ask: (q: string) => ask(q), write: writeStdout };
    return await run({ item, force: args.values.force === true }, deps);
  });
}

/** Asks (unless forced), then cancels and says what it did and where the item is. */
export async function run(opts: CancelOptions, deps: CancelCommandDeps): Promise<number> {
  const target = cancelTarget(deps.store, opts.item);
  const answer = opts.force ? "confirmed" : await confirm(deps.ask, target.session.name, opts.item);
  if (answer !== "confirmed") {
    recordGaveUp(deps.store, target, answer);
    throw new PreconditionError(`Not cancelled (${answer}): nothing was signalled`);
  }
  // What it started runs on in the worktree: the cancel did not end everything, and says so by its code too (exit 1).
  return writeSaid(deps.write, await cancelSaid(deps.store, deps, opts.item));
}

/** The item's id typed (or piped in) confirms; anything else gives up. */
async function confirm(ask: Ask, session: string, item: number): Promise<Confirmation> {
  const answer = await ask(`Cancel session ${session} of work item ${item}? Type ${item} to confirm: `);
  if ("unanswered" in answer) return answer.unanswered;
  return answer.line.trim() === String(item) ? "confirmed" : "answer did not match";
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
