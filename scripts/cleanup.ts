/**
 * `robot-army cleanup [<id>]`: reclaim done items' worktrees and branches, under the guards
 * the daemon's pass uses (lib/cleanup/cleanup.ts: the identical function). Bare, every done
 * item not yet decided (or last skipped), a kept item with an open session left out; with an
 * id, that item, reconsidering a decision recorded as `retained`, kept or not.
 */
import type { CommandDef, Write } from "../lib/cli.ts";
import { asJson, asLines, JSON_OPTION, parse, runMain, writeStdout } from "../lib/cli.ts";
import { CONFIG_OPTION } from "../lib/config.ts";
import { EFFECT_LEVEL_OPTIONS } from "../lib/effects.ts";
import { EXIT, PreconditionError } from "../lib/errors.ts";
import { cleanupCandidatesNow, cleanupItem } from "../lib/cleanup/cleanup.ts";
import type { CleanupDecision, CleanupDeps } from "../lib/cleanup/cleanup.ts";
import { latestCleanup } from "../lib/cleanup/records.ts";
import { withDispatchDeps } from "../lib/dispatch/verbs/command-deps.ts";
import { itemIdArgument } from "../lib/work-items/argument.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "cleanup",
  summary: "Reclaim done items' worktrees and branches, only where provably safe",
  usage: "cleanup [<id>] [--json] [--effect-level L] [--config FILE]",
  description: `\
Each item's worktree and branch go only when every guard agrees, each asked of the one thing
that can answer it: an open session row of the item refuses (skipped: tried again by the next
pass); git's refusal over uncommitted or untracked work keeps both (retained); the branch goes
only when origin, asked live, has every commit of it (in its base branch, under its own name,
or in refs/pull/<n>/head of the item's merged pull request, which is how a squash merge proves
itself), else the worktree goes and the branch stays (branch_retained). A branch is written to
a bundle under <state dir>/bundles before it is deleted, and "robot-army show <id>" prints the
command that brings it back. Every decision is recorded and shown by show and worktree list.

Bare, it takes every done item not decided yet or last skipped; a kept item whose session is
open is left out. With an id it takes that item whatever it was last decided (a retained
one is reconsidered) and kept or not. The daemon does the same each pass when
[cleanup] on_issue_close = true. Below effect level local nothing is removed: it says what
would be. Exit 3 when a guard kept something of an item named by id.
`,
  options: { json: JSON_OPTION, ...EFFECT_LEVEL_OPTIONS, config: CONFIG_OPTION },
  positionals: { min: 0, max: 1 },
  examples: ["robot-army cleanup", "robot-army cleanup 12", "robot-army cleanup --effect-level plan"],
};

/** What `cleanup --json` prints: one entry per decision, and the items that could not be decided. */
export interface CleanupReport {
  decisions: Array<{
    item: number; repo: string; issue: number; state: string; reason: string; worktree_path: string; branch: string;
    worktree: string; branch_outcome: string; simulated: boolean; bundle: string | null; restore: string | null; recorded: boolean;
  }>;
  failed: Array<{ item: number; error: string }>;
}

/** Parses argv, wires the dependencies, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const item = args.positionals.length ? itemIdArgument(command, args) : undefined;
  return await withDispatchDeps(args, (deps) => run({ item, json: args.values.json === true }, { ...deps, write: writeStdout }));
}

/** Decides the item named, or every candidate, and says what became of each. */
export async function run(opts: { item?: number; json: boolean }, deps: CleanupDeps & { write: Write }): Promise<number> {
  let decisions: CleanupDecision[];
  let failed: CleanupReport["failed"] = [];
  if (opts.item !== undefined) {
    const before = latestCleanup(deps.store, opts.item);
    if (before?.state === "done") throw new PreconditionError(`Work item ${opts.item} was cleaned up already (${before.at}): ${before.reason}`);
    decisions = [await cleanupItem(deps, opts.item, { by: "cleanup" })];
  } else {
    const ran = await cleanupCandidatesNow(deps, "cleanup");
    decisions = ran.decisions;
    failed = ran.failed;
  }
  const report: CleanupReport = {
    decisions: decisions.map(({ item, record, recorded }) => ({
      item: item.id, repo: item.repo, issue: item.issue, state: record.state, reason: record.reason, worktree_path: record.worktree_path,
      branch: record.branch, worktree: record.worktree, branch_outcome: record.branch_outcome, simulated: record.simulated,
      bundle: record.bundle, restore: record.restore, recorded,
    })),
    failed,
  };
  deps.write(opts.json ? asJson(report) : asLines(...formatCleanup(report, deps.effects.level)));
  if (failed.length) return EXIT.failed;
  if (opts.item !== undefined && report.decisions[0].state !== "done") return EXIT.precondition;
  return EXIT.ok;
}

/** The report as lines: one block per item, "would" below local, then the counts. */
export function formatCleanup(report: CleanupReport, level: string): string[] {
  if (report.decisions.length === 0 && report.failed.length === 0) return ["nothing to clean up: no done item is waiting for a decision"];
  const lines: string[] = [];
  let simulated = false;
  for (const d of report.decisions) {
    lines.push(`work item ${d.item} (${d.repo}#${d.issue}): ${d.state}`);
    if (d.simulated && d.worktree === "simulated") {
      simulated = true;
      lines.push(`  would remove worktree ${d.worktree_path}`, `  would delete branch ${d.branch}`);
    } else {
      lines.push(`  ${d.reason}`);
      if (d.bundle) lines.push(`  bundle: ${d.bundle}`);
      if (d.branch_outcome === "deleted" && d.restore) lines.push(`  bring the branch back: ${d.restore}`);
    }
  }
  for (const f of report.failed) lines.push(`work item ${f.item}: not decided: ${f.error}`);
  if (simulated) lines.push(`effect level ${level}: nothing was removed; version control is real from local`);
  const count = (state: string) => report.decisions.filter((d) => d.state === state).length;
  const would = report.decisions.filter((d) => d.simulated && d.worktree === "simulated").length;
  const parts = [
    simulated ? `${would} would have their worktree removed` : `${count("done")} done`,
    `${count("branch_retained")} branch retained`, `${count("retained")} retained`, `${count("skipped")} skipped`,
  ];
  if (report.failed.length) parts.push(`${report.failed.length} not decided`);
  lines.push(`${report.decisions.length + report.failed.length} item(s): ${parts.join(", ")}`);
  return lines;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
