import { test } from "uvu";
import * as assert from "uvu/assert";
import type { AuditRecord } from "../store/audit.ts";
import { describeQuiet, foldQuietPasses, quietPass } from "./quiet-passes.ts";

/** A pass record as the tick writes one: every count zero but the reads given, then `changes`. */
function pass(id: number, tick: number, changes: Record<string, unknown> = {}): AuditRecord {
  const body = {
    tick, failed: [], spool: { processed: 0, kept: 0 }, settled: { lost: 0, ended: 0, unknown: 1, cut_short: 0 },
    pulls: { repos: 1, requests: 1, not_modified: 1, stored: 0, failed: 0 }, poll: { ran: true, new: 0, done: 0, abandoned: 0 },
    dispatch: { withheld: "paused", would_dispatch: 0, active: 0, failed: 0, waiting: 2 }, ...changes,
  };
  return { id, at: `2026-01-15T10:00:${String(id).padStart(2, "0")}Z`, phase: "fact", kind: "reconcile.pass", repo: null, item: null, sessionId: null, episodeId: null, actionId: null, simulated: false, body };
}

const other = (id: number): AuditRecord => ({ ...pass(id, 0), kind: "state.work_item", body: { from: "ready", to: "dispatching" } });

test("a pass is quiet when no step failed and every count of a change is zero; reads and things left as they were do not count", () => {
  assert.ok(quietPass(pass(1, 1)));
  assert.not.ok(quietPass(pass(2, 2, { dispatch: { withheld: null, would_dispatch: 0, active: 1, failed: 0, waiting: 0 } })));
  assert.not.ok(quietPass(pass(3, 3, { failed: ["poll"] })));
  assert.not.ok(quietPass(pass(4, 4, { notify: { sent: 1 } })), "a count the fold does not know is a change");
  assert.not.ok(quietPass(other(5)));
});

test("two or more quiet passes in a row read as one entry; one alone, and every other record, stay as they are", () => {
  const records = [pass(1, 1), pass(2, 2), pass(3, 3), other(4), pass(5, 4), pass(6, 5, { poll: { ran: true, new: 2, done: 0, abandoned: 0 } }), pass(7, 6), pass(8, 7)];
  const entries = foldQuietPasses(records);
  assert.equal(entries.map((e) => "record" in e ? e.record.id : e.quiet.map((r) => r.id)), [[1, 2, 3], 4, 5, 6, [7, 8]]);
  assert.is(describeQuiet((entries[0] as { quiet: AuditRecord[] }).quiet), "3 passes that changed nothing");
  // Newest first, as the dashboard reads them, the same runs.
  assert.equal(foldQuietPasses([...records].reverse()).map((e) => "record" in e ? e.record.id : e.quiet.length), [2, 6, 5, 4, 3]);
});

test.run();
