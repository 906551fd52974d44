/**
 * The owner's verbs as they act and what they say, once, for the commands and the dashboard's
 * buttons alike: each runs the verb's own function (retryItem, abandonItem, resetItem,
 * relaunchItem, cancelSession, placeKeep, hold, pause, acknowledgeAnomaly, sendToWorker) and
 * returns the lines the command prints and the exit code it returns. A command writes them to
 * stdout; the dashboard shows them as the button's answer. A refusal is the verb's own error,
 * thrown, with the same words either way.
 */
import { describeHold, hold, pause, reasonText, unhold, unpause } from "../controls.ts";
import type { HoldTarget } from "../controls.ts";
import type { DispatchDeps } from "../dispatch-deps.ts";
import { PreconditionError } from "../../errors.ts";
import { describeKeep, placeKeep, releaseKeep } from "../../ending/keeps.ts";
import type { KeepEntry } from "../../ending/keeps.ts";
import type { Config } from "../../config.ts";
import type { GitHubReader } from "../../boundaries/github-types.ts";
import { describeChanges } from "../../repos/fingerprint.ts";
import { onboardRepository } from "../../repos/onboard.ts";
import type { OnboardResult } from "../../repos/onboard.ts";
import { acknowledgeAnomaly, anomalyItemText, listAnomalies } from "../../store/anomalies.ts";
import type { Anomaly } from "../../store/anomalies.ts";
import type { Store } from "../../store/open.ts";
import { getItem, noSuchItem } from "../../work-items/queries.ts";
import { abandonItem, describeLeftWorker } from "./abandon.ts";
import { cancelSession, cancelTarget, describeCancel } from "./cancel.ts";
import type { CancelDeps } from "./cancel.ts";
import { RelaunchFailedError, relaunchItem } from "./relaunch.ts";
import { resetItem } from "./reset.ts";
import { retryItem } from "./retry.ts";
import type { RetryDeps } from "./retry.ts";
import { describeSent, sendToWorker } from "./send.ts";
import type { SendDeps } from "./send.ts";

/** What a verb said: the lines its command prints, and the exit code it returns (0: done). */
export interface Said {
  lines: string[];
  code: number;
}

const ok = (...lines: string[]): Said => ({ lines, code: 0 });

/** `pause`: dispatch stops until unpaused. */
export function pauseSaid(store: Store, reason?: string): Said {
  const { changed, current } = pause(store, { reason });
  const why = reasonText(current.reason);
  return ok(changed ? `paused${why}: no worker session is dispatched until "robot-army unpause"` : `already paused since ${current.since}${why}`);
}

/** `unpause`: dispatch runs again. */
export function unpauseSaid(store: Store | undefined): Said {
  const lifted = store ? unpause(store) : undefined;
  return ok(lifted ? `unpaused: dispatch runs again (it was paused since ${lifted.current.since})` : "not paused");
}

/** `hold`: dispatch leaves an item, or a repository's items, alone. */
export function holdSaid(store: Store, target: HoldTarget, reason?: string): Said {
  const { changed, current } = hold(store, target, { reason });
  const what = describeHold(store, current);
  const why = reasonText(current.reason);
  const unholdCommand = "item" in target ? `robot-army unhold ${target.item}` : `robot-army unhold --repo ${target.repo}`;
  return ok(changed ? `held: ${what}${why}: not dispatched until "${unholdCommand}"` : `already held since ${current.set_at}: ${what}${why}`);
}

/** `unhold`: the hold is lifted. */
export function unholdSaid(store: Store | undefined, target: HoldTarget): Said {
  if (!store) {
    if ("item" in target) throw noSuchItem(target.item);
    return ok(`not held: repository ${target.repo}`);
  }
  const lifted = unhold(store, target);
  const what = describeHold(store, "item" in target ? { item: target.item, repo: null } : { item: null, repo: target.repo });
  return ok(lifted ? `unheld: ${what} (held since ${lifted.current.set_at})` : `not held: ${what}`);
}

/** `keep`: the item's worker is not retired while the keep stands. */
export function keepSaid(store: Store | undefined, config: Pick<Config, "worker">, id: number): Said {
  if (!store) throw noSuchItem(id);
  const { placed, keep } = placeKeep(store, id, { worker: config.worker });
  return ok(placed ? `kept: ${describeKeep(keep)}` : `already kept since ${keep.placed_at}: ${describeKeep(keep)}`);
}

/** `unkeep`: the keep is released and the worker goes back to the ordinary rules. */
export function unkeepSaid(store: Store | undefined, id: number): Said {
  if (!store) throw noSuchItem(id);
  const released = releaseKeep(store, id);
  if (!released) {
    const item = getItem(store, id)!;
    return ok(`not kept: item ${item.id} (${item.repo}#${item.issue})`);
  }
  return ok(`unkept: item ${released.item} (${released.repo}#${released.issue}, ${released.state}): ${whatNow(released)}`);
}

/** What the ordinary rules do with the worker a released keep covered. */
function whatNow(keep: KeepEntry): string {
  if (!keep.session) return "its keep covered no live session";
  const worker = `${keep.session.name} (${keep.session.id})`;
  if (keep.state !== "done") return `${worker} is retired by the ordinary rules once the item is done`;
  return `${worker} goes back to the ordinary rules: with a merged pull request it is retired on the next pass that finds it idle, otherwise once it has been idle 30 minutes`;
}

/** `anomalies --acknowledge N`: the owner has looked. */
export function acknowledgeSaid(store: Store | undefined, id: number): { said: Said; anomaly: Anomaly } {
  if (!store) throw new PreconditionError(`No anomaly ${id} is on record; "robot-army anomalies --all" lists them`);
  const before = listAnomalies(store).find((a) => a.id === id);
  const anomaly = acknowledgeAnomaly(store, id);
  const already = before?.acknowledged_at != null;
  return { said: ok(`${already ? "already acknowledged" : "acknowledged"}: anomaly ${anomaly.id} (${anomaly.kind}${anomalyItemText(anomaly)})`), anomaly };
}

/** `retry`: a failed item goes back to the queue. */
export async function retrySaid(deps: RetryDeps, id: number): Promise<Said> {
  const item = await retryItem(deps, id);
  return ok(`work item ${item.id} (${item.repo}#${item.issue}): failed -> ready`);
}

/** `abandon`: the item is given up for good; a worker still running is named, and left running. */
export function abandonSaid(store: Store, sessionRoot: string, id: number, reason?: string): Said {
  const { item, before, worker } = abandonItem(store, sessionRoot, id, reason);
  const left = describeLeftWorker(worker, item.id);
  return ok(`work item ${item.id} (${item.repo}#${item.issue}): ${before} -> abandoned (${item.reason})`, ...(left ? [left] : []));
}

/** `resume` or `restart`: a new session in the item's worktree; a worker that could not start throws RelaunchFailedError. */
export async function relaunchSaid(deps: DispatchDeps, how: "resume" | "restart", id: number, force = false): Promise<Said> {
  const outcome = await relaunchItem(deps, id, { how, force });
  if (outcome.result === "failed") throw new RelaunchFailedError(outcome);
  const s = outcome.session!;
  return ok(
    `work item ${id}: ${how === "resume" ? "resumed" : "restarted"} as attempt ${outcome.attempt} in session ${s.name} (${s.id})`,
    `  worktree: ${s.worktree}`,
    `  branch  : ${s.branch}`,
    outcome.earlier ? `  earlier : ${outcome.earlier}` : "  earlier : none on record",
  );
}

/** `reset`: the worktree and branch go under the guards of every removal; exit 3 when a guard kept them. */
export async function resetSaid(deps: DispatchDeps, id: number, force: boolean): Promise<Said> {
  const { removal, reset, item, held } = await resetItem(deps, id, { force });
  const say = (o: { status: string; reason?: string }) =>
    o.status === "kept" ? `kept (${o.reason})` : o.status === "not_attempted" ? "kept (its worktree was kept)" : o.status;
  const lines = [`worktree: ${say(removal.worktree)}`, `branch  : ${say(removal.branch)}`];
  if (removal.branch.status === "deleted" && removal.bundle) lines.push(`bundle  : ${removal.bundle} (bring the branch back: ${removal.restore})`);
  if (!reset) lines.push(`work item ${item.id} stays ${item.state}; "robot-army reset ${item.id} --force" at a terminal discards the work`);
  else lines.push(`work item ${item.id} (${item.repo}#${item.issue}): ready`);
  if (held) lines.push(`work item ${item.id} is held for you: ${held}`);
  return { lines, code: reset ? 0 : 3 };
}

/** `cancel`, once the owner confirmed: the session is stopped; exit 1 when what it started runs on. */
export async function cancelSaid(store: Store, deps: CancelDeps, id: number): Promise<Said> {
  const target = cancelTarget(store, id);
  const result = await cancelSession(store, deps, target);
  return { lines: [describeCancel(target.session.name, id, result)], code: result.did === "left-running" ? 1 : 0 };
}

/**
 * `onboard <repo> --reapprove`, as the dashboard's approval asks it: the settings and agent files as
 * they are now approved, only as the owner was shown them (`agentCommit`, `settingsDigest`).
 */
export async function reapproveSaid(store: Store, github: Pick<GitHubReader, "getRepository">, config: Config, name: string, shown: { agentCommit?: string; settingsDigest?: string } = {}): Promise<Said> {
  const result = await onboardRepository(store, github, config, name, { reapprove: true, ...shown });
  return ok(reapprovedLine(result), `recorded    at ${result.record.onboarded_at}; "robot-army log --kind repo." shows it`);
}

/** What a reapproval says first, as `onboard` prints it. */
export function reapprovedLine(result: OnboardResult): string {
  if (result.outcome === "unchanged") return `unchanged   ${result.name}: onboarded at ${result.record.onboarded_at}, settings as approved`;
  return `reapproved  ${result.name}: ${describeChanges(result.changes) || "nothing differs now"}`;
}

/** `send`: a line typed into the worker's window. */
export async function sendSaid(deps: SendDeps, id: number, text: string): Promise<Said> {
  return ok(describeSent(await sendToWorker(deps, id, text)));
}
