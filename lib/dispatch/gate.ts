/**
 * Whether a worker may start for an item now: the one gate dispatch, `resume` and
 * `restart` all pass through. It asks, in order: the pause, whether the launcher can host
 * the agent (an interactive one needs a terminal: lib/dispatch/launcher-fit.ts), the worker program, whether
 * capacity can be observed, a hold, the caps, the repository's trust (it is in the
 * config, onboarded, and its settings and the agent files on its freshly fetched base branch
 * still match the fingerprint the owner approved), and
 * the issue's: asked of GitHub live, the owner added its label, and its title and body are
 * the owner's words (changed by no one else, or approved by the owner as they read now). When
 * GitHub cannot be asked, the start waits: unknown is never safe.
 *
 * `force` lifts only the owner's own brakes (the pause, holds, caps), which the owner can
 * also lift by hand. It never lifts trust, an unobservable capacity, a launcher that cannot
 * host the agent or a missing worker program: those are not the owner's choice to wave through but facts a start would run into.
 */
import { describeDoubt, readTrustFacts, recordTrust } from "../intake/issue-trust.ts";
import { AgentFilesUnreadable } from "../repos/agent-files.ts";
import { checkFingerprint, describeReapproval } from "../repos/onboard.ts";
import { describeUntrusted } from "./queue.ts";
import type { WorkItem } from "../work-items/queries.ts";
import { observeCapacity } from "./capacity.ts";
import { describePause, describeWait, findHold, pauseState } from "./controls.ts";
import type { DispatchDeps } from "./dispatch-deps.ts";
import { launcherMisfit } from "./launcher-fit.ts";
import { findWorkerProgram } from "./worker-program.ts";
import { baseBranchOf, knownBaseBranch } from "../repos/base-branch.ts";

/** Why a worker may not start now. */
export interface Closed {
  reason: string;
  /** The owner's own brake (pause, hold, cap), which `force` lifts; anything else it never lifts. */
  brake: boolean;
  /** It holds back every item, not only this one (the pause, a missing program, capacity unknown). */
  everyItem: boolean;
}

/** What the gate reads. */
export type GateDeps = Pick<DispatchDeps, "store" | "config" | "sessionRoot" | "github" | "effects">;

/** Asks every question for one item; undefined when its worker may start. */
export async function gate(deps: GateDeps, item: WorkItem, options: { force?: boolean } = {}): Promise<Closed | undefined> {
  return (await gateForAll(deps, options)) ?? await gateForItem(deps, item, options);
}

/** The questions whose answer is the same for every item: the pause, the launcher and the agent, and the worker program. */
export async function gateForAll(deps: GateDeps, options: { force?: boolean } = {}): Promise<Closed | undefined> {
  const paused = options.force ? undefined : pauseState(deps.store);
  if (paused) return { reason: describePause(paused), brake: true, everyItem: true };
  // Not the item's fault: nothing starts, nothing is failed, and status and the daemon say why, as for a pause.
  const misfit = launcherMisfit(deps.config.worker);
  if (misfit) return { reason: misfit, brake: false, everyItem: true };
  // Below no-remote nothing is launched, so the program is not needed yet.
  if (deps.effects.sessions) {
    const program = await findWorkerProgram(deps.config);
    if ("missing" in program) return { reason: program.missing, brake: false, everyItem: true };
  }
  return undefined;
}

/** The questions about one item, asked afresh each time (a start just made changes the counts). */
export async function gateForItem(deps: GateDeps, item: WorkItem, options: { force?: boolean } = {}): Promise<Closed | undefined> {
  const { store, config } = deps;
  const capacity = observeCapacity({ sessionRoot: deps.sessionRoot, config, store });
  if (!capacity.observable) return { reason: `capacity cannot be observed: ${capacity.why}`, brake: false, everyItem: true };
  if (!options.force) {
    const hold = findHold(store, item.id, item.repo);
    if (hold) return { reason: describeWait(hold), brake: true, everyItem: false };
    const answer = capacity.canDispatch(item.repo);
    if (!answer.ok) return { reason: answer.reason, brake: true, everyItem: false };
  }
  const untrusted = await distrust(deps, item.repo) ?? await doubtIssue(deps, item);
  return untrusted ? { reason: untrusted, brake: false, everyItem: false } : undefined;
}

/** Why the item's issue may not be worked on (its label, title or body), asked of GitHub now and kept for `status`; undefined when its words are the owner's. */
async function doubtIssue(deps: GateDeps, item: WorkItem): Promise<string | undefined> {
  const author = deps.config.github.author;
  if (!author) return "github.author is not set, so no issue's words can be told to be yours; set it in the config";
  const rules = { author, label: deps.config.github.label };
  let facts;
  try {
    facts = await readTrustFacts(deps.github, item.repo, item.issue, rules);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return `GitHub could not be asked who labelled and edited ${item.repo}#${item.issue} (${why}); the start waits until it can`;
  }
  const doubt = recordTrust(deps.store, item, facts, rules);
  return doubt ? describeDoubt(item.id, doubt, rules) : undefined;
}

/** Why a repository may not be given work, with the way out; undefined when it may. */
async function distrust(deps: GateDeps, name: string): Promise<string | undefined> {
  const repo = Object.hasOwn(deps.config.repos, name) ? deps.config.repos[name] : undefined;
  if (!repo) return describeUntrusted(name, "not in the config");
  // Asked live: settings changed on GitHub since the last poll, or agent files changed on the
  // base branch since the last fetch (lib/repos/agent-files.ts), make a repository untrusted now.
  let check;
  try {
    check = await checkFingerprint(deps.store, deps.github, { name, path: repo.path, base: knownBaseBranch(deps.store, deps.config, name) }, { agentFiles: true, fetch: deps.effects.fetches });
  } catch (error) {
    if (!(error instanceof AgentFilesUnreadable)) throw error;
    return `${error.message}; the start waits until they can be`;
  }
  if (check.state === "not_onboarded") return describeUntrusted(name, "not onboarded");
  if (check.state !== "onboarded") return describeReapproval(name, check.changes, baseBranchOf(deps.store, deps.config, name), check.commit);
  return undefined;
}
