/**
 * The crash suite's checks each find what they are for, in a real lab (forge, clone, store,
 * managed sessions): a world that holds passes, and each broken one is named. A crash that
 * never reaches its fault point fails its case.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { raiseAnomaly } from "../store/anomalies.ts";
import { appendAudit } from "../store/audit.ts";
import { commentMarker } from "../effects.ts";
import { openStore } from "../store/open.ts";
import { git } from "../testing/fixtures.ts";
import { conclusionProblems, crashEvidence, cutEffect, recoveryProblems, settledOrReported } from "./checks.ts";
import type { CutEffect } from "./checks.ts";
import { crashAt } from "./crash.ts";
import { labTemplate } from "./lab.ts";
import type { Lab } from "./lab.ts";
import { CRASH_SETUPS } from "./setups.ts";

const template = labTemplate();

/** A polled lab (issue 1 a ready item) for one test. */
async function inPolledLab(fn: (lab: Lab) => Promise<void>): Promise<void> {
  const lab = await template.open();
  try {
    await CRASH_SETUPS.polled(lab);
    await fn(lab);
  } finally {
    await lab.close();
  }
}

async function withLabStore(lab: Lab, fn: (store: Awaited<ReturnType<typeof openStore>>) => void): Promise<void> {
  const store = await openStore(lab.stateDir);
  try {
    fn(store);
  } finally {
    store.close();
  }
}

test("a world that holds passes every check", () => inPolledLab(async (lab) => {
  assert.equal(await recoveryProblems(lab, crashEvidence(lab), []), []);
}));

test("an item left dispatching, or active with no live worker, is stuck", () => inPolledLab(async (lab) => {
  await withLabStore(lab, (store) => store.db.prepare("UPDATE work_items SET state = 'dispatching' WHERE id = 1").run());
  assert.equal(await recoveryProblems(lab, crashEvidence(lab), []), ["item 1 is stuck dispatching"]);
  await withLabStore(lab, (store) => store.db.prepare("UPDATE work_items SET state = 'active' WHERE id = 1").run());
  assert.equal(await recoveryProblems(lab, crashEvidence(lab), []), ["item 1 is active with no live worker (open session rows: none)"]);
}));

test("two live workers of one item are found by their managed sessions", () => inPolledLab(async (lab) => {
  for (const name of ["w1", "w2"]) await lab.mustRun(["session", "run", "-d", "--name", name, "--tag", "ra_item=1", "--", "sleep", "30"]);
  assert.equal(await recoveryProblems(lab, crashEvidence(lab), []), ["item 1 has 2 live workers: w1, w2"]);
}));

test("two dispatch comments naming one session on an issue are a duplicate", () => inPolledLab(async (lab) => {
  const body = "robot-army dispatched a session for this issue.\n\n- Session: ra-widgets-1\n- Session id: 0f0e0d0c\n";
  await lab.api("POST", "/repos/demo/widgets/issues/1/comments", { body });
  assert.equal(await recoveryProblems(lab, crashEvidence(lab), []), []);
  await lab.api("POST", "/repos/demo/widgets/issues/1/comments", { body });
  assert.equal(await recoveryProblems(lab, crashEvidence(lab), []), ["issue #1 has 2 comments for session 0f0e0d0c"]);
}));

test("an intent with no outcome passes only when an effect_unfinished anomaly names its action", () => inPolledLab(async (lab) => {
  await withLabStore(lab, (store) => appendAudit(store, { kind: "github.comment", phase: "intent", actionId: "cut-short", repo: "demo/widgets", item: 1 }));
  const evidence = crashEvidence(lab);
  assert.equal(await recoveryProblems(lab, evidence, []), ["intent github.comment cut-short is neither settled (no outcome) nor reported (no effect_unfinished anomaly)"]);
  assert.equal(await recoveryProblems(lab, evidence, [{ kind: "orphan_session", action_id: "cut-short" }]).then((p) => p.length), 1);
  assert.equal(await recoveryProblems(lab, evidence, [{ id: 1, kind: "effect_unfinished", action_id: "cut-short" }]), []);
  assert.match((await recoveryProblems(lab, evidence, "it exited 2")).join(), /the anomalies cannot be read: it exited 2/);
}));

/** A github.comment intent on issue 1 written by process `pid`, as a crash after its intent leaves it. */
async function commentCutShort(lab: Lab, pid: number): Promise<void> {
  await withLabStore(lab, (store) => appendAudit(store, {
    kind: "github.comment", phase: "intent", actionId: "cut-short", repo: "demo/widgets", item: 1,
    body: { issue: 1, purpose: "dispatched", writer: { pid, started_at: null, start_id: null } },
  }));
}

test("the cut effect is the crashed process's last intent of its kind, with what the forge shows of it", () => inPolledLab(async (lab) => {
  await commentCutShort(lab, 4242);
  assert.match(String(await cutEffect(lab, "github.comment", "intent", 4243)), /the crashed process, pid 4243, wrote no github.comment intent/);
  assert.match(String(await cutEffect(lab, "github.comment", "outcome", 4242)), /cut at github.comment:outcome, yet the crashed process did not write the outcome/);
  const cut = await cutEffect(lab, "github.comment", "intent", 4242) as CutEffect;
  assert.equal([cut.intent.actionId, cut.world], ["cut-short", "not posted"]);
  await lab.api("POST", "/repos/demo/widgets/issues/1/comments", { body: `dispatched\n${commentMarker("cut-short")}` });
  assert.equal((await cutEffect(lab, "github.comment", "intent", 4242) as CutEffect).world, "posted");
}));

test("recovery of the cut effect must conclude what its case states: settled_from, found, ok and the anomaly", () => inPolledLab(async (lab) => {
  await commentCutShort(lab, 4242);
  const cut = await cutEffect(lab, "github.comment", "intent", 4242) as CutEffect;
  const notPosted = { settle: "settled", ok: false, found: "not posted", reported: true, world: "not posted" } as const;
  assert.equal(await settledOrReported(lab, cut), false);
  assert.equal(await conclusionProblems(lab, cut, notPosted), ["github.comment:intent was not settled: its intent has no outcome"]);
  assert.equal(await conclusionProblems(lab, { ...cut, world: "posted" }, { ...notPosted, world: "not posted" }).then((p) => p[0]),
    `right after the crash at github.comment:intent the world shows "posted", not "not posted"`);
  // A sweep that settles everything as done is caught.
  await withLabStore(lab, (store) => appendAudit(store, { kind: "github.comment", phase: "outcome", actionId: "cut-short", body: { ok: true, settled_from: "issue-comments", found: "posted" } }));
  assert.equal(await settledOrReported(lab, cut), true);
  assert.equal(await conclusionProblems(lab, cut, notPosted), [
    `github.comment:intent was settled as settled_from "issue-comments", found "posted", ok true, not settled_from "issue-comments", found not posted, ok false`,
    "github.comment:intent was not reported as effect_unfinished, and must be",
  ]);
  assert.equal(await conclusionProblems(lab, cut, { settle: "nothing" }), [`github.comment:intent had its outcome, yet recovery settled it again (settled_from "issue-comments", found "posted", ok true)`]);
  assert.match((await conclusionProblems(lab, cut, { settle: "reported" })).join("; "), /must be reported, not settled.*was not reported: no effect_unfinished anomaly names action cut-short/);
}));

test("a cut effect settled as its case states, and reported when it must be, passes", () => inPolledLab(async (lab) => {
  await commentCutShort(lab, 4242);
  const cut = await cutEffect(lab, "github.comment", "intent", 4242) as CutEffect;
  await withLabStore(lab, (store) => {
    appendAudit(store, { kind: "github.comment", phase: "outcome", actionId: "cut-short", body: { ok: false, settled_from: "issue-comments", found: "not posted" } });
    raiseAnomaly(store, { kind: "effect_unfinished", actionId: "cut-short", repo: "demo/widgets", item: 1, detail: "cut short" });
  });
  assert.equal(await conclusionProblems(lab, cut, { settle: "settled", ok: false, found: /^not posted$/, reported: true, world: "not posted" }), []);
  assert.equal(await conclusionProblems(lab, cut, { settle: "settled", ok: false, found: "not posted" }), ["github.comment:intent was reported as effect_unfinished, and must not be"]);
}));

test("a branch tip that neither the branch nor origin's still reaches is a lost commit", () => inPolledLab(async (lab) => {
  git(lab.clone, "switch", "--quiet", "-c", "work");
  git(lab.clone, "commit", "--quiet", "--allow-empty", "-m", "Work");
  git(lab.clone, "switch", "--quiet", "main");
  const evidence = crashEvidence(lab);
  const sha = evidence.branches.find((b) => b.branch === "work")!.sha;
  git(lab.clone, "push", "--quiet", "origin", "work");
  git(lab.clone, "branch", "--quiet", "-D", "work");
  assert.equal(await recoveryProblems(lab, evidence, []), [], "on origin's branch: not lost");
  git(lab.clone, "push", "--quiet", "origin", "--delete", "work");
  assert.equal(await recoveryProblems(lab, evidence, []), [`commit ${sha.slice(0, 12)} of branch work is lost (reachable neither from the branch nor from origin's)`]);
}));

test("a crossing that never reaches its fault point fails its case", async () => {
  const result = await crashAt(template, "github.comment", "intent", { setup: "session-ended", cross: ["session", "ls"], concludes: { intent: { settle: "nothing" }, outcome: { settle: "nothing" } } });
  assert.equal(result.passes, 0);
  assert.match(result.problems.join(), /robot-army session ls did not reach github.comment:intent: it exited 0/);
});

test.after(() => template.remove());

test.run();
