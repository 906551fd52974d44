import { test } from "uvu";
import * as assert from "uvu/assert";
import { PreconditionError } from "../lib/errors.ts";
import { findRepo, loadForgeData, saveForgeData } from "../lib/forge/state.ts";
import { bodyHash, storedDoubt } from "../lib/intake/issue-trust.ts";
import { queryAudit } from "../lib/store/audit.ts";
import { rejects } from "../lib/testing/rejects.ts";
import { verbTemplate, withWorld } from "../lib/testing/verbs.ts";
import type { VerbWorld } from "../lib/testing/verbs.ts";
import { getItem } from "../lib/work-items/queries.ts";
import { transition } from "../lib/work-items/transition.ts";
import { run } from "./approve.ts";

const template = verbTemplate();
test.after(() => template.remove());
const RULES = { author: "owner", label: "robot-army" };

/** Runs approve on item `id`, returning its exit code and output. */
async function approve(w: VerbWorld, id: number, json = false): Promise<{ code: number; out: string }> {
  let out = "";
  const code = await run({ id, json }, { config: w.config, store: w.store, github: w.deps.github, write: (text) => void (out += text) });
  return { code, out };
}

test("a body a collaborator edited since intake is read in, not approved, until the owner approves it as it reads; the approval is audited with its hash", () =>
  withWorld(template, async (w) => {
    const { t, store } = w;
    const data = loadForgeData(t.dir);
    findRepo(data, "demo", "widgets")!.collaborators.push("stranger");
    saveForgeData(t.dir, data);
    await t.stranger.rest.issues.update({ owner: "demo", repo: "widgets", issue_number: 2, body: "Rewritten by stranger" });
    await rejects(approve(w, 2), PreconditionError, 'The body of demo/widgets#2 changed since robot-army last read it; nothing was approved: read it again ("robot-army prompt 2"), then approve it');
    assert.is(getItem(store, 2)!.body, "Rewritten by stranger", "the new text is read in for the owner to read");
    assert.equal(storedDoubt(store, getItem(store, 2)!, RULES), { kind: "edited", by: ["stranger"] });
    assert.equal(queryAudit(store, { kind: "trust.body_approved" }), []);
    const { code, out } = await approve(w, 2, true);
    assert.is(code, 0);
    assert.equal(JSON.parse(out), { item: 2, repo: "demo/widgets", issue: 2, approved: true, sha256: bodyHash("Rewritten by stranger"), edited_by: ["stranger"], held: null });
    assert.is(storedDoubt(store, getItem(store, 2)!, RULES), undefined);
    assert.equal(queryAudit(store, { kind: "trust.body_approved", item: 2 }).map((r) => [r.phase, r.body.sha256]), [["fact", bodyHash("Rewritten by stranger")]]);
  }));

test("a body no one else edited needs no approval; a label someone else added is still held after an approval", () =>
  withWorld(template, async (w) => {
    const { t, store } = w;
    const own = await approve(w, 1);
    assert.equal([own.code, own.out], [0, "nothing to approve: work item 1 (demo/widgets#1): no one but its author edited its body\n"]);
    assert.equal(queryAudit(store, { kind: "trust.body_approved" }), []);
    const data = loadForgeData(t.dir);
    findRepo(data, "demo", "widgets")!.collaborators.push("stranger");
    saveForgeData(t.dir, data);
    await t.owner.rest.issues.removeLabel({ owner: "demo", repo: "widgets", issue_number: 3, name: "robot-army" });
    await t.stranger.rest.issues.addLabels({ owner: "demo", repo: "widgets", issue_number: 3, labels: ["robot-army"] });
    const labelled = await approve(w, 3);
    assert.match(labelled.out, "still held for you: its robot-army label was added by stranger, not by owner");
  }));

test("an unknown or finished item is refused", () =>
  withWorld(template, async (w) => {
    await rejects(approve(w, 99), PreconditionError, "No work item 99");
    transition(w.store, 3, "abandoned", { reason: "test" });
    await rejects(approve(w, 3), PreconditionError, "Work item 3 is abandoned; nothing of it starts again");
  }));

test.run();
