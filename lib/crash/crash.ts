/**
 * One crash at one boundary: a fresh lab brought to the case's world, the crossing command
 * run with `RA_FAULT=<kind>:<phase>` (it must die by SIGKILL, or it never reached its
 * boundary), what the world shows of the cut effect read, then the daemon restarted: for a
 * kind that waits `settleAfterSeconds` after its writer is gone, cut after its intent, first
 * at the crash's own clock, inside that wait, where the cut intent must be left unconcluded
 * (the case's `pending`); then once at the crash's clock past that wait (`firstPassAt`), where
 * no effect's timeout has passed and only its writer being gone settles an intent (the cut one
 * must be settled or reported there), then past every timeout, again until a pass changes
 * nothing; and every recovery check run, the case's conclusion among them (lib/crash/checks.ts).
 */
import { CRASH_CASES } from "./cases.ts";
import type { Conclusion, CrashCase, CrashPhase } from "./cases.ts";
import { conclusionProblems, crashEvidence, cutEffect, pendingProblems, recoveryProblems, settledOrReported, storeSnapshot } from "./checks.ts";
import type { AnomalyList } from "./checks.ts";
import { LAB_NOW } from "./lab.ts";
import type { Lab, LabTemplate, Run } from "./lab.ts";
import { CRASH_SETUPS } from "./setups.ts";
import { worldOf } from "./world.ts";
import { EFFECT_KINDS } from "../store/effect-kinds.ts";
import type { EffectKindName } from "../store/effect-kinds.ts";

export type { CrashPhase };

/** What became of one crash. */
export interface CrashResult {
  kind: EffectKindName;
  phase: CrashPhase;
  /** Restart passes run before the daemon was quiet. */
  passes: number;
  /** What recovery concluded of the cut effect, in words (`settled "not posted", reported`), once checked. */
  concluded?: string;
  ms: number;
  /** Empty when it crashed and recovered. */
  problems: string[];
}

/** The restarted daemon's clock after its first pass: two hours on, past every effect's timeout (lib/store/effect-kinds.ts). */
export const RESTART_AT = "2026-01-15T12:00:00Z";

/** Passes (the first at the crash's clock) after which a daemon that still changes something is a problem. */
const MAX_PASSES = 6;

/** Crashes at one boundary (by its case, unless another is given) and checks the recovery; never throws for what it finds. */
export async function crashAt(template: LabTemplate, kind: EffectKindName, phase: CrashPhase, crash: CrashCase = CRASH_CASES[kind]): Promise<CrashResult> {
  const started = Date.now();
  const result: CrashResult = { kind, phase, passes: 0, ms: 0, problems: [] };
  let lab: Lab | undefined;
  try {
    lab = await template.open();
    await CRASH_SETUPS[crash.setup](lab);
    await crashAndRecover(lab, crash, kind, phase, result);
  } catch (error) {
    result.problems.push(`the case could not run: ${(error as Error).message}`);
  } finally {
    await lab?.close();
    result.ms = Date.now() - started;
  }
  return result;
}

/** The crossing with its fault point set, the restart passes until quiet, and the checks, each problem added to `result`. */
async function crashAndRecover(lab: Lab, crash: CrashCase, kind: EffectKindName, phase: CrashPhase, result: CrashResult): Promise<void> {
  const fault = `${kind}:${phase}`;
  const crashedAt = crash.at ?? LAB_NOW;
  const cut = await lab.robotArmy(crash.cross, { env: { RA_FAULT: fault, RA_NOW: crashedAt }, stdin: crash.stdin });
  if (cut.signal !== "SIGKILL") {
    result.problems.push(`robot-army ${crash.cross.join(" ")} did not reach ${fault}: it ${cut.signal ? `died by ${cut.signal}` : `exited ${cut.code}`}${tail(cut)}`);
    return;
  }
  const evidence = crashEvidence(lab);
  const effect = await cutEffect(lab, kind, phase, cut.pid!);
  if (typeof effect === "string") result.problems.push(effect);
  const firstAt = firstPassAt(kind, crashedAt);
  if (typeof firstAt !== "string") return void result.problems.push(firstAt.problem);
  // A kind that waits after its writer is gone is restarted at the crash's own clock first, inside that wait: nothing concluded yet.
  const waits = (EFFECT_KINDS[kind] as { settleAfterSeconds?: number }).settleAfterSeconds ?? 0;
  const pending = crash.concludes[phase].pending;
  if (phase === "intent" && (waits > 0 || pending)) {
    if (!pending) return void result.problems.push(`${kind} waits ${waits}s after its writer is gone, yet its case states nothing of a restart inside that wait (concludes.intent.pending)`);
    const early = await lab.robotArmy(["run", "--once", "--effect-level", "live"], { env: { RA_NOW: crashedAt } });
    result.passes += 1;
    if (hasStackTrace(early)) result.problems.push(`the restart pass at the crash's clock printed a stack trace${tail(early)}`);
    if (typeof effect !== "string") result.problems.push(...await pendingProblems(lab, effect, pending, waits));
  }
  let before = await storeSnapshot(lab);
  let first = true;
  let last: Run;
  for (;;) {
    // The first pass keeps the crash's clock (past the kind's settleAfterSeconds): no timeout has passed, so only a writer proven gone settles.
    last = await lab.robotArmy(["run", "--once", "--effect-level", "live"], { env: { RA_NOW: first ? firstAt : RESTART_AT } });
    result.passes += 1;
    if (hasStackTrace(last)) result.problems.push(`restart pass ${result.passes} printed a stack trace${tail(last)}`);
    if (first && phase === "intent" && typeof effect !== "string" && !(await settledOrReported(lab, effect))) {
      result.problems.push(`the first restart pass, at the crash's clock, neither settled nor reported ${fault} though its writer, pid ${cut.pid}, is gone`);
    }
    const after = await storeSnapshot(lab);
    // Quiet only once a pass past every timeout changes nothing.
    if (after === before && !first) break;
    before = after;
    first = false;
    if (result.passes >= MAX_PASSES) {
      result.problems.push(`the daemon still changed something after ${MAX_PASSES} restart passes`);
      break;
    }
  }
  if (last.code !== 0) result.problems.push(`the last restart pass exited ${last.code ?? last.signal}${tail(last)}`);
  if (typeof effect !== "string") {
    if (crash.unchangedByRecovery) {
      const after = await worldOf(lab, kind, effect.intent).catch((error: Error) => error.message);
      if (after !== effect.world) result.problems.push(`after the restart's passes the world reads "${after}", not "${effect.world}" as the crash left it: ${kind} was done again`);
    }
    result.problems.push(...await conclusionProblems(lab, effect, crash.concludes[phase]));
    result.concluded = concludedWords(crash.concludes[phase]);
  }
  result.problems.push(...await recoveryProblems(lab, evidence, () => listedAnomalies(lab)));
}

/** `robot-army anomalies --json`'s list, or why it cannot be read. */
async function listedAnomalies(lab: Lab): Promise<AnomalyList> {
  const run = await lab.robotArmy(["anomalies", "--json"], { env: { RA_NOW: RESTART_AT } });
  if (run.code !== 0) return `robot-army anomalies --json exited ${run.code ?? run.signal}${tail(run)}`;
  try {
    const listed = JSON.parse(run.stdout) as { anomalies?: unknown };
    return Array.isArray(listed.anomalies) ? listed.anomalies : `robot-army anomalies --json printed no "anomalies" list`;
  } catch {
    return `robot-army anomalies --json printed no JSON${tail(run)}`;
  }
}

/**
 * The first restart pass's clock: the crash's own, or as much later as the kind waits after
 * its writer is gone before reading its evidence (`settleAfterSeconds`: a request still on
 * its way may land), which must be short of its timeout, so only the writer-gone path settles.
 */
function firstPassAt(kind: EffectKindName, crashedAt: string): string | { problem: string } {
  const effect: { timeoutSeconds: number; settleAfterSeconds?: number } = EFFECT_KINDS[kind];
  const wait = effect.settleAfterSeconds ?? 0;
  if (wait >= effect.timeoutSeconds) return { problem: `${kind} waits ${wait}s after its writer is gone, not short of its ${effect.timeoutSeconds}s timeout: its writer-gone path cannot be told from its timeout` };
  return new Date(new Date(crashedAt).getTime() + wait * 1000).toISOString();
}

/** A conclusion in a few words, for the suite's line. */
function concludedWords(conclusion: Conclusion): string {
  const waited = conclusion.pending ? `pending while its writer may still land it${conclusion.pending.item ? ` (item ${conclusion.pending.item})` : ""}, then ` : "";
  return waited + concludedOnce(conclusion);
}

function concludedOnce(conclusion: Conclusion): string {
  const item = conclusion.item === "active" ? ", worker adopted" : conclusion.item ? `, item ${conclusion.item}` : "";
  if (conclusion.settle === "nothing") return `nothing to settle${item}`;
  if (conclusion.settle === "reported") return `reported${item}`;
  const found = typeof conclusion.found === "string" ? `"${conclusion.found}"` : String(conclusion.found);
  return `settled ${found}${conclusion.reported ? ", reported" : ""}${item}`;
}

function hasStackTrace(run: Run): boolean {
  return /^\s+at .+(:\d+:\d+\)?|\(native\))$/m.test(run.stderr + run.stdout);
}

function tail(run: Run): string {
  const text = (run.stderr.trim() || run.stdout.trim()).split("\n").slice(-3).join(" | ");
  return text ? `: ${text}` : "";
}
