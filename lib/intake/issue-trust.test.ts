import { test } from "uvu";
import * as assert from "uvu/assert";
import { queryAudit } from "../store/audit.ts";
import { makeItem, withStore } from "../testing/items.ts";
import { refreshSnapshot } from "../work-items/queries.ts";
import {
  UNLISTED_EDITORS, approveBody, bodyFacts, bodyHash, describeDoubt, doubtOf, lastLabeller, promptWords, recordTrust, storedDoubt, trustSummary,
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
  const authorship = { author: "owner", body: "b", editors: ["mallory", "OWNER", "mallory", "eve"], lastEditedAt: at, complete: true };
  assert.equal(bodyFacts(authorship, RULES), { editedBy: ["mallory", "eve"], body: "b" });
  assert.equal(bodyFacts({ ...authorship, editors: ["owner"], complete: false }, RULES).editedBy, [UNLISTED_EDITORS]);
});

test("a doubt: the label by someone else first; a body others edited unless the owner approved exactly the text GitHub shows and the worker gets", () => {
  const facts = { labelledBy: "owner", editedBy: ["mallory"], body: "text" };
  assert.equal(doubtOf({ ...facts, labelledBy: null }, RULES, null, "text"), { kind: "labelled", by: null });
  assert.equal(doubtOf({ ...facts, labelledBy: "mallory" }, RULES, bodyHash("text"), "text"), { kind: "labelled", by: "mallory" }, "approval never lifts a label");
  assert.equal(doubtOf(facts, RULES, null, "text"), { kind: "edited", by: ["mallory"] });
  assert.is(doubtOf(facts, RULES, bodyHash("text"), "text"), undefined);
  assert.equal(doubtOf(facts, RULES, bodyHash("text"), "older text"), { kind: "edited", by: ["mallory"] }, "the worker would get another text");
  assert.equal(doubtOf({ ...facts, body: "edited again" }, RULES, bodyHash("text"), "text"), { kind: "edited", by: ["mallory"] }, "GitHub shows another text");
  assert.is(doubtOf({ ...facts, editedBy: [] }, RULES, null, "text"), undefined);
});

test("each doubt says what lifts it, its logins escaped for a terminal", () => {
  assert.is(describeDoubt(3, { kind: "edited", by: ["mal\u001b[2Jlory", "eve"] }, RULES), 'its body was edited by mal\\u001b[2Jlory, eve; "robot-army approve 3" after reading it');
  assert.is(describeDoubt(3, { kind: "labelled", by: null }, RULES),
    "its robot-army label was added by someone GitHub does not name, not by Owner; only a label you add yourself starts work (take it off and put it back)");
});

test("what the gate saw is kept: a new doubt is audited once as trust.held, its end as trust.cleared; status reads it back", () =>
  withStore((store) => {
    const item = makeItem(store, { issue: 4 });
    const edited = { labelledBy: "owner", editedBy: ["mallory"], body: item.body };
    assert.equal(recordTrust(store, item, edited, RULES), { kind: "edited", by: ["mallory"] });
    recordTrust(store, item, edited, RULES);
    assert.equal(queryAudit(store, { kind: "trust.held" }).map((r) => [r.item, r.body.doubt, r.body.by]), [[item.id, "edited", ["mallory"]]]);
    assert.equal(storedDoubt(store, item, RULES), { kind: "edited", by: ["mallory"] });
    assert.equal(promptWords(store, item, RULES), { editedBy: ["mallory"], held: `its body was edited by mallory; "robot-army approve ${item.id}" after reading it` });
    approveBody(store, item, item.body, ["mallory"]);
    assert.is(storedDoubt(store, item, RULES), undefined);
    assert.equal(promptWords(store, item, RULES), { editedBy: ["mallory"], held: null });
    assert.equal(queryAudit(store, { kind: "trust.body_approved" }).map((r) => r.body.sha256), [bodyHash(item.body)]);
    const summary = trustSummary(store, item, RULES)!;
    assert.equal([summary.held, summary.edited_by, typeof summary.approved_at], [null, ["mallory"], "string"]);
    // The poll reads a newer body in: the approval was of another text.
    refreshSnapshot(store, item.id, { ...item, body: "A newer body", issue_updated_at: null });
    assert.equal(storedDoubt(store, { id: item.id, body: "A newer body" }, RULES), { kind: "edited", by: ["mallory"] });
    recordTrust(store, { ...item, body: "A newer body" }, { labelledBy: "owner", editedBy: [], body: "A newer body" }, RULES);
    assert.equal(queryAudit(store, { kind: "trust.cleared" }).map((r) => r.body.was), ["edited"]);
    assert.is(trustSummary(store, { id: 99, body: "" }, RULES), null, "never asked");
  }));

test.run();
