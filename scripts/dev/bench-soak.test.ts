/**
 * The short soak: the rehearsal with its daemon SIGKILLed 5 times at moments fixed by a
 * seed, spread over its first 30 seconds, while the CLI and the dashboard are used; no
 * invariant may break (scripts/dev/bench-soak.ts; `npm run bench -- soak` is the long one).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { isDeno } from "../../lib/runtime.ts";
import { killGaps, runSoak } from "./bench-soak.ts";
import { seededRandom } from "../../lib/testing/soak.ts";

/** The short soak's seed: its kills come 8.7, 0.8, 5.6, 1.2 and 9.2 seconds after each daemon start. */
const SEED = 3;

test("the kill moments repeat for a seed, so a failing soak replays", () => {
  assert.equal(killGaps(seededRandom(SEED), 5, 30_000), killGaps(seededRandom(SEED), 5, 30_000));
  assert.not.equal(killGaps(seededRandom(SEED), 5, 30_000), killGaps(seededRandom(SEED + 1), 5, 30_000));
  assert.ok(killGaps(seededRandom(SEED), 50, 60_000).every((gap) => gap >= 300 && gap <= 2_400));
});

test("the rehearsal survives its daemon SIGKILLed 5 times while the CLI and the dashboard are used: every invariant holds", async () => {
  const result = await runSoak({ kills: 5, seed: SEED, spreadMs: 30_000 });
  console.log(`short soak on ${isDeno() ? "deno" : "node"}: ${(result.ms / 1000).toFixed(1)} s\n  ${result.figures.join("\n  ")}`);
  assert.is(result.kills, 5);
  assert.equal(result.broken, [], result.broken.join("\n"));
});

test.run();
