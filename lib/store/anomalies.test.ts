import { test } from "uvu";
import * as assert from "uvu/assert";
import { withStore } from "../testing/items.ts";
import { acknowledgeAnomaly, listAnomalies, openAnomalyFor, raiseAnomaly, resolveAnomaly, retractAnomaly } from "./anomalies.ts";
import { queryAudit } from "./audit.ts";

const ACTION = "0b7e0a52-1111-4000-8000-000000000001";

test("an anomaly is raised once per kind and action id, as an audited fact", async () => {
  await withStore((store) => {
    const first = raiseAnomaly(store, { kind: "effect_unfinished", actionId: ACTION, repo: "demo/widgets", item: 1, detail: "a comment was never posted" });
    assert.is(first.raised, true);
    assert.equal({ ...first.anomaly, raised_at: "t" }, {
      id: 1, kind: "effect_unfinished", action_id: ACTION, repo: "demo/widgets", item: 1, detail: "a comment was never posted", raised_at: "t", acknowledged_at: null,
      resolved_at: null, resolution: null,
    });
    const again = raiseAnomaly(store, { kind: "effect_unfinished", actionId: ACTION, repo: "demo/widgets", item: 1, detail: "found again" });
    assert.equal([again.raised, again.anomaly.id, again.anomaly.detail], [false, 1, "a comment was never posted"], "the second pass finds it on record");
    const other = raiseAnomaly(store, { kind: "spool_damaged", actionId: ACTION, detail: "a file set aside" });
    assert.equal([other.raised, other.anomaly.id, other.anomaly.repo, other.anomaly.item], [true, 2, null, null], "another kind for the same action is its own");
    assert.equal(listAnomalies(store).map((a) => a.id), [1, 2]);
    const audit = queryAudit(store, { kind: "anomaly" });
    assert.equal(audit.map((r) => [r.kind, r.phase, r.item, r.body.anomaly, r.body.kind]), [
      ["anomaly.raised", "fact", 1, 1, "effect_unfinished"],
      ["anomaly.raised", "fact", null, 2, "spool_damaged"],
    ]);
  });
});

test("acknowledged anomalies leave the open list, are audited once, and are never raised again", async () => {
  await withStore((store) => {
    raiseAnomaly(store, { kind: "effect_unfinished", actionId: ACTION, item: 1, detail: "one" });
    raiseAnomaly(store, { kind: "spool_damaged", detail: "two" });
    const acked = acknowledgeAnomaly(store, 1);
    assert.ok(acked.acknowledged_at, "it says when");
    assert.equal(listAnomalies(store, { open: true }).map((a) => a.id), [2]);
    assert.equal(listAnomalies(store, { open: false }).map((a) => a.id), [1]);
    assert.equal(listAnomalies(store).map((a) => a.id), [1, 2]);
    assert.equal(acknowledgeAnomaly(store, 1), acked, "acknowledging twice changes nothing");
    assert.equal(queryAudit(store, { kind: "anomaly.acknowledged" }).map((r) => [r.body.anomaly, r.body.kind, r.item]), [[1, "effect_unfinished", 1]]);
    assert.is(raiseAnomaly(store, { kind: "effect_unfinished", actionId: ACTION, detail: "again" }).raised, false, "an acknowledged one stays acknowledged");
    assert.throws(() => acknowledgeAnomaly(store, 9), /No anomaly 9 is on record; "robot-army anomalies --all" lists them/);
  });
});

const SESSION = "5e551011-2222-4000-8000-000000000001";

test("the pass retracts an anomaly whose condition ended, or resolves it as gone; each is audited once and leaves the open list", async () => {
  await withStore((store) => {
    const orphan = raiseAnomaly(store, { kind: "orphan_session", actionId: SESSION, repo: "demo/widgets", item: 1, detail: "a live worker under a done item" }).anomaly;
    const other = raiseAnomaly(store, { kind: "orphan_session", actionId: "another-session", repo: "demo/widgets", item: 2, detail: "another" }).anomaly;
    assert.equal(openAnomalyFor(store, "orphan_session", SESSION)?.id, orphan.id);
    assert.is(openAnomalyFor(store, "effect_unfinished", SESSION), undefined, "the kind matters");
    const retracted = retractAnomaly(store, orphan.id);
    assert.equal([retracted.resolution, typeof retracted.resolved_at, retracted.acknowledged_at], ["retracted", "string", null]);
    assert.equal(retractAnomaly(store, orphan.id), retracted, "retracting twice changes nothing");
    assert.equal(resolveAnomaly(store, orphan.id, "gone"), retracted, "the first resolution stands");
    const gone = resolveAnomaly(store, other.id, "gone");
    assert.is(gone.resolution, "gone");
    assert.is(openAnomalyFor(store, "orphan_session", SESSION), undefined, "a resolved anomaly is no longer in force");
    assert.equal(listAnomalies(store, { open: true }), []);
    assert.equal(listAnomalies(store, { open: false }).map((a) => [a.id, a.resolution]), [[orphan.id, "retracted"], [other.id, "gone"]]);
    assert.equal(queryAudit(store, { kind: "anomaly" }).filter((r) => r.kind !== "anomaly.raised").map((r) => [r.kind, r.item, r.body.anomaly, r.body.kind, r.body.action_id, r.body.resolution]), [
      ["anomaly.retracted", 1, orphan.id, "orphan_session", SESSION, "retracted"],
      ["anomaly.resolved", 2, other.id, "orphan_session", "another-session", "gone"],
    ]);
    assert.throws(() => retractAnomaly(store, 9), /No anomaly 9 is on record/);
    assert.throws(() => resolveAnomaly(store, 9, "gone"), /No anomaly 9 is on record/);
  });
});

test("the same condition is raised again after a resolution, once, and an acknowledged one can still be retracted", async () => {
  await withStore((store) => {
    const first = raiseAnomaly(store, { kind: "orphan_session", actionId: SESSION, item: 1, detail: "busy under a done item" }).anomaly;
    retractAnomaly(store, first.id);
    const again = raiseAnomaly(store, { kind: "orphan_session", actionId: SESSION, item: 1, detail: "busy again" });
    assert.is(again.raised, true, "a retracted anomaly does not stop the condition being raised anew");
    assert.is.not(again.anomaly.id, first.id);
    assert.is(raiseAnomaly(store, { kind: "orphan_session", actionId: SESSION, item: 1, detail: "and again" }).raised, false, "once among the unresolved");
    assert.equal(openAnomalyFor(store, "orphan_session", SESSION)?.id, again.anomaly.id);
    acknowledgeAnomaly(store, again.anomaly.id);
    assert.equal(openAnomalyFor(store, "orphan_session", SESSION)?.id, again.anomaly.id, "acknowledged, it is still in force until resolved");
    assert.equal(listAnomalies(store, { unresolved: true, kind: "orphan_session" }).map((a) => a.id), [again.anomaly.id]);
    assert.is(retractAnomaly(store, again.anomaly.id).resolution, "retracted");
    assert.equal(listAnomalies(store, { unresolved: true }), []);
    assert.equal(listAnomalies(store, { kind: "orphan_session" }).map((a) => a.id), [first.id, again.anomaly.id]);
  });
});

test.run();
