/**
 * `robot-army purge-simulated [--yes] [--remove-worktrees]`: delete the rows made below the
 * live effect level. Before deleting anything it names the worktrees those rows own and
 * asks two questions, separately, each defaulting to no: whether to delete the rows, and
 * whether to remove those worktrees and their branches too. `--yes` answers only the first,
 * `--remove-worktrees` only the second. The work is in lib/cleanup/purge-simulated.ts.
 */
import { hostname } from "node:os";
import { ask, asLines, parse, runMain, writeStdout } from "../lib/cli.ts";
import type { Answer, Ask, CommandDef, Write } from "../lib/cli.ts";
import { CONFIG_OPTION, configFromArgs } from "../lib/config.ts";
import type { Config } from "../lib/config.ts";
import { EFFECT_LEVEL_OPTIONS, effectsFor, SIMULATED_GITHUB } from "../lib/effects.ts";
import type { Effects } from "../lib/effects.ts";
import { EXIT, PreconditionError } from "../lib/errors.ts";
import { planPurge, purgeRows, removableByPath, removeOwnedWorktrees } from "../lib/cleanup/purge-simulated.ts";
import type { OwnedWorktree, PurgePlan, WorktreeResult } from "../lib/cleanup/purge-simulated.ts";
import { sessionRoot } from "../lib/sessions/records.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { withExistingStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "purge-simulated",
  summary: "Delete the work items made below the live effect level, and, if you say so, their worktrees",
  usage: "purge-simulated [--yes] [--remove-worktrees] [--effect-level L] [--config FILE]",
  description: `\
Deletes the simulated work items (made below effect level live) and every row that hangs
off them: their session rows, pull requests, keeps, holds, approvals, anomalies and cleanup
records. The audit log is never purged; one purge.simulated record says what went. An item
with a session row still open is kept (end its session first: robot-army cancel <id>).

Before deleting anything it names the worktrees those rows own that are still on disk, or
whose branch is still in the clone (path, branch, size), and asks two questions, each
defaulting to no: "Delete N simulated work items and their rows?", then "Also remove these
K worktrees and their branches?". Only y or yes is yes; no stdin, Ctrl-C or anything else
is no. --yes answers only the first, --remove-worktrees only the second, so a script
passing --yes never removes a directory.

Worktrees go first, while the rows still say what they are, under the same guards as any
removal and never forced: git's refusal over uncommitted or untracked work stands, and a
branch goes only once origin, asked live, has every commit of it (written to a bundle
first). What survives is named with the "robot-army worktree remove <path>" to use. Below
effect level local the removal is simulated ("would remove"); the rows are still deleted
when you say yes.
`,
  options: {
    yes: { type: "boolean", short: "y", description: "Answer yes to deleting the rows (not to removing worktrees)" },
    "remove-worktrees": { type: "boolean", description: "Answer yes to removing the worktrees and branches the rows own" },
    ...EFFECT_LEVEL_OPTIONS,
    config: CONFIG_OPTION,
  },
  examples: [
    "robot-army purge-simulated",
    "robot-army purge-simulated --yes",
    "robot-army purge-simulated --yes --remove-worktrees --effect-level local",
  ],
};

/** What purge-simulated was asked for: which questions the flags answer. */
export interface PurgeOptions {
  yes: boolean;
  removeWorktrees: boolean;
}

/** What purge-simulated works with. */
export interface PurgeCommandDeps {
  store: Store | undefined;
  config: Config;
  effects: Effects;
  stateDir: string;
  sessionRoot: string;
  host: string;
  ask: Ask;
  write: Write;
}

/** Parses argv, opens the store if there is one, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const config = await configFromArgs(args);
  // Nothing here writes to GitHub: the effect level decides only whether worktrees are real.
  const effects = effectsFor(args, config, { github: SIMULATED_GITHUB });
  const stateDir = stateDirPath();
  const opts = { yes: args.values.yes === true, removeWorktrees: args.values["remove-worktrees"] === true };
  return await withExistingStore(stateDir, (store) =>
    run(opts, { store, config, effects, stateDir, sessionRoot: sessionRoot(), host: hostname(), ask: (q) => ask(q), write: writeStdout }));
}

/** Names what would go, asks, removes the worktrees it was told to, then deletes the rows; says exactly what it did. */
export async function run(opts: PurgeOptions, deps: PurgeCommandDeps): Promise<number> {
  const { store, write } = deps;
  if (!store) {
    write("no simulated work items: nothing to purge\n");
    return EXIT.ok;
  }
  const plan = await planPurge({ ...deps, store });
  if (plan.items.length === 0 && plan.kept.length === 0) {
    write("no simulated work items: nothing to purge\n");
    return EXIT.ok;
  }
  write(describePlan(plan));
  if (plan.items.length === 0) throw new PreconditionError("Nothing purged: every simulated work item is kept for now");

  const rows = await confirm(deps, rowsQuestion(plan.items.length), opts.yes, "--yes");
  if (rows !== "yes") throw new PreconditionError(`Not purged (${rows}): nothing was deleted`);
  const worktrees = plan.worktrees.length === 0 ? "none" : await confirm(deps, worktreesQuestion(plan.worktrees.length), opts.removeWorktrees, "--remove-worktrees");

  const results = worktrees === "yes" ? await removeOwnedWorktrees({ store, effects: deps.effects, stateDir: deps.stateDir, sessionRoot: deps.sessionRoot, host: deps.host }, plan.worktrees) : [];
  const lines = results.flatMap(describeResult);
  if (results.some((r) => r.removal?.simulated)) {
    lines.push(`effect level ${deps.effects.level}: worktrees and branches are simulated below local, so nothing was removed from disk`);
  }
  const survivors = worktrees === "yes" ? results.filter(survived).map((r) => r.worktree) : plan.worktrees;
  const purged = purgeRows({ ...deps, store }, plan, { worktrees: auditOf(worktrees, results, survivors) });
  lines.push(describePurge(purged.items, purged.rows));
  if (survivors.length > 0) {
    lines.push(worktrees === "yes" ? "left, and no item claims them now:" : `not removed (answer: ${worktrees}), and no item claims them now:`);
    for (const w of survivors) lines.push(`  ${describeSurvivor(w, await removableByPath(w))}`);
  }
  write(asLines(...lines));
  return EXIT.ok;
}

/** The items and worktrees the purge would touch, as the questions' preamble. */
function describePlan(plan: PurgePlan): string {
  const lines = [`simulated work items: ${plan.items.length}${plan.kept.length ? ` to delete, ${plan.kept.length} kept` : ""}`];
  for (const item of plan.items) lines.push(`  item ${item.id}  ${item.repo}#${item.issue}  ${item.state}`);
  for (const item of plan.kept) {
    lines.push(`  item ${item.id}  ${item.repo}#${item.issue}  ${item.state}  kept: ${item.why}`);
  }
  if (plan.worktrees.length === 0) lines.push("worktrees they own: none on disk, no branch left in a clone");
  else {
    lines.push(`worktrees they own: ${plan.worktrees.length}`);
    for (const w of plan.worktrees) lines.push(`  ${describeOwned(w)}`);
  }
  return asLines(...lines);
}

function describeOwned(w: OwnedWorktree): string {
  const where = w.size ?? "not on disk";
  const branch = w.branchInClone ? `branch ${w.branch}` : `branch ${w.branch} (gone from the clone)`;
  return `${w.path}  ${branch}  ${where}  (item ${w.items.join(", item ")})`;
}

function rowsQuestion(n: number): string {
  return n === 1 ? "Delete 1 simulated work item and its rows? [y/N] " : `Delete ${n} simulated work items and their rows? [y/N] `;
}

function worktreesQuestion(k: number): string {
  return k === 1 ? "Also remove this worktree and its branch? [y/N] " : `Also remove these ${k} worktrees and their branches? [y/N] `;
}

/** A flag answers yes (and says so); otherwise the question is asked, and only y or yes is yes. */
async function confirm(deps: Pick<PurgeCommandDeps, "ask" | "write">, question: string, flag: boolean, flagName: string): Promise<"yes" | "no" | "no stdin" | "interrupted"> {
  if (flag) {
    deps.write(`${question}yes (${flagName})\n`);
    return "yes";
  }
  const answer: Answer = await deps.ask(question);
  if ("unanswered" in answer) return answer.unanswered;
  return /^(y|yes)$/i.test(answer.line.trim()) ? "yes" : "no";
}

/** What removeCheckout did to one worktree, in its own words: "would" below local, "removed" only once gone. */
function describeResult(result: WorktreeResult): string[] {
  const { worktree: w, removal } = result;
  if (!removal) return [`kept worktree ${w.path}: ${result.skipped}`];
  const lines: string[] = [];
  const tree = removal.worktree;
  if (tree.status === "removed") lines.push(`removed worktree ${w.path}`);
  else if (tree.status === "absent") lines.push(`worktree ${w.path} was already gone`);
  else if (tree.status === "simulated") lines.push(`would remove worktree ${w.path}`);
  else if (tree.status === "kept") lines.push(`kept worktree ${w.path} (${tree.code}): ${tree.reason}`);
  const branch = removal.branch;
  if (branch.status === "deleted") {
    lines.push(`deleted branch ${w.branch}${removal.proof ? ` (${removal.proof})` : ""}`);
    if (removal.bundle) lines.push(`its commits are in ${removal.bundle}`);
    if (removal.restore) lines.push(`restore it with: ${removal.restore}`);
  }
  else if (branch.status === "absent") lines.push(`branch ${w.branch} was already gone`);
  else if (branch.status === "simulated") lines.push(`would delete branch ${w.branch}`);
  else if (branch.status === "kept") lines.push(`kept branch ${w.branch}: ${branch.reason}`);
  return lines;
}

/**
 * What is left of a worktree, and what to do about it: one its path still names (a directory on
 * disk, or a worktree its clone still lists) is named with the `worktree remove <path>` that
 * removes a worktree no item claims; a branch whose worktree is gone stays in its clone for the
 * owner to push or delete.
 */
function describeSurvivor(w: OwnedWorktree, byPath: boolean): string {
  if (byPath) return `${w.path}  branch ${w.branch}: robot-army worktree remove ${w.path}`;
  return `branch ${w.branch} in ${w.clone?.path ?? w.repo} (its worktree ${w.path} is gone): push it, or delete it yourself once you know its commits are not needed`;
}

/** Whether anything of the worktree is left: its directory or its branch, kept, or only simulated away below local. */
function survived(result: WorktreeResult): boolean {
  const removal = result.removal;
  if (!removal || removal.simulated) return true;
  return removal.worktree.status === "kept" || removal.branch.status === "kept";
}

/** What the purge's audit record says of the worktrees: the answer, and what became of each. */
function auditOf(answer: string, results: readonly WorktreeResult[], left: readonly OwnedWorktree[]): Record<string, unknown> {
  return {
    answer,
    removed: results.filter((r) => !survived(r)).map((r) => ({ path: r.worktree.path, branch: r.worktree.branch })),
    left: left.map((w) => ({ path: w.path, branch: w.branch })),
  };
}

/** One line naming what was deleted: the items, then the other rows by table. */
function describePurge(items: readonly number[], rows: Record<string, number>): string {
  if (items.length === 0) return "deleted nothing: the simulated items changed since they were listed";
  const others = Object.entries(rows).filter(([table, n]) => table !== "work_items" && n > 0).map(([table, n]) => `${table} ${n}`);
  const what = items.length === 1 ? `simulated work item ${items[0]}` : `${items.length} simulated work items (${items.join(", ")})`;
  return `deleted ${what} and ${others.length ? `the rows that hung off ${items.length === 1 ? "it" : "them"}: ${others.join(", ")}` : `no other rows`}`;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
