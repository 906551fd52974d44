/**
 * `robot-army cancel <id> [--force]`: stop the session working on an item. It asks first:
 * the item's id must be typed to confirm. No stdin at all, Ctrl-C at the question or a
 * wrong answer stops with nothing signalled, and says so in the audit log.
 */
import { createInterface } from "node:readline";
import { parse, print, runMain } from "../lib/cli.ts";
import type { CommandDef } from "../lib/cli.ts";
import { cancelSession, cancelTarget, recordGaveUp } from "../lib/dispatch/verbs/cancel.ts";
import type { Confirmation } from "../lib/dispatch/verbs/cancel.ts";
import { PreconditionError } from "../lib/errors.ts";
import { ensureSessionRoot } from "../lib/sessions/records.ts";
import { ensureStateDir } from "../lib/state-dir.ts";
import { openStore } from "../lib/store/open.ts";
import { itemIdArgument } from "../lib/work-items/argument.ts";

/** The `cancel` command. */
export const command: CommandDef = {
  name: "cancel",
  summary: "Stop the session working on a work item, after you confirm",
  usage: "cancel <id> [--force]",
  description:
    "Asks you to type the item's id to confirm, then stops its session's command (SIGTERM, then SIGKILL),\n" +
    "known by pid and start time, and nothing else. The session ends as cancelled and the item is\n" +
    "interrupted: resume it, or give it up with abandon. With no stdin, Ctrl-C at the question or a\n" +
    "wrong answer, nothing is signalled (exit 3) and the audit log says how it gave up.",
  options: { force: { type: "boolean", description: "Do not ask" } },
  positionals: { min: 1, max: 1 },
  examples: ["robot-army cancel 12"],
};

export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const id = itemIdArgument(command, args);
  const store = await openStore(ensureStateDir());
  try {
    const target = cancelTarget(store, id);
    const answer: Confirmation = args.values.force
      ? "confirmed"
      : await confirm(`Cancel session ${target.session.name} of work item ${id}? Type ${id} to confirm: `, String(id));
    if (answer !== "confirmed") {
      recordGaveUp(store, target, answer);
      throw new PreconditionError(`Not cancelled (${answer}): nothing was signalled`);
    }
    const result = await cancelSession(store, ensureSessionRoot(), target);
    print(result === "stopped"
      ? `cancelled session ${target.session.name} of work item ${id}; the item is interrupted`
      : `session ${target.session.name} was not running; its row is closed and the item is interrupted`);
    return 0;
  } finally {
    store.close();
  }
}

/** Asks on stderr and reads one line; end of input and Ctrl-C give up. */
function confirm(question: string, expected: string): Promise<Confirmation> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: Boolean(process.stdin.isTTY) });
    let settled = false;
    const done = (answer: Confirmation) => {
      if (settled) return;
      settled = true;
      rl.close();
      resolve(answer);
    };
    // Unanswered, the question has no newline yet: end its line before the error is printed.
    const unanswered = (answer: Confirmation) => {
      if (!settled) process.stderr.write("\n");
      done(answer);
    };
    rl.on("SIGINT", () => unanswered("interrupted"));
    rl.on("close", () => unanswered("no stdin"));
    rl.question(question, (line) => done(line.trim() === expected ? "confirmed" : "answer did not match"));
  });
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
