import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { wireEffects } from "../../effects.ts";
import { git } from "../../testing/fixtures.ts";
import { rejects } from "../../testing/rejects.ts";
import { getItem } from "../../work-items/queries.ts";
import { dispatchReady } from "../dispatch.ts";
import { resetItem } from "./reset.ts";
import { stopAll, verbTemplate, withWorld } from "../../testing/verbs.ts";

const template = verbTemplate();
test.after(() => template.remove());

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

test.run();
