/**
 * One crash case per audited effect kind (lib/store/effect-kinds.ts): the world it starts
 * from and the command that crosses its boundary, as an owner or the daemon would run it.
 * The table is keyed by kind and typed to have every kind, and `missingCases` is checked
 * by a test, so no effect can be added without a crash case. Each case states, for a crash
 * after the intent and after the outcome, what is true in the world and what recovery must
 * conclude from it (lib/crash/checks.ts holds the restarted daemon to it).
 */
import { EFFECT_KINDS } from "../store/effect-kinds.ts";
import type { EffectKindName } from "../store/effect-kinds.ts";
import type { CrashSetupName } from "./setups.ts";
import type { WorldFact } from "./world.ts";

/** Where an effect is cut short: right after its intent, or right after its outcome. */
export type CrashPhase = "intent" | "outcome";

/**
 * What recovery must conclude of the effect the crash cut, and what is true in the world
 * right after the crash (lib/crash/world.ts reads it; omitted where the suite cannot see it).
 */
export type Conclusion = (
  /** The outcome was written before the crash: nothing is left to settle, nothing reported. */
  | { settle: "nothing"; world?: WorldFact }
  /**
   * Settled from the kind's evidence: an outcome with `settled_from` the kind's evidence,
   * this `ok` and a `found` matching; `reported` when the owner is also told by an
   * `effect_unfinished` anomaly (never otherwise).
   */
  | { settle: "settled"; ok: boolean; found: string | RegExp; reported?: boolean; world?: WorldFact }
  /** Nothing readable settles it: no outcome, an `effect_unfinished` anomaly naming its action. */
  | { settle: "reported"; world?: WorldFact }
) & {
  /**
   * The state recovery leaves the cut effect's item in, where a crash mid-dispatch decides it:
   * `interrupted` (its claim cut short, no worker proven its), `active` with the launched
   * worker adopted (lib/daemon/adopt-worker.ts: its row is the launched session's, its issue told once),
   * or `requeued`: no worker of it ever started, so it went back to the queue by itself
   * (lib/daemon/never-started.ts) and the restart's passes may have dispatched it anew; or `dispatched`: the
   * restart's passes started its worker under the claim on GitHub the cut effect made (kept on record, or found by its
   * action, and moved on from by a fast-forward: never made anew beside it nor left held by nobody).
   */
  item?: "interrupted" | "active" | "requeued" | "dispatched";
  /**
   * For a kind that waits `settleAfterSeconds` after its writer is gone (a request or a child still on its way may
   * land), cut after its intent: a restart pass at the crash's own clock, inside that wait, leaves the intent neither
   * settled nor reported, and, where a crash mid-dispatch decides it, the item in this state (its claim not concluded
   * while its launch is not: `dispatching`).
   */
  pending?: { item?: "dispatching" };
};

/** How to reach one effect's boundary. */
export interface CrashCase {
  /** The world the case starts from (lib/crash/setups.ts). */
  setup: CrashSetupName;
  /** The robot-army command that crosses the boundary, as argv after `robot-army`. */
  cross: string[];
  /** What the crossing command reads on stdin (a confirmation). */
  stdin?: string;
  /** The clock of the crossing, when it must be later than the setup's (the lab starts at LAB_NOW). */
  at?: string;
  /** What recovery concludes after a crash at each phase. */
  concludes: Record<CrashPhase, Conclusion>;
  /** The world must read the same after the restart's passes as right after the crash: the effect is never done again. */
  unchangedByRecovery?: boolean;
}

const TICK = ["run", "--once", "--effect-level", "live"];
const GC = ["session", "gc"];

/** A crash right after an outcome: the effect is done and on record, as the world shows. */
const done = (world?: WorldFact, item?: Conclusion["item"]): Conclusion => ({ settle: "nothing", world, item });
/** A crash right after an intent, before the effect: it did not take place, as the world shows. */
const notDone = (found: string | RegExp, world?: WorldFact, reported?: true, item?: Conclusion["item"]): Conclusion => ({ settle: "settled", ok: false, found, world, reported, item });

/** Every effect kind's crash case. */
export const CRASH_CASES: Record<EffectKindName, CrashCase> = {
  "github.comment": {
    setup: "polled", cross: TICK,
    // The issue was never told: the owner is, by the anomaly (once a POST still on its way would have landed).
    concludes: { intent: { ...notDone("not posted", "not posted", true), pending: {} }, outcome: done("posted") },
  },
  // The claim on GitHub, made before the item is claimed here. Cut after its intent, nothing was created: the
  // restart's dispatch claims anew (under an action of its own), and the cut intent is settled "not made" once a request
  // still on its way would have landed. Cut after its outcome, the claim stands on record as this store's, and the
  // restart's dispatch moves it on and starts the worker: never a claim held for ever by nobody.
  "claim.create": {
    setup: "polled", cross: TICK,
    concludes: { intent: { ...notDone("not made", "not claimed"), pending: {} }, outcome: done("claimed", "dispatched") },
  },
  // A done item's claim released after its worker's retirement. Cut after its intent, the claim still stands: the restart's
  // pass releases it anew, and the cut intent, settled once a request on its way would have landed, reads it released.
  "claim.release": {
    setup: "merged", cross: TICK, at: "2026-01-15T10:10:00Z",
    concludes: { intent: { settle: "settled", ok: true, found: "released", world: "claimed", pending: {} }, outcome: done("released") },
  },
  // This host's heartbeat, advanced in the tick's hosts step. Cut after its intent, nothing moved: the restart's pass
  // advances it anew (under an action of its own), and the cut intent is settled "not made". Cut after its outcome, it stands.
  "host.heartbeat": {
    setup: "polled", cross: TICK,
    concludes: { intent: { ...notDone("not made", "not advanced"), pending: {} }, outcome: done("advanced") },
  },
  // A dispatch cut before its worker was launched: the claim is cut short, no worker of it ever started, and the item goes
  // back to the queue (with the worktree, when it was made, which the next dispatch carries on in).
  "worktree.create": {
    setup: "polled", cross: TICK,
    concludes: { intent: notDone("not made", "absent", undefined, "requeued"), outcome: done("present", "requeued") },
  },
  // Cut after the launch's intent, before its child was started: within the launch's settleAfterSeconds (its child may
  // still be writing its record) the restart concludes nothing and the item stays dispatching; then "not launched", and
  // interrupted for the owner: a launch begun may have run a worker whose record is gone, so it is never requeued.
  // Cut after the launch's outcome, before the row: the running worker is adopted, the item active.
  "session.launch": {
    setup: "polled", cross: TICK,
    concludes: {
      intent: { ...notDone(/^not launched/, "no record", undefined, "interrupted"), pending: { item: "dispatching" } },
      outcome: done("running", "active"),
    },
  },
  "worktree.remove": {
    setup: "worker-ended", cross: ["reset", "1", "--effect-level", "live"],
    concludes: { intent: notDone("not removed", "present"), outcome: done("absent") },
  },
  // git's record of a vanished worktree: cut after its intent, git still lists it, and only the owner can be told.
  "worktree.prune": {
    setup: "worktree-vanished", cross: ["worktree", "prune", "--effect-level", "live"],
    concludes: { intent: { settle: "reported", world: "listed" }, outcome: done("pruned") },
  },
  // Cleanup of a done item whose pull request was merged: the worktree goes, then the bundle is written, then the branch.
  "bundle.write": {
    setup: "cleanable", cross: ["cleanup", "1", "--effect-level", "live"],
    concludes: { intent: notDone("not written", "no bundle"), outcome: done("bundle written") },
  },
  "branch.delete": {
    setup: "cleanable", cross: ["cleanup", "1", "--effect-level", "live"],
    concludes: { intent: notDone("not deleted", "branch present"), outcome: done("branch absent") },
  },
  // Cleanup of a done item whose worktree holds only the record its agent's SessionEnd hook left: cut after the intent
  // nothing was copied and the record is still in the worktree; after the outcome it is whole in the archive.
  "records.archive": {
    setup: "record-left", cross: ["cleanup", "1", "--effect-level", "live"],
    concludes: { intent: notDone("not archived", "not archived"), outcome: done("archived") },
  },
  "bundle.remove": {
    setup: "bundle-old", cross: TICK, at: "2026-03-01T10:00:00Z",
    concludes: { intent: notDone("not removed", "bundle written"), outcome: done("no bundle") },
  },
  "session.kill": { setup: "working", cross: ["session", "kill", "ra-widgets-1"], concludes: { intent: notDone("still running", "running"), outcome: done("stopped") } },
  "session.cancel": { setup: "working", cross: ["cancel", "1"], stdin: "1\n", concludes: { intent: notDone("still running", "running"), outcome: done("stopped") } },
  // Cut after its intent, the worker was never signalled: it still runs, and the restart's pass retires it anew; the cut
  // retirement is concluded only once a signal it sent would have ended the worker, and the record then shows it stopped.
  "session.retire": {
    setup: "merged", cross: TICK, at: "2026-01-15T10:10:00Z",
    concludes: { intent: { settle: "settled", ok: true, found: /^stopped/, world: "running", pending: {} }, outcome: done("stopped") },
  },
  "session.stop": { setup: "session-orphaned", cross: GC, concludes: { intent: notDone("still running", "running"), outcome: done("stopped") } },
  "session.remove-orphan": { setup: "session-orphaned", cross: GC, concludes: { intent: notDone("not removed", "files kept"), outcome: done("files removed") } },
  "session.remove": { setup: "session-ended", cross: GC, concludes: { intent: notDone("not removed", "files kept"), outcome: done("files removed") } },
  "session.abandon": { setup: "session-cwd-gone", cross: GC, concludes: { intent: { settle: "reported", world: "not marked" }, outcome: done("marked") } },
  // Cut after its intent, the respawn wrote no new generation: the ended one is all there is.
  "session.respawn": { setup: "permanent-ended", cross: GC, concludes: { intent: notDone(/^not (launched|respawned)/, "stopped"), outcome: done("stopped") } },
  // Cut after its intent, the new generation's record has no holder: nothing was started (concluded once its holder had time to write its pid).
  "session.start": {
    setup: "permanent-ended", cross: GC,
    concludes: { intent: { ...notDone(/^not (launched|started)/, "stopped"), pending: {} }, outcome: done("running") },
  },
  "session.mark-flapping": { setup: "permanent-flapping", cross: GC, concludes: { intent: { settle: "reported", world: "not marked" }, outcome: done("marked") } },
  // The crashed drain set nothing aside; the restart's drain does, under an action of its own.
  "spool.damaged": { setup: "spool-damaged", cross: TICK, concludes: { intent: notDone(/^not set aside/, "at its path"), outcome: done("set aside") } },
  // Cut after its intent, the tab is still there: the restart's sweep closes it, under an action of its own.
  // A webhook cannot be asked what it got: a send cut short is reported, and never sent again (the world stays as the crash left it).
  "notification.send": {
    setup: "notifying", cross: TICK, unchangedByRecovery: true,
    concludes: { intent: { settle: "reported", world: "not received" }, outcome: done("received") },
  },
  // No terminal keeps what was typed: a send cut short is reported, and never typed again (the world stays as the crash left it).
  "session.send": {
    setup: "tmux-worker", cross: ["send", "1", "yes, go ahead"], unchangedByRecovery: true,
    concludes: { intent: { settle: "reported", world: "not received" }, outcome: done("received") },
  },
  // Feedback typed into an idle worker by the daemon's pass: as for a send, cut short it is reported, and its feedback never typed again.
  "feedback.delivered": {
    setup: "tmux-worker-feedback", cross: TICK, unchangedByRecovery: true,
    concludes: { intent: { settle: "reported", world: "not received" }, outcome: done("received") },
  },
  "tab.close": { setup: "tab-left", cross: TICK, at: "2026-01-15T10:05:00Z", concludes: { intent: notDone(/^not closed/, "open"), outcome: done("closed") } },
  // The owner's yes to Claude Code's folder trust: cut after its intent the file holds no answer; after it, the clone is trusted.
  "agent.trust": {
    setup: "claude-untrusted", cross: ["trust", "demo/widgets", "--effect-level", "live"],
    concludes: { intent: notDone("not recorded", "untrusted"), outcome: done("trusted") },
  },
  "episode.recovered": {
    setup: "episode-stranded", cross: ["recover", "episodes", "--older-than", "30m"], at: "2026-01-15T11:00:00Z",
    concludes: { intent: { settle: "reported" }, outcome: done() },
  },
};

/** Effect kinds with no crash case: empty, or a new effect was added uncovered. */
export function missingCases(cases: Partial<Record<string, CrashCase>> = CRASH_CASES): string[] {
  return Object.keys(EFFECT_KINDS).filter((kind) => !Object.hasOwn(cases, kind));
}
