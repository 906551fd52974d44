/**
 * What the owner decides an interrupted or failed item by, for `show`, the item's page and the
 * dashboard's confirmation of a verb that could lose work: how its worker ended (the ending, the
 * exit code or signal, its last lines as kept when its end was recorded), what its worktree
 * holds (uncommitted changes, commits on its branch not on the base, how many origin lacks:
 * lib/boundaries/work-facts.ts), its open pull request, and when its worker last worked.
 */
import { existsSync } from "node:fs";
import { describeWork, workFacts } from "../boundaries/work-facts.ts";
import { worktreePath } from "../boundaries/worktrees.ts";
import { branchName } from "../work-items/branch-name.ts";
import { worktreeRoot } from "../work-items/worktree-root.ts";
import type { WorkFacts } from "../boundaries/work-facts.ts";
import type { Config } from "../config.ts";
import { printable } from "../printable.ts";
import { knownBaseBranch } from "../repos/base-branch.ts";
import type { Store } from "../store/open.ts";
import { endingOf } from "../work-items/quick-exit.ts";
import type { QuickExit } from "../work-items/quick-exit.ts";
import type { ItemReport } from "./item.ts";

/** The states whose page and `show` carry the facts to decide by. */
export const DECIDING_STATES: ReadonlySet<string> = new Set(["interrupted", "failed"]);

/** The facts to decide an item by. */
export interface Decision {
  /** Its latest session's end: how (the row's classification), and the worker's own words when they were kept. */
  ended: {
    session: string;
    at: string;
    reason: string | null;
    code: number | null;
    signal: string | null;
    last_lines: string[];
  } | null;
  /** Its worktree's work, against the base branch as last fetched; null when the item never had a worktree. */
  work: (WorkFacts & { base: string; lines: string[] }) | null;
  /** Its open pull request, when it has one. */
  pull_request: { number: number; url: string } | null;
  /** When its worker last worked: the later of its session's end and its branch's last commit. */
  last_worked_at: string | null;
}

/**
 * Reads the facts of the item in `report` (its worktree with git, its ending from the audit
 * log). The same whatever the item's state; the callers show them for DECIDING_STATES.
 */
export async function decisionOf(store: Store, config: Pick<Config, "repos" | "worktrees">, report: ItemReport, stateDir: string): Promise<Decision> {
  const latest = report.sessions.at(-1);
  const ending: QuickExit | undefined = latest?.quick_exit ?? (latest ? endingOf(store, latest) : undefined);
  const ended = latest && latest.ended_at !== null
    ? { session: latest.name, at: latest.ended_at, reason: latest.end_reason, code: latest.exit_code ?? ending?.code ?? null, signal: ending?.signal ?? null, last_lines: ending?.last_lines ?? [] }
    : null;
  const base = knownBaseBranch(store, config, report.repo) ?? "main";
  // With no session (its start failed), the worktree and branch a dispatch made for it, when they are there.
  const path = latest?.worktree ?? worktreePath(worktreeRoot(config, stateDir), report.repo, report.issue);
  const facts = latest || existsSync(path) ? await workFacts(path, latest?.branch ?? branchName(report.issue, report.title), base) : null;
  const open = report.pull_requests === "not checked" ? undefined : report.pull_requests.find((p) => p.state === "open" && !p.merged_at);
  // The branch's own last commit only: a branch with none of its own shows the base's.
  const committed = facts?.ahead_of_base ? facts.last_commit_at : null;
  const times = [ended?.at, committed].filter((t): t is string => typeof t === "string").sort();
  return {
    ended,
    work: facts ? { ...facts, base, lines: describeWork(facts, base) } : null,
    pull_request: open ? { number: open.number, url: open.html_url } : null,
    last_worked_at: times.at(-1) ?? null,
  };
}

/** How the worker ended, in one line: `killed (signal SIGKILL)`, `crashed (exit 1)`. */
export function describeEnding(ended: NonNullable<Decision["ended"]>): string {
  const how = ended.signal ? `signal ${ended.signal}` : ended.code !== null ? `exit ${ended.code}` : "no exit code on record";
  return `${ended.reason ?? "ended"} (${how}) at ${ended.at}, session ${ended.session}`;
}

/**
 * What resume, restart and reset would do with this work, in words the owner decides by.
 * @example adviceOf(decision) // "resume carries on with the worker's context; restart starts afresh in the same worktree; reset would discard 2 uncommitted files and 1 commit origin does not have"
 */
export function adviceOf(decision: Decision): string {
  const work = decision.work;
  if (!work || !work.present) return "its worktree is gone: retry starts it afresh";
  // Unknown is never taken for nothing to lose.
  if (work.uncommitted === null || work.unpushed === null) {
    return "resume carries on in its worktree with the worker's context; restart starts a fresh worker there; what reset would discard cannot be told (git could not read the worktree or its branch)";
  }
  const lost: string[] = [];
  if (work.uncommitted) lost.push(`${work.uncommitted} uncommitted file${work.uncommitted === 1 ? "" : "s"}`);
  if (work.unpushed) lost.push(`${work.unpushed} commit${work.unpushed === 1 ? "" : "s"} origin does not have`);
  const reset = lost.length ? `reset is refused over ${lost.join(" and ")} (only --force at a terminal discards them)` : "reset discards nothing origin lacks";
  return `resume carries on in its worktree with the worker's context; restart starts a fresh worker there; ${reset}`;
}

/** The facts as `show` prints them, one line each, indented under `decide :`. */
export function decisionLines(decision: Decision): string[] {
  const field = (key: string, value: string) => `  ${key.padEnd(11)} ${value}`;
  const lines: string[] = [];
  if (decision.ended) {
    lines.push(field("ended", describeEnding(decision.ended)));
    for (const line of decision.ended.last_lines) lines.push(`    | ${printable(line)}`);
  }
  for (const line of decision.work?.lines ?? []) {
    const [, key, value] = /^(\w+): (.*)$/.exec(line) ?? [line, "worktree", line];
    lines.push(field(key, value));
  }
  lines.push(field("pull", decision.pull_request ? `#${decision.pull_request.number} open  ${decision.pull_request.url}` : "none open"));
  lines.push(field("worked", decision.last_worked_at ? `last at ${decision.last_worked_at}` : "never, as far as is recorded"));
  lines.push(field("choices", adviceOf(decision)));
  return lines;
}
