import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { applyHook } from "../../episodes/hook.ts";
import { openJournal } from "../../episodes/journal.ts";
import { archiveDir } from "../../cleanup/record-archive.ts";
import { join } from "node:path";
import { wireEffects } from "../../effects.ts";
import { git } from "../../testing/fixtures.ts";
import { rejects } from "../../testing/rejects.ts";
import { getItem } from "../../work-items/queries.ts";
import { dispatchReady } from "../dispatch.ts";
import { resetItem } from "./reset.ts";
import { retryItem } from "./retry.ts";
import { PreconditionError } from "../../errors.ts";
import { listRecords } from "../../sessions/records.ts";
import { sessionsOf } from "../../work-items/sessions.ts";
import { comments, stopAll, verbTemplate, withWorld } from "../../testing/verbs.ts";
import { findRepo, loadForgeData, saveForgeData } from "../../forge/state.ts";
import { dispatchQueue } from "../queue.ts";

const template = verbTemplate();
test.after(() => template.remove());

test("reset asks again who edited the body: an item a collaborator's edit reached goes back held for the owner, never into the queue", () =>
  withWorld(template, async ({ t, store, deps, config }) => {
    const session = (await dispatchReady(deps)).outcomes[0].session!;
    await stopAll(deps);
    const data = loadForgeData(t.dir);
    findRepo(data, "demo", "widgets")!.collaborators.push("stranger");
    saveForgeData(t.dir, data);
    await t.stranger.rest.issues.update({ owner: "demo", repo: "widgets", issue_number: 1, body: "Rewritten by someone else" });
    const reset = await resetItem(deps, 1);
    assert.equal([reset.reset, reset.held], [true, 'its body was edited by stranger; "robot-army approve 1" after reading it']);
    assert.not.ok(existsSync(session.worktree));
    assert.equal([getItem(store, 1)!.state, getItem(store, 1)!.body], ["ready", "Rewritten by someone else"]);
    const queue = dispatchQueue(store, config);
    assert.equal([queue.queue.map((q) => q.item.id), queue.held_for_owner.map((h) => h.item.id)], [[2, 3], [1]]);
  }));

test("reset refuses, removing nothing, when GitHub cannot say who edited the body", () =>
  withWorld(template, async ({ t, store, deps }) => {
    const session = (await dispatchReady(deps)).outcomes[0].session!;
    await stopAll(deps);
    await t.hook("POST", "/_forge/faults", { method: "POST", path: "/graphql", status: 502, times: 10 });
    await rejects(resetItem(deps, 1), Error, /GitHub answered 502 to POST \/graphql/);
    assert.ok(existsSync(session.worktree));
    assert.is(getItem(store, 1)!.state, "active");
  }));

test("reset refuses under a live session, then over uncommitted work; with force it discards both and the item is ready", () =>
  withWorld(template, async ({ store, deps, config }) => {
    const session = (await dispatchReady(deps)).outcomes[0].session!;
    await rejects(resetItem(deps, 1, { force: true }), Error, /still running/);
    assert.ok(existsSync(session.worktree));
    await stopAll(deps);
    writeFileSync(join(session.worktree, "notes.txt"), "unfinished\n");
    const kept = await resetItem(deps, 1);
    assert.equal([kept.reset, kept.removal.worktree.status], [false, "kept"]);
    assert.ok(existsSync(join(session.worktree, "notes.txt")), "git's refusal over uncommitted work stands");
    assert.is(getItem(store, 1)!.state, "active");
    const forced = await resetItem(deps, 1, { force: true });
    assert.equal([forced.reset, forced.removal.worktree.status, forced.removal.branch.status], [true, "removed", "deleted"]);
    assert.not.ok(existsSync(session.worktree));
    assert.is(git(config.repos["demo/widgets"].path, "branch", "--list", session.branch), "");
    assert.is(getItem(store, 1)!.state, "ready");
  }));

test("reset over a worktree whose only uncommitted file is the record robot-army's hook wrote archives it and goes on, no --force asked", () =>
  withWorld(template, async ({ store, deps }) => {
    const session = (await dispatchReady(deps)).outcomes[0].session!;
    await stopAll(deps);
    const key = sessionsOf(store, 1)[0].episode_key;
    // What Claude Code's SessionStart and SessionEnd hooks leave: the episode's record, uncommitted.
    const journal = await openJournal(session.worktree, { forWrite: true });
    await applyHook(journal, { key, action: "start", clientPid: process.pid, now: new Date() });
    await applyHook(journal, { key, action: "end", clientPid: process.pid, now: new Date() });
    const [record] = readdirSync(journal.recordsDir);
    const reset = await resetItem(deps, 1);
    assert.equal([reset.reset, reset.removal.worktree.status], [true, "removed"]);
    assert.ok(existsSync(join(archiveDir(deps.stateDir, 1), record)), "the record is kept in the item's archive");
    assert.is(getItem(store, 1)!.state, "ready");
  }));

test("below effect level local reset refuses and removes nothing", () =>
  withWorld(template, async ({ store, deps }) => {
    const session = (await dispatchReady(deps)).outcomes[0].session!;
    await stopAll(deps);
    const plan = { ...deps, effects: wireEffects("plan", { github: deps.effects.github }) };
    await rejects(resetItem(plan, 1), Error, "run it with --effect-level local or above (now plan); nothing was removed");
    assert.ok(existsSync(session.worktree));
    assert.is(getItem(store, 1)!.state, "active");
    const local = await resetItem({ ...deps, effects: wireEffects("local", { github: deps.effects.github }) }, 1);
    assert.equal([local.reset, local.removal.worktree.status, local.removal.branch.status], [true, "removed", "deleted"]);
  }));

test("after a reset the next dispatch starts cleanly: the name moves on and the old session's record stays", () =>
  withWorld(template, async ({ t, store, deps }) => {
    const first = (await dispatchReady(deps)).outcomes[0].session!;
    await stopAll(deps);
    assert.is((await resetItem(deps, 1)).reset, true);
    const again = (await dispatchReady(deps)).outcomes.find((o) => o.item === 1)!;
    assert.equal([again.result, again.reason, again.session?.name], ["active", null, "ra-widgets-1-2"]);
    assert.equal(sessionsOf(store, 1).map((r) => [r.attempt, r.name]), [[1, "ra-widgets-1"], [2, "ra-widgets-1-2"]]);
    assert.ok(listRecords(deps.sessionRoot).some((r) => r.id === first.id), "the first session's record (and its exit) is not destroyed");
    assert.not.ok((await comments(t, 1)).some((c) => c.startsWith("robot-army could not start")));
  }));

test("retry refuses a failed item whose worktree is still there, naming resume, restart and reset; after reset it dispatches with one failure comment in all", () =>
  withWorld(template, async ({ t, store, deps }) => {
    const failing = { ...deps, config: { ...deps.config, worktrees: { ...deps.config.worktrees, post_create: [["sh", "-c", "exit 7"]] } } };
    const [failed] = (await dispatchReady(failing)).outcomes;
    assert.equal([failed.item, failed.result], [1, "failed"]);
    await rejects(retryItem(deps, 1), PreconditionError, /still has its worktree at ".*issue-1".*"robot-army resume 1" or "robot-army restart 1" carry on in it, "robot-army reset 1" discards it$/);
    assert.is(getItem(store, 1)!.state, "failed");
    assert.is((await resetItem(deps, 1)).reset, true);
    const again = (await dispatchReady(deps)).outcomes.find((o) => o.item === 1)!;
    assert.is(again.result, "active");
    assert.is((await comments(t, 1)).filter((c) => c.startsWith("robot-army could not start")).length, 1);
  }));

test("retry refuses a failed item whose branch is still in the clone without a worktree, naming reset", () =>
  withWorld(template, async ({ store, deps, config }) => {
    const failing = { ...deps, config: { ...deps.config, worktrees: { ...deps.config.worktrees, post_create: [["sh", "-c", "exit 7"]] } } };
    await dispatchReady(failing);
    const clone = config.repos["demo/widgets"].path;
    const path = join(deps.stateDir, "worktrees", "demo", "widgets", "issue-1");
    git(clone, "worktree", "remove", "--force", path);
    await rejects(retryItem(deps, 1), PreconditionError, /^Work item 1's branch "robot-army\/issue-1-[^"]+" is still in ".*", so a fresh dispatch would fail on it; "robot-army reset 1" removes it/);
    assert.is(getItem(store, 1)!.state, "failed");
    const reset = await resetItem(deps, 1);
    assert.equal([reset.reset, reset.removal.worktree.status, reset.removal.branch.status], [true, "absent", "deleted"]);
  }));

test.run();
