/**
 * The short soak of two hosts: the rehearsal's lifecycle on alpha and beta against one
 * forge, either daemon SIGKILLed 4 times at moments fixed by a seed; every issue must be
 * dispatched exactly once and none lost (scripts/dev/bench-soak-hosts.ts; `npm run bench --
 * soak-hosts` is the long one).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { isDeno } from "../../lib/runtime.ts";
import { runHostsSoak } from "./bench-soak-hosts.ts";

test("two hosts work six issues while either daemon is SIGKILLed 4 times: each issue dispatched once, by one host, none lost, no claim left", async () => {
  const result = await runHostsSoak({ kills: 4, seed: 11, spreadMs: 20_000 });
  console.log(`short soak of two hosts on ${isDeno() ? "deno" : "node"}: ${(result.ms / 1000).toFixed(1)} s\n  ${result.figures.join("\n  ")}`);
  assert.equal(result.broken, [], result.broken.join("\n"));
  assert.ok(result.figures.some((f) => f.startsWith("issues worked by exactly one host: 6 of 6 ")));
  assert.ok(result.figures.includes("claims left on the forge: 0"));
  assert.ok(result.spend.every((s) => s.beats > 0 && s.requests > 0), "both hosts beat and claimed");
});

test.run();
