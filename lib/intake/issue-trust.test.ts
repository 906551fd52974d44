import { test } from "uvu";
import * as assert from "uvu/assert";
import { queryAudit } from "../store/audit.ts";
import { makeItem, withStore } from "../testing/items.ts";
import { refreshSnapshot } from "../work-items/queries.ts";
import {
  UNLISTED_EDITORS, approveWords, bodyFacts, describeDoubt, doubtOf, editorsOf, hashMatches, lastLabeller, promptWords, recordTrust, renamers, storedDoubt,
  trustSummary, wordsHash,
} from "./issue-trust.ts";

const RULES = { author: "Owner", label: "robot-army" };
const at = "2026-01-15T10:00:00Z";

test("the latest labeled event for the label counts, compared without case; none is null", () => {
  assert.is(lastLabeller([], "robot-army"), null);
  assert.is(lastLabeller([
    { event: "labeled", label: "Robot-Army", actor: "owner", at },
    { event: "labeled", label: "urgent", actor: "mallory", at },
    { event: "unlabeled", label: "robot-army", actor: "owner", at },
  ], "robot-army"), "owner", "an unlabeled event names no labeller");
  assert.is(lastLabeller([
    { event: "labeled", label: "robot-army", actor: "owner", at },
    { event: "unlabeled", label: "robot-army", actor: "mallory", at },
    { event: "labeled", label: "ROBOT-ARMY", actor: "mallory", at },
  ], "robot-army"), "mallory");
});

test("editors other than the owner, each once; editors GitHub did not list are never taken for the owner", () => {
  const authorship = { author: "owner", title: "t", body: "b", editors: ["mallory", "OWNER", "mallory", "eve"], lastEditedAt: at, complete: true };
  assert.equal(bodyFacts(authorship, RULES), { editedBy: ["mallory", "eve"], title: "t", body: "b" });
  assert.equal(bodyFacts({ ...authorship, editors: ["owner"], complete: false }, RULES).editedBy, [UNLISTED_EDITORS]);
});

const WORDS = { title: "Fix it", body: "text" };

test("a doubt: the label by someone else first; words others changed unless the owner approved exactly the title and body GitHub shows and the worker gets", () => {
  const facts = { labelledBy: "owner", editedBy: ["mallory"], renamedBy: [], ...WORDS };
  const edited = { kind: "edited", by: ["mallory"], renamed_by: [] };
  assert.equal(doubtOf({ ...facts, labelledBy: null }, RULES, null, WORDS), { kind: "labelled", by: null });
  assert.equal(doubtOf({ ...facts, labelledBy: "mallory" }, RULES, wordsHash(WORDS), WORDS), { kind: "labelled", by: "mallory" }, "approval never lifts a label");
  assert.equal(doubtOf(facts, RULES, null, WORDS), edited);
  assert.is(doubtOf(facts, RULES, wordsHash(WORDS), WORDS), undefined);
  assert.equal(doubtOf(facts, RULES, wordsHash(WORDS), { ...WORDS, body: "older text" }), edited, "the worker would get another text");
  assert.equal(doubtOf({ ...facts, body: "edited again" }, RULES, wordsHash(WORDS), WORDS), edited, "GitHub shows another text");
  assert.is(doubtOf({ ...facts, editedBy: [] }, RULES, null, WORDS), undefined);
});

test("a title someone else changed is a doubt like a body edit, and one approval covers title and body together", () => {
  const facts = { labelledBy: "owner", editedBy: [], renamedBy: ["mallory"], ...WORDS };
  assert.equal(doubtOf(facts, RULES, null, WORDS), { kind: "edited", by: [], renamed_by: ["mallory"] });
  assert.is(doubtOf(facts, RULES, wordsHash(WORDS), WORDS), undefined, "approved as it reads");
  assert.ok(doubtOf({ ...facts, title: "Delete the tests" }, RULES, wordsHash(WORDS), { ...WORDS, title: "Delete the tests" }), "an approval of another title does not cover this one");
  assert.is.not(wordsHash({ title: "a", body: "bc" }), wordsHash({ title: "ab", body: "c" }), "no split of the same characters hashes alike");
  const events = [
    { event: "renamed" as const, from: "x", to: "y", actor: "owner", at },
    { event: "renamed" as const, from: "y", to: "z", actor: "mallory", at },
    { event: "labeled" as const, label: "robot-army", actor: "eve", at },
    { event: "renamed" as const, from: "z", to: "w", actor: "mallory", at },
  ];
  assert.equal(renamers(events, RULES), ["mallory"], "the owner's own renames do not count");
  assert.is(describeDoubt(3, { kind: "edited", by: [], renamed_by: ["mallory"] }, RULES), 'its title was changed by mallory; "robot-army approve 3" after reading it');
  assert.is(describeDoubt(3, { kind: "edited", by: ["eve"], renamed_by: ["mallory"] }, RULES), 'its title was changed by mallory and its body edited by eve; "robot-army approve 3" after reading it');
});

test("a short hash is at least 12 hex digits of the start of the words' hash, in any case", () => {
  const sha = wordsHash(WORDS);
  assert.ok(hashMatches(sha.slice(0, 12), sha));
  assert.ok(hashMatches(sha.toUpperCase(), sha));
  assert.not.ok(hashMatches(sha.slice(0, 11), sha), "too short to name one text");
  assert.not.ok(hashMatches(wordsHash({ ...WORDS, body: "other" }).slice(0, 12), sha));
});

test("each doubt says what lifts it, its logins escaped for a terminal", () => {
  assert.is(describeDoubt(3, { kind: "edited", by: ["mal\u001b[2Jlory", "eve"], renamed_by: [] }, RULES), 'its body was edited by mal\\u001b[2Jlory, eve; "robot-army approve 3" after reading it');
  assert.is(describeDoubt(3, { kind: "labelled", by: null }, RULES),
    "its robot-army label was added by someone GitHub does not name, not by Owner; only a label you add yourself starts work (take it off and put it back: the next poll asks GitHub again)");
});

test("what the gate saw is kept: a new doubt is audited once as trust.held, its end as trust.cleared; status reads it back", () =>
  withStore((store) => {
    const item = makeItem(store, { issue: 4 });
    const edited = { labelledBy: "owner", editedBy: ["mallory"], renamedBy: [], title: item.title, body: item.body };
    const doubt = { kind: "edited", by: ["mallory"], renamed_by: [] };
    assert.equal(recordTrust(store, item, edited, RULES), doubt);
    recordTrust(store, item, edited, RULES);
    assert.equal(queryAudit(store, { kind: "trust.held" }).map((r) => [r.item, r.body.doubt, r.body.by]), [[item.id, "edited", ["mallory"]]]);
    assert.equal(storedDoubt(store, item, RULES), doubt);
    const approve = `robot-army approve ${item.id} --sha256 ${wordsHash(item).slice(0, 12)}`;
    assert.equal(promptWords(store, item, RULES), { editedBy: ["mallory"], held: `its body was edited by mallory; "robot-army approve ${item.id}" after reading it`, approve });
    approveWords(store, item, item, { editedBy: ["mallory"], renamedBy: [] });
    assert.is(storedDoubt(store, item, RULES), undefined);
    assert.equal(promptWords(store, item, RULES), { editedBy: ["mallory"], held: null, approve: null });
    assert.equal(queryAudit(store, { kind: "trust.body_approved" }).map((r) => r.body.sha256), [wordsHash(item)]);
    const summary = trustSummary(store, item, RULES)!;
    assert.equal([summary.held, summary.edited_by, typeof summary.approved_at, summary.sha256], [null, ["mallory"], "string", wordsHash(item)]);
    // The poll reads a newer body in: the approval was of another text.
    refreshSnapshot(store, item.id, { ...item, body: "A newer body", issue_updated_at: null });
    assert.equal(storedDoubt(store, { id: item.id, title: item.title, body: "A newer body" }, RULES), doubt);
    recordTrust(store, { ...item, body: "A newer body" }, { labelledBy: "owner", editedBy: [], renamedBy: [], title: item.title, body: "A newer body" }, RULES);
    assert.equal(queryAudit(store, { kind: "trust.cleared" }).map((r) => r.body.was), ["edited"]);
    assert.is(trustSummary(store, { id: 99, title: "", body: "" }, RULES), null, "never asked");
  }));

test("who renamed an issue is kept beside who edited its body; a row kept before titles were asked reads as body editors alone", () =>
  withStore((store) => {
    const item = makeItem(store, { issue: 4 });
    recordTrust(store, item, { labelledBy: "owner", editedBy: ["eve"], renamedBy: ["mallory"], title: item.title, body: item.body }, RULES);
    assert.equal(storedDoubt(store, item, RULES), { kind: "edited", by: ["eve"], renamed_by: ["mallory"] });
    assert.equal(editorsOf(store, item.id), ["mallory", "eve"]);
    assert.equal(queryAudit(store, { kind: "trust.held" }).map((r) => r.body.renamed_by), [["mallory"]]);
    store.statement("UPDATE issue_trust SET edited_by = ? WHERE item = ?").run(JSON.stringify(["eve"]), item.id);
    assert.equal(storedDoubt(store, item, RULES), { kind: "edited", by: ["eve"], renamed_by: [] });
  }));

test.run();
