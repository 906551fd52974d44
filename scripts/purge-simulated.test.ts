import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dispatchReady } from "../lib/dispatch/dispatch.ts";
import type { DispatchDeps } from "../lib/dispatch/dispatch-deps.ts";
import { wireEffects } from "../lib/effects.ts";
import type { EffectLevel } from "../lib/effects.ts";
import { PreconditionError } from "../lib/errors.ts";
import { queryAudit } from "../lib/store/audit.ts";
import { git } from "../lib/testing/fixtures.ts";
import { rejects } from "../lib/testing/rejects.ts";
import { stopAll, verbTemplate, withWorld } from "../lib/testing/verbs.ts";
import { getItem } from "../lib/work-items/queries.ts";
import { endSession } from "../lib/work-items/sessions.ts";
import { run } from "./purge-simulated.ts";
import type { PurgeCommandDeps } from "./purge-simulated.ts";

const template = verbTemplate();
test.after(() => template.remove());

/** Items 1-3 made below live, item 1 dispatched at no-remote into a real worktree, its worker ended (unless told it runs on). */
async function rehearsed(deps: DispatchDeps, options: { workerRuns?: boolean } = {}): Promise<string> {
  deps.store.statement("UPDATE work_items SET simulated = 1").run();
  const session = (await dispatchReady({ ...deps, effects: wireEffects("no-remote", { github: deps.effects.github }) })).outcomes[0].session!;
  if (!options.workerRuns) {
    await stopAll(deps);
    endSession(deps.store, session.id, "killed");
  }
  return session.worktree;
}

/** The command's dependencies, with the answers typed (or `no stdin`) to its questions in turn. */
function commandDeps(deps: DispatchDeps, answers: Array<string | "no stdin">, out: { written: string[]; asked: string[] }, level: EffectLevel = "local"): PurgeCommandDeps {
  return {
    store: deps.store, config: deps.config, stateDir: deps.stateDir, sessionRoot: deps.sessionRoot, host: deps.host,
    effects: wireEffects(level, { github: deps.effects.github }),
    ask: async (question) => {
      out.asked.push(question);
      const answer = answers.shift() ?? "no stdin";
      return answer === "no stdin" ? { unanswered: "no stdin" } : { line: answer };
    },
    write: (text) => out.written.push(text),
  };
}

test("the two questions are asked separately, rows first, and only y or yes is yes", () =>
  withWorld(template, async ({ deps }) => {
    const worktree = await rehearsed(deps);
    const out = { written: [] as string[], asked: [] as string[] };
    await rejects(run({ yes: false, removeWorktrees: false }, commandDeps(deps, ["yes please"], out)), PreconditionError, "Not purged (no): nothing was deleted");
    assert.equal(out.asked, ["Delete 3 simulated work items and their rows? [y/N] "], "the worktrees question is not asked once the rows stay");
    assert.equal([getItem(deps.store, 1)?.id, existsSync(worktree)], [1, true]);
    out.asked.length = 0;
    assert.is(await run({ yes: false, removeWorktrees: false }, commandDeps(deps, ["Y", "n"], out)), 0);
    assert.equal(out.asked, ["Delete 3 simulated work items and their rows? [y/N] ", "Also remove this worktree and its branch? [y/N] "]);
    assert.equal([getItem(deps.store, 1), existsSync(worktree)], [undefined, true]);
    const text = out.written.join("");
    assert.match(text, `worktrees they own: 1\n  ${worktree}  branch robot-army/issue-1-`);
    assert.match(text, "deleted 3 simulated work items (1, 2, 3) and the rows that hung off them: issue_trust 3, sessions 1\n");
    assert.match(text, `not removed (answer: no), and no item claims them now:\n  ${worktree}  branch robot-army/issue-1-`);
    assert.match(text, `: robot-army worktree remove ${worktree}\n`);
    const [record] = queryAudit(deps.store, { kind: "purge.simulated" });
    assert.equal([record.body.items, (record.body.worktrees as { answer: string; left: unknown[] }).answer], [[1, 2, 3], "no"]);
  }));

test("--yes answers only the rows question and --remove-worktrees only the other; the worktree goes before the rows", () =>
  withWorld(template, async ({ deps }) => {
    const worktree = await rehearsed(deps);
    const out = { written: [] as string[], asked: [] as string[] };
    assert.is(await run({ yes: true, removeWorktrees: false }, commandDeps(deps, ["no stdin"], out)), 0);
    assert.equal(out.asked, ["Also remove this worktree and its branch? [y/N] "], "--yes does not answer the worktrees question");
    assert.ok(existsSync(worktree));
    assert.match(out.written.join(""), "Delete 3 simulated work items and their rows? [y/N] yes (--yes)\n");
    assert.match(out.written.join(""), "not removed (answer: no stdin)");
  }));

test("both answered: the worktree and its branch are removed first, each audited before the purge record", () =>
  withWorld(template, async ({ deps }) => {
    const worktree = await rehearsed(deps);
    const out = { written: [] as string[], asked: [] as string[] };
    assert.is(await run({ yes: false, removeWorktrees: true }, commandDeps(deps, ["yes"], out)), 0);
    assert.equal(out.asked, ["Delete 3 simulated work items and their rows? [y/N] "]);
    assert.not.ok(existsSync(worktree));
    const text = out.written.join("");
    assert.match(text, `removed worktree ${worktree}\ndeleted branch robot-army/issue-1-`);
    assert.not.match(text, "no item claims them now");
    const kinds = queryAudit(deps.store, {}).filter((r) => r.kind === "worktree.remove" || r.kind === "purge.simulated").map((r) => `${r.kind}:${r.phase}`);
    assert.equal(kinds, ["worktree.remove:intent", "worktree.remove:outcome", "purge.simulated:fact"]);
  }));

test("a branch with a commit origin lacks is kept once its worktree is removed, and named with what to do", () =>
  withWorld(template, async ({ deps }) => {
    const worktree = await rehearsed(deps);
    writeFileSync(join(worktree, "work.txt"), "only here\n");
    git(worktree, "add", "work.txt");
    git(worktree, "commit", "-qm", "unpushed work");
    const out = { written: [] as string[], asked: [] as string[] };
    assert.is(await run({ yes: true, removeWorktrees: true }, commandDeps(deps, [], out)), 0);
    const text = out.written.join("");
    const clone = deps.config.repos["demo/widgets"].path;
    assert.match(text, `removed worktree ${worktree}\nkept branch robot-army/issue-1-`);
    assert.match(text, "left, and no item claims them now:\n  branch robot-army/issue-1-");
    assert.match(text, ` in ${clone} (its worktree ${worktree} is gone): push it, or delete it yourself once you know its commits are not needed\n`);
    assert.match(git(clone, "branch", "--list", "robot-army/*"), "robot-army/issue-1-", "the only copy of the commit stays");
  }));

test("below effect level local the worktree is not touched: a real directory is kept as a survivor and named, and the rows still go", () =>
  withWorld(template, async ({ deps }) => {
    const worktree = await rehearsed(deps);
    const out = { written: [] as string[], asked: [] as string[] };
    assert.is(await run({ yes: true, removeWorktrees: true }, commandDeps(deps, [], out, "plan")), 0);
    const text = out.written.join("");
    assert.match(text, `kept worktree ${worktree} (directory_survived): `);
    assert.match(text, "effect level plan: worktrees and branches are simulated below local, so nothing was removed from disk\n");
    assert.match(text, `left, and no item claims them now:\n  ${worktree}`);
    assert.not.match(text, "removed worktree");
    assert.equal([getItem(deps.store, 1), existsSync(worktree)], [undefined, true]);
  }));

test("an item whose session row is open is kept, with its worktree, and the rest are purged", () =>
  withWorld(template, async ({ deps }) => {
    const worktree = await rehearsed(deps, { workerRuns: true });
    const out = { written: [] as string[], asked: [] as string[] };
    assert.is(await run({ yes: true, removeWorktrees: true }, commandDeps(deps, [], out)), 0);
    const text = out.written.join("");
    assert.match(text, "simulated work items: 2 to delete, 1 kept\n  item 2  demo/widgets#2  ready\n  item 3  demo/widgets#3  ready\n  item 1  demo/widgets#1  active  kept: session ra-widgets-1 (");
    assert.match(text, "; end it first (robot-army cancel 1)\nworktrees they own: none on disk, no branch left in a clone\n");
    assert.match(text, "deleted 2 simulated work items (2, 3)");
    assert.equal([getItem(deps.store, 1)?.state, getItem(deps.store, 2), existsSync(worktree)], ["active", undefined, true]);
  }));

test("with no simulated item it says so and asks nothing", () =>
  withWorld(template, async ({ deps }) => {
    const out = { written: [] as string[], asked: [] as string[] };
    assert.is(await run({ yes: true, removeWorktrees: true }, commandDeps(deps, [], out)), 0);
    assert.equal([out.written, out.asked], [["no simulated work items: nothing to purge\n"], []]);
    assert.equal(getItem(deps.store, 1)?.id, 1);
    assert.is(await run({ yes: true, removeWorktrees: true }, { ...commandDeps(deps, [], out), store: undefined }), 0, "nor with no store at all");
  }));

test.run();
