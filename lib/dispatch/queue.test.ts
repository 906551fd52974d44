import { test } from "uvu";
import * as assert from "uvu/assert";
import { recordChangedSettings } from "../repos/records.ts";
import { dispatchQueue, whyNotQueued } from "./queue.ts";
import { hold, pause, unpause } from "./controls.ts";
import { configWithRepos, makeItem, onboard, withStore } from "../testing/items.ts";
import { approveWords, recordTrust } from "../intake/issue-trust.ts";
import { getItem, refreshSnapshot } from "../work-items/queries.ts";

const order = (queue: ReturnType<typeof dispatchQueue>) => queue.queue.map((q) => `${q.position}:${q.item.repo}#${q.item.issue}`);

test("the queue takes higher priority first, then the oldest item, and numbers the places", () =>
  withStore(async (store) => {
    const config = await configWithRepos({ "demo/widgets": 0, "demo/urgent": 5, "demo/later": -1 });
    onboard(store, "demo/widgets", "demo/urgent", "demo/later");
    makeItem(store, { repo: "demo/widgets", issue: 2, at: "2026-01-15T08:00:00Z" });
    makeItem(store, { repo: "demo/later", issue: 9, at: "2026-01-14T08:00:00Z" });
    makeItem(store, { repo: "demo/urgent", issue: 7, at: "2026-01-15T09:30:00Z" });
    makeItem(store, { repo: "demo/widgets", issue: 1, at: "2026-01-15T07:00:00Z" });
    makeItem(store, { repo: "demo/urgent", issue: 3, at: "2026-01-15T09:00:00Z" });
    makeItem(store, { repo: "demo/widgets", issue: 5, state: "active" });
    makeItem(store, { repo: "demo/widgets", issue: 6, state: "discovered" });
    const queue = dispatchQueue(store, config);
    assert.equal(order(queue), ["1:demo/urgent#3", "2:demo/urgent#7", "3:demo/widgets#1", "4:demo/widgets#2", "5:demo/later#9"]);
    assert.equal(queue.queue.map((q) => q.priority), [5, 5, 0, 0, -1]);
    assert.equal([queue.held, queue.untrusted, queue.paused], [[], [], null]);
  }));

test("items created in the same second go in the order they were made", () =>
  withStore(async (store) => {
    const config = await configWithRepos({ "demo/widgets": 0 });
    onboard(store, "demo/widgets");
    for (const issue of [4, 2, 9]) makeItem(store, { issue, at: "2026-01-15T08:00:00Z" });
    assert.equal(order(dispatchQueue(store, config)), ["1:demo/widgets#4", "2:demo/widgets#2", "3:demo/widgets#9"]);
  }));

test("items of a repository that needs reapproval, is not onboarded or left the config are untrusted, with why", () =>
  withStore(async (store) => {
    const config = await configWithRepos({ "demo/widgets": 0, "demo/changed": 9, "demo/new": 1 });
    onboard(store, "demo/widgets", "demo/changed", "demo/gone");
    recordChangedSettings(store, "demo/changed", { path: "/src/changed", private: true });
    makeItem(store, { repo: "demo/widgets", issue: 1 });
    makeItem(store, { repo: "demo/changed", issue: 2 });
    makeItem(store, { repo: "demo/new", issue: 3 });
    makeItem(store, { repo: "demo/gone", issue: 4 });
    const queue = dispatchQueue(store, config);
    assert.equal(order(queue), ["1:demo/widgets#1"]);
    assert.equal(queue.held, []);
    assert.equal(queue.untrusted.map((u) => [`${u.item.repo}#${u.item.issue}`, u.reason]), [
      ["demo/changed#2", "needs reapproval"],
      ["demo/new#3", "not onboarded"],
      ["demo/gone#4", "not in the config"],
    ]);
  }));

test("simulated items are queued only when asked for", () =>
  withStore(async (store) => {
    const config = await configWithRepos({ "demo/widgets": 0 });
    onboard(store, "demo/widgets");
    makeItem(store, { issue: 1, simulated: true, at: "2026-01-15T07:00:00Z" });
    makeItem(store, { issue: 2 });
    assert.equal(order(dispatchQueue(store, config)), ["1:demo/widgets#2"]);
    assert.equal(order(dispatchQueue(store, config, { includeSimulated: true })), ["1:demo/widgets#1", "2:demo/widgets#2"]);
  }));

test("items the owner held, by themselves or through their repository, are apart with the hold, and the queue closes up", () =>
  withStore(async (store) => {
    const config = await configWithRepos({ "demo/widgets": 0, "demo/gadgets": 0 });
    onboard(store, "demo/widgets", "demo/gadgets");
    makeItem(store, { issue: 1, at: "2026-01-15T07:00:00Z" });
    makeItem(store, { issue: 2, at: "2026-01-15T08:00:00Z" });
    makeItem(store, { repo: "demo/gadgets", issue: 3, at: "2026-01-15T08:30:00Z" });
    makeItem(store, { issue: 4, at: "2026-01-15T09:00:00Z" });
    hold(store, { item: 1 }, { reason: "waiting on the design" });
    hold(store, { repo: "demo/gadgets" });
    const queue = dispatchQueue(store, config);
    assert.equal(order(queue), ["1:demo/widgets#2", "2:demo/widgets#4"]);
    assert.equal(queue.held.map((h) => [h.item.issue, h.hold.item, h.hold.repo, h.hold.reason]), [
      [1, 1, null, "waiting on the design"],
      [3, null, "demo/gadgets", null],
    ]);
    assert.equal(whyNotQueued(store, config, { id: 2, repo: "demo/widgets", title: "", body: "" }), undefined);
    assert.is((whyNotQueued(store, config, { id: 1, repo: "demo/widgets", title: "", body: "" }) as { held: { item: number } }).held.item, 1);
  }));

test("an untrusted repository's item is untrusted even when the owner held it too", () =>
  withStore(async (store) => {
    const config = await configWithRepos({ "demo/widgets": 0 });
    makeItem(store, { issue: 1 });
    hold(store, { item: 1 });
    const queue = dispatchQueue(store, config);
    assert.equal([queue.queue, queue.held, queue.untrusted.map((u) => u.reason)], [[], [], ["not onboarded"]]);
  }));

test("the pause is reported with the queue, which keeps its order while paused", () =>
  withStore(async (store) => {
    const config = await configWithRepos({ "demo/widgets": 0 });
    onboard(store, "demo/widgets");
    makeItem(store, { issue: 1 });
    pause(store, { reason: "release freeze" });
    const paused = dispatchQueue(store, config);
    assert.is(paused.paused?.reason, "release freeze");
    assert.equal(order(paused), ["1:demo/widgets#1"]);
    unpause(store);
    assert.is(dispatchQueue(store, config).paused, null);
  }));

test("an item whose body someone else edited is held for the owner until approved as it reads; an edit after the approval holds it again", () =>
  withStore(async (store) => {
    const base = await configWithRepos({ "demo/widgets": 0 });
    const config = { ...base, github: { ...base.github, author: "owner" } };
    const rules = { author: "owner", label: "robot-army" };
    onboard(store, "demo/widgets");
    const item = makeItem(store, { issue: 2 });
    makeItem(store, { issue: 3 });
    recordTrust(store, item, { labelledBy: "owner", editedBy: ["mallory"], renamedBy: [], title: item.title, body: item.body }, rules);
    const held = dispatchQueue(store, config);
    assert.equal(order(held), ["1:demo/widgets#3"]);
    assert.equal(held.held_for_owner.map((h) => [h.item.id, h.reason]), [[1, 'its body was edited by mallory; "robot-army approve 1" after reading it']]);
    approveWords(store, item, item, { editedBy: ["mallory"], renamedBy: [] });
    assert.equal(order(dispatchQueue(store, config)), ["1:demo/widgets#2", "2:demo/widgets#3"], "approved as it reads");
    refreshSnapshot(store, item.id, { ...item, issue: 2, body: "Now also do something else", issue_updated_at: null });
    assert.equal(dispatchQueue(store, config).held_for_owner.map((h) => h.item.id), [1], "a body other than the approved one is held again");
    assert.equal(getItem(store, 1)!.state, "ready");
  }));

test("an item whose label someone else added is held for the owner; a hold or the pause never hides it", () =>
  withStore(async (store) => {
    const base = await configWithRepos({ "demo/widgets": 0 });
    const config = { ...base, github: { ...base.github, author: "owner" } };
    onboard(store, "demo/widgets");
    const item = makeItem(store, { issue: 2 });
    hold(store, { item: item.id });
    recordTrust(store, item, { labelledBy: "mallory", editedBy: [], renamedBy: [], title: item.title, body: item.body }, { author: "owner", label: "robot-army" });
    const queue = dispatchQueue(store, config);
    assert.equal([queue.held.length, queue.held_for_owner.map((h) => h.reason)], [0, [
      "its robot-army label was added by mallory, not by owner; only a label you add yourself starts work (take it off and put it back: the next poll asks GitHub again)",
    ]]);
  }));

test.run();
