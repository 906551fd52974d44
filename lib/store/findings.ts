/**
 * What the evidence of an effect a crash cut short says of it (lib/store/effect-kinds.ts names
 * each kind's evidence): the one answer every evidence reader gives, wherever its kind's
 * reader lives (the daemon's sweep, cleanup's record archive, the tab sweep).
 */

/** What the evidence says of one unfinished effect. */
export type Finding =
  /** Settled: `found` says what was found, `ok` whether the effect took place; `facts` go into the outcome. */
  | { settled: true; ok: boolean; found: string; facts?: Record<string, unknown>; tellOwner?: string }
  /** Nothing readable settles it: the owner is told what to check. */
  | { settled: false; check: string }
  /** The evidence cannot be read now (GitHub unreachable): left for the next pass. */
  | { settled: "later"; why: string };
