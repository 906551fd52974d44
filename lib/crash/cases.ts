/**
 * One crash case per audited effect kind (lib/store/effect-kinds.ts): the world it starts
 * from and the command that crosses its boundary, as an owner or the daemon would run it.
 * The table is keyed by kind and typed to have every kind, and `missingCases` is checked
 * by a test, so no effect can be added without a crash case.
 */
import { EFFECT_KINDS } from "../store/effect-kinds.ts";
import type { EffectKindName } from "../store/effect-kinds.ts";
import type { CrashSetupName } from "./setups.ts";

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
}

const TICK = ["run", "--once", "--effect-level", "live"];
const GC = ["session", "gc"];

/** Every effect kind's crash case. */
export const CRASH_CASES: Record<EffectKindName, CrashCase> = {
  "github.comment": { setup: "polled", cross: TICK },
  "worktree.create": { setup: "polled", cross: TICK },
  "session.launch": { setup: "polled", cross: TICK },
  "worktree.remove": { setup: "worker-ended", cross: ["reset", "1", "--effect-level", "live"] },
  "session.kill": { setup: "working", cross: ["session", "kill", "ra-widgets-1"] },
  "session.cancel": { setup: "working", cross: ["cancel", "1"], stdin: "1\n" },
  "session.stop": { setup: "session-orphaned", cross: GC },
  "session.remove-orphan": { setup: "session-orphaned", cross: GC },
  "session.remove": { setup: "session-ended", cross: GC },
  "session.abandon": { setup: "session-cwd-gone", cross: GC },
  "session.respawn": { setup: "permanent-ended", cross: GC },
  "session.start": { setup: "permanent-ended", cross: GC },
  "session.mark-flapping": { setup: "permanent-flapping", cross: GC },
  "spool.damaged": { setup: "spool-damaged", cross: TICK },
  "episode.recovered": { setup: "episode-stranded", cross: ["recover", "episodes", "--older-than", "30m"], at: "2026-01-15T11:00:00Z" },
};

/** Effect kinds with no crash case: empty, or a new effect was added uncovered. */
export function missingCases(cases: Partial<Record<string, CrashCase>> = CRASH_CASES): string[] {
  return Object.keys(EFFECT_KINDS).filter((kind) => !Object.hasOwn(cases, kind));
}
