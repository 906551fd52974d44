import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config.ts";
import { git } from "../testing/fixtures.ts";
import { listRecords } from "../sessions/records.ts";
import { queryAudit } from "../store/audit.ts";
import { getItem } from "../work-items/queries.ts";
import { worktreePath } from "../boundaries/worktrees.ts";
import { dispatchReady } from "./dispatch.ts";
import { worktreeRoot } from "../work-items/worktree-root.ts";
import { pause } from "./controls.ts";
import { sessionsOf } from "../work-items/sessions.ts";
import { comments, verbTemplate, withWorld } from "../testing/verbs.ts";
import type { VerbWorld } from "../testing/verbs.ts";
import { attachCommandFor } from "./attach-command.ts";

const template = verbTemplate();
test.after(() => template.remove());

/** A forge with demo/widgets, a real clone, an onboarded repository, three ready items at live, and dispatch wired to the process launcher. */
function withDispatch(fn: (w: VerbWorld) => Promise<void>, worker: Partial<Config["worker"]> = {}, baseBranch = "main") {
  return withWorld(template, fn, worker, baseBranch);
}

test("a ready item becomes a worktree, a worker session and a comment listing where it runs; the cap holds the rest", () =>
  withDispatch(async ({ t, store, deps }) => {
    const { withheld, outcomes } = await dispatchReady(deps);
    assert.is(withheld, null);
    assert.equal(outcomes.map((o) => [o.issue, o.result, o.reason]), [[1, "active", null], [2, "waiting", outcomes[1].reason], [3, "waiting", outcomes[2].reason]]);
    assert.match(outcomes[1].reason!, /demo\/widgets/);
    const session = outcomes[0].session!;
    assert.is(session.name, "ra-widgets-1");
    assert.match(session.branch, /^robot-army\/issue-1-/);
    assert.ok(existsSync(join(session.worktree, "README.md")), "the worktree holds the base branch");
    assert.is(git(session.worktree, "rev-parse", "--abbrev-ref", "HEAD"), session.branch);
    assert.is(getItem(store, 1)!.state, "active");
    const [row] = sessionsOf(store, 1);
    assert.equal([row.id, row.name, row.attempt, row.launcher], [session.id, "ra-widgets-1", 1, "process"]);
    const [worker] = listRecords(deps.sessionRoot);
    assert.equal([(row as unknown as { pid: number }).pid, (row as unknown as { pid_started_at: string }).pid_started_at], [worker.childPid, worker.childStartedAt], "the row knows the worker by pid and start time");
    const [record] = listRecords(deps.sessionRoot);
    assert.equal([record.name, record.tags.ra_item, record.cwd], ["ra-widgets-1", "1", session.worktree]);
    // Both effects are audited: the worktree git made and the worker launched, each an intent and an outcome.
    const made = queryAudit(store, { kind: "worktree.create", item: 1 });
    assert.equal(made.map((r) => r.phase), ["intent", "outcome"]);
    assert.equal([made[0].body.path, made[0].body.branch], [session.worktree, session.branch]);
    assert.equal([made[1].body.ok, made[1].body.path, made[1].body.branch], [true, session.worktree, session.branch]);
    const launch = queryAudit(store, { kind: "session.launch", item: 1 });
    assert.equal(launch.map((r) => r.phase), ["intent", "outcome"]);
    assert.is(launch[0].body.session, "ra-widgets-1");
    assert.equal([launch[1].body.ok, launch[1].body.session_id], [true, session.id], "the outcome names the session id");
    assert.ok(made[0].id < launch[0].id, "the worktree is made before the worker is launched in it");
    const dispatched = (await comments(t, 1)).find((c) => c.startsWith("robot-army dispatched"))!;
    assert.equal(dispatched.split("\n"), [
      "robot-army dispatched a session for this issue.", "",
      "- Host: testhost", "- Session: ra-widgets-1", `- Session id: ${session.id}`, `- Branch: ${session.branch}`, `- Worktree: ${session.worktree}`,
    ]);
  }));

test("a failure to start fails the item with its reason kept private; the issue hears only the host and the item", () =>
  withDispatch(async ({ t, store, deps }) => {
    // A folder where the worktree would go: git is never asked to write over it.
    mkdirSync(worktreePath(worktreeRoot(deps.config, deps.stateDir), "demo/widgets", 1), { recursive: true });
    const { outcomes } = await dispatchReady(deps);
    assert.equal(outcomes[0].result, "failed");
    const item = getItem(store, 1)!;
    assert.is(item.state, "failed");
    assert.match(item.reason!, /already exists and is not a worktree/);
    const failed = (await comments(t, 1)).find((c) => c.startsWith("robot-army could not start"))!;
    assert.equal(failed.split("\n"), ["robot-army could not start a session for this issue.", "", "- Host: testhost", "- Work item: 1"]);
    const moves = queryAudit(store, { kind: "state.work_item", item: 1 }).map((r) => `${r.body.from}->${r.body.to}`);
    assert.equal(moves, ["null->discovered", "discovered->ready", "ready->dispatching", "dispatching->failed"]);
  }));

test("a worker program that does not exist withholds the pass: nothing is claimed, failed or told", () =>
  withDispatch(async ({ t, store, deps }) => {
    const { withheld, outcomes } = await dispatchReady(deps);
    assert.is(withheld, "the worker program /nonexistent-robot-army-test/no-such-agent does not exist (worker.binary)");
    assert.equal(outcomes, []);
    assert.equal([1, 2, 3].map((id) => getItem(store, id)!.state), ["ready", "ready", "ready"]);
    assert.not.ok((await comments(t, 1)).some((c) => c.startsWith("robot-army could not start")));
  }, { binary: "/nonexistent-robot-army-test/no-such-agent" }));

test("a title full of shell syntax gives a safe branch and runs nothing", () =>
  withDispatch(async ({ store, deps }) => {
    const marker = join(deps.stateDir, "pwned");
    store.statement("UPDATE work_items SET title = ? WHERE id = 1").run(`"; touch ${marker}; $(touch ${marker}) \`touch ${marker}\`\nnext line ü`);
    const { outcomes } = await dispatchReady(deps);
    assert.is(outcomes[0].result, "active");
    assert.match(outcomes[0].session!.branch, /^robot-army\/issue-1-[a-z0-9-]+$/);
    assert.not.ok(existsSync(marker), "nothing from the title was run");
  }));

test("attach finds a headless worker's session and says how to read it; an item without a session is refused", () =>
  withDispatch(async ({ store, deps }) => {
    await dispatchReady(deps);
    const found = await attachCommandFor(store, 1, deps.launcher);
    assert.equal(found, { argv: null, message: 'Work item 1 runs headless as session ra-widgets-1; "robot-army session peek ra-widgets-1" shows its output' });
    try {
      await attachCommandFor(store, 2, deps.launcher);
      assert.unreachable("item 2 has no session");
    } catch (error) {
      assert.match((error as Error).message, "Work item 2 has no running session (state ready)");
    }
  }));

test("paused dispatch starts nothing", () =>
  withDispatch(async ({ store, deps }) => {
    pause(store, { reason: "lunch" });
    const result = await dispatchReady(deps);
    assert.match(result.withheld!, /paused/);
    assert.is(getItem(store, 1)!.state, "ready");
  }));

test.run();
