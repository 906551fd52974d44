/**
 * The crash suite: every audited effect kind has a crash case, and at every boundary (each
 * kind, after its intent and after its outcome) robot-army is SIGKILLed, the daemon
 * restarted (first at the crash's own clock), and the recovery checked, down to what it
 * concluded of the cut effect. Two crashes run at once; each prints one line, and the
 * suite a total. `RA_CRASH_ONLY=<kind>[,<kind>...]` runs only those kinds.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { EFFECT_KINDS } from "../store/effect-kinds.ts";
import type { EffectKindName } from "../store/effect-kinds.ts";
import { CRASH_CASES, missingCases } from "./cases.ts";
import { crashAt } from "./crash.ts";
import type { CrashPhase, CrashResult } from "./crash.ts";
import { labTemplate } from "./lab.ts";

test("every audited effect kind has a crash case, so no effect can be added uncovered", () => {
  assert.equal(missingCases(), []);
  assert.equal(Object.keys(CRASH_CASES).sort(), Object.keys(EFFECT_KINDS).sort());
  const { "github.comment": _left, ...withoutOne } = CRASH_CASES;
  assert.equal(missingCases(withoutOne), ["github.comment"]);
});

test("at every effect boundary a crash is recovered from as its case states: nothing stuck, duplicated, unreported, misconcluded or lost", async () => {
  const only = process.env.RA_CRASH_ONLY?.split(",").filter(Boolean);
  const kinds = (Object.keys(CRASH_CASES) as EffectKindName[]).filter((kind) => !only || only.includes(kind));
  const boundaries = kinds.flatMap((kind) => (["intent", "outcome"] as CrashPhase[]).map((phase) => ({ kind, phase })));
  const template = labTemplate();
  const started = Date.now();
  const results: CrashResult[] = [];
  try {
    let next = 0;
    const worker = async () => {
      while (next < boundaries.length) {
        const { kind, phase } = boundaries[next++];
        const result = await crashAt(template, kind, phase);
        results.push(result);
        console.log(describe(result));
      }
    };
    await Promise.all([worker(), worker()]);
  } finally {
    template.remove();
  }
  const recovered = results.filter((r) => r.problems.length === 0).length;
  console.log(`crash suite: ${recovered} of ${boundaries.length} boundaries crashed and recovered (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  const failed = results.filter((r) => r.problems.length > 0);
  assert.ok(failed.length === 0, `${failed.length} boundaries not recovered:\n${failed.map(describe).join("\n")}`);
});

function describe(r: CrashResult): string {
  const at = `${r.kind}:${r.phase}`.padEnd(30);
  const time = `${(r.ms / 1000).toFixed(1)} s`;
  const concluded = r.concluded ? `: ${r.concluded}` : "";
  if (r.problems.length === 0) return `  ok    ${at} crashed and recovered${concluded} (${r.passes} restart pass${r.passes === 1 ? "" : "es"}, ${time})`;
  return `  FAIL  ${at} ${r.problems.join("; ")} (${time})`;
}

test.run();
