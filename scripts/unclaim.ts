/**
 * `robot-army unclaim <id>`: release the claim on GitHub that keeps a work item from starting
 * here, once the owner knows its holder no longer works on it. It shows who holds it and
 * asks first.
 */
import type { Ask, CommandDef, Write } from "../lib/cli.ts";
import { ask, asLines, parse, runMain, writeStdout } from "../lib/cli.ts";
import { CONFIG_OPTION } from "../lib/config.ts";
import { EFFECT_LEVEL_OPTIONS } from "../lib/effects.ts";
import { PreconditionError } from "../lib/errors.ts";
import { printable } from "../lib/printable.ts";
import type { DispatchDeps } from "../lib/dispatch/dispatch-deps.ts";
import { withDispatchDeps } from "../lib/dispatch/verbs/command-deps.ts";
import { itemIdArgument } from "../lib/work-items/argument.ts";
import { standingClaim, unclaim, unclaimRefusal } from "../lib/work-items/issue-claims.ts";
import { requireItem } from "../lib/work-items/queries.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "unclaim",
  summary: "Release the claim on GitHub that keeps a work item from starting here",
  usage: "unclaim <id> [--yes] [--effect-level L] [--config FILE]",
  description: `\
Before a worker starts, robot-army claims the item's issue on GitHub (the reference
refs/robot-army/claims/<issue>), so that two machines, or one machine over a restored
copy of its state, never work one issue twice. An issue another robot-army claimed waits
here, "claimed by <host>", until that claim is released. When you know its holder no
longer works on it (the machine is gone, or the claim was made by this machine's earlier
state, lost since), this deletes the claim: the item is dispatched at the next pass, or
can be resumed. It prints who holds the claim, since when and for which item, and asks
you to type the item's id, unless --yes. A claim that moved since it was shown is left, and
this host's own claim is refused while the item's worker may be at work here (dispatching,
active, needs_info, awaiting review, or a session still open): cancel or abandon it first.
Below the live effect level nothing is written to GitHub.
`,
  options: {
    yes: { type: "boolean", description: "Do not ask (for scripts)" },
    ...EFFECT_LEVEL_OPTIONS,
    config: CONFIG_OPTION,
  },
  positionals: { min: 1, max: 1 },
  examples: ["robot-army unclaim 12", "robot-army unclaim 12 --yes"],
};

/** Parses argv, wires what it reads, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const item = itemIdArgument(command, args);
  const yes = args.values.yes === true;
  return await withDispatchDeps(args, (deps) => run({ item, yes }, { ...deps, ask: (q) => ask(q), write: writeStdout }));
}

/** Shows the claim, asks (unless --yes), releases it and says what became of it. */
export async function run(opts: { item: number; yes: boolean }, deps: DispatchDeps & { ask: Ask; write: Write }): Promise<number> {
  const item = requireItem(deps.store, opts.item);
  const claim = await standingClaim(deps, item);
  if (!claim) {
    deps.write(asLines(`work item ${item.id}: ${item.repo}#${item.issue} has no claim on GitHub; nothing to release`));
    return 0;
  }
  const holder = claim.mine ? "this host" : printable(claim.words.host ?? "a claim that names no host");
  const about = `${claim.ref} in ${item.repo}: held by ${holder}${claim.words.item ? ` for its item ${claim.words.item}` : ""}${claim.words.at ? ` since ${printable(claim.words.at)}` : ""}`;
  deps.write(asLines(`work item ${item.id}: ${about}`));
  const refusal = unclaimRefusal(deps.store, item, claim);
  if (refusal) throw new PreconditionError(refusal);
  if (!opts.yes) {
    const answer = await deps.ask(`Release it, so that ${item.repo}#${item.issue} may start here? Type ${item.id} to confirm: `);
    const given = "unanswered" in answer ? answer.unanswered : answer.line.trim() === String(item.id) ? "confirmed" : "answer did not match";
    if (given !== "confirmed") throw new PreconditionError(`Not released (${given}): the claim stands`);
  }
  const result = await unclaim(deps, item, claim);
  if (result === "moved") throw new PreconditionError(`Not released: ${claim.ref} moved since it was shown (someone claimed it anew); run unclaim again to see who holds it`);
  const said = {
    released: `released: ${item.repo}#${item.issue} may start here at the next dispatch pass`,
    simulated: `would release it (effect level ${deps.effects.level}; nothing was written to GitHub)`,
    gone: "it was gone already: nothing to release",
  }[result];
  deps.write(asLines(`work item ${item.id}: ${said}`));
  return 0;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
