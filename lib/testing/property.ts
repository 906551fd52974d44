/**
 * Property-based checks (fast-check) that say how much they tried: each prints one line,
 * `property: <what it promises> <N> cases`, so a suite's output counts the cases per parser.
 * `RA_PROPERTY_RUNS` scales every check's runs (e.g. 10 for a long hunt, 0.1 for a quick look).
 */
import fc from "fast-check";

/** How many runs a check makes when it names none. */
export const DEFAULT_RUNS = 1000;

function runsFor(runs: number): number {
  const scale = Number(process.env.RA_PROPERTY_RUNS ?? 1);
  return Math.max(1, Math.round(runs * (Number.isFinite(scale) && scale > 0 ? scale : 1)));
}

/** Checks a synchronous property `runs` times (fast-check shrinks and reports a failing case) and prints its count. */
export function holds<Ts extends [unknown, ...unknown[]]>(promise: string, arbitraries: { [K in keyof Ts]: fc.Arbitrary<Ts[K]> }, predicate: (...args: Ts) => boolean | void, runs = DEFAULT_RUNS): void {
  const numRuns = runsFor(runs);
  fc.assert(fc.property(...arbitraries, predicate), { numRuns });
  console.log(`property: ${promise} ${numRuns} cases`);
}

/** `holds` for a property that awaits (files, validators loaded on first use). */
export async function holdsAsync<Ts extends [unknown, ...unknown[]]>(promise: string, arbitraries: { [K in keyof Ts]: fc.Arbitrary<Ts[K]> }, predicate: (...args: Ts) => Promise<boolean | void>, runs = DEFAULT_RUNS): Promise<void> {
  const numRuns = runsFor(runs);
  await fc.assert(fc.asyncProperty(...arbitraries, predicate), { numRuns });
  console.log(`property: ${promise} ${numRuns} cases`);
}

/** Runs `fn`; returns what it threw, or undefined when it returned. */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
    return undefined;
  } catch (error) {
    return error;
  }
}

/** Awaits `fn`; returns what it threw, or undefined when it resolved. */
export async function thrownAsync(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
    return undefined;
  } catch (error) {
    return error;
  }
}
