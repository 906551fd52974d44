import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Answer } from "../lib/cli.ts";
import { SIMULATED_GITHUB, wireEffects } from "../lib/effects.ts";
import { PreconditionError } from "../lib/errors.ts";
import { queryAudit } from "../lib/store/audit.ts";
import { endSession } from "../lib/work-items/sessions.ts";
import { withCleanupWorld } from "../lib/testing/cleanup-world.ts";
import type { CleanupWorld } from "../lib/testing/cleanup-world.ts";
import { describeRemoval, removeTarget, runList, runPrune, runRemove } from "./worktree.ts";
import type { WorktreeDeps } from "./worktree.ts";

/** The command's dependencies on a cleanup world: output into `out`, each question answered by the next of `answers`. */
function depsOf(w: CleanupWorld, options: { atTerminal?: boolean; answers?: Answer[] } = {}): WorktreeDeps & { out: string[]; asked: string[] } {
  const out: string[] = [];
  const asked: string[] = [];
  const answers = [...(options.answers ?? [])];
  return {
    ...w, out, asked, write: (text) => void out.push(text), atTerminal: options.atTerminal ?? false,
    ask: async (question) => {
      asked.push(question);
      return answers.shift() ?? { unanswered: "no stdin" };
    },
  };
}

async function refusal(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof PreconditionError, String(error));
    return error.message;
  }
  return assert.unreachable("expected a refusal") as never;
}

test("a number names a work item, anything else a path made absolute", () => {
  assert.equal(removeTarget("12"), { item: 12 });
  assert.equal(removeTarget("/w/issue-9"), { path: "/w/issue-9" });
  assert.equal(removeTarget("issue-9"), { path: join(process.cwd(), "issue-9") });
});

test("list prints each worktree with item, branch, size, condition and cleanup state, unclaimed ones too, and the total; --json the same", () =>
  withCleanupWorld(async (w) => {
    const claimed = w.addWorktree("issue-1", "robot-army/1-claimed");
    w.claim(1, claimed, "robot-army/1-claimed");
    const loose = w.addWorktree("issue-9", "robot-army/9-loose");
    const deps = depsOf(w);
    assert.is(await runList({ json: false }, deps), 0);
    const lines = deps.out.join("").split("\n");
    assert.match(lines[0], new RegExp(`^${claimed}  item 1  robot-army/1-claimed  \\d+\\.\\d KiB  clean  cleanup: none$`));
    assert.match(lines[1], new RegExp(`^${loose}  no item  robot-army/9-loose  \\d+\\.\\d KiB  unclaimed  cleanup: none$`));
    assert.match(lines[2], /^total: 2 worktrees, \d+\.\d KiB$/);
    const json = depsOf(w);
    await runList({ json: true }, json);
    const listed = JSON.parse(json.out.join(""));
    assert.equal(listed.worktrees.map((x: { item: number | null; condition: string }) => [x.item, x.condition]), [[1, "clean"], [null, "unclaimed"]]);
    assert.is(listed.total_bytes, listed.worktrees[0].size_bytes + listed.worktrees[1].size_bytes);
  }));

test("remove <path> removes an unclaimed worktree and its branch; a claimed path is refused with the item's id", () =>
  withCleanupWorld(async (w) => {
    const claimed = w.addWorktree("issue-1", "robot-army/1-claimed");
    w.claim(1, claimed, "robot-army/1-claimed");
    assert.match(await refusal(runRemove({ target: { path: claimed }, force: false }, depsOf(w))), 'remove it with "robot-army worktree remove 1"');
    assert.ok(existsSync(claimed));
    const loose = w.addWorktree("issue-9", "robot-army/9-loose");
    const deps = depsOf(w);
    assert.is(await runRemove({ target: { path: loose }, force: false }, deps), 0);
    assert.match(deps.out.join(""), `removed worktree ${loose}\ndeleted branch robot-army/9-loose`);
    assert.not.ok(existsSync(loose));
  }));

test("--force on a dirty unclaimed worktree removes nothing away from a terminal, at an unanswered question, or at a wrong answer, each recorded against the path; the directory's name removes it", () =>
  withCleanupWorld(async (w) => {
    const dirty = w.addWorktree("issue-9", "robot-army/9-dirty");
    writeFileSync(join(dirty, "notes.txt"), "only here\n");
    const plain = depsOf(w);
    assert.is(await runRemove({ target: { path: dirty }, force: false }, plain), 3);
    assert.match(plain.out.join(""), `kept worktree ${dirty} (git_refused)`);
    assert.match(plain.out.join(""), "branch robot-army/9-dirty not attempted: its worktree was kept");

    assert.match(await refusal(runRemove({ target: { path: dirty }, force: true }, depsOf(w))), "Not removed (not at a terminal): nothing was touched");
    const unanswered = depsOf(w, { atTerminal: true, answers: [{ unanswered: "no stdin" }] });
    assert.match(await refusal(runRemove({ target: { path: dirty }, force: true }, unanswered)), "Not removed (no stdin)");
    assert.match(unanswered.asked[0], "Type the directory's name (issue-9) to confirm: ");
    assert.match(unanswered.asked[0], "even with uncommitted or untracked work in it");
    const wrong = depsOf(w, { atTerminal: true, answers: [{ line: "issue-1" }] });
    assert.match(await refusal(runRemove({ target: { path: dirty }, force: true }, wrong)), "Not removed (answer did not match)");
    const interrupted = depsOf(w, { atTerminal: true, answers: [{ unanswered: "interrupted" }] });
    assert.match(await refusal(runRemove({ target: { path: dirty }, force: true }, interrupted)), "Not removed (interrupted)");
    assert.ok(existsSync(join(dirty, "notes.txt")));
    const gaveUp = queryAudit(w.store, { kind: "worktree.remove" }).filter((r) => r.phase === "fact");
    assert.equal(gaveUp.map((r) => [r.body.path, r.body.gave_up, r.body.removed]), [
      [dirty, "not at a terminal", false], [dirty, "no stdin", false], [dirty, "answer did not match", false], [dirty, "interrupted", false],
    ]);

    const confirmed = depsOf(w, { atTerminal: true, answers: [{ line: "issue-9\n" }] });
    assert.is(await runRemove({ target: { path: dirty }, force: true }, confirmed), 0);
    assert.match(confirmed.out.join(""), `removed worktree ${dirty}`);
    assert.not.ok(existsSync(dirty));
  }));

test("remove <id> removes a finished item's worktree and branch as cleanup would, shows its cleanup state, and refuses a second time", () =>
  withCleanupWorld(async (w) => {
    const path = w.addWorktree("issue-1", "robot-army/1-done");
    const item = w.claim(1, path, "robot-army/1-done", "done");
    endSession(w.store, `5e551011-0000-4000-8000-${"1".padStart(12, "0")}`, "exited", { code: 0 });
    assert.match(await refusal(runRemove({ target: { item }, force: true }, depsOf(w))), "--force removes work, so it is taken only when typed at a terminal");
    const deps = depsOf(w);
    assert.is(await runRemove({ target: { item }, force: false }, deps), 0);
    const out = deps.out.join("");
    assert.match(out, `removed worktree ${path}\ndeleted branch robot-army/1-done`);
    assert.match(out, `work item ${item} (demo/widgets#1, done): cleanup state done`);
    assert.not.ok(existsSync(path));
    assert.match(await refusal(runRemove({ target: { item }, force: false }, depsOf(w))), "already_removed");
  }));

test("below effect level local the removal says would, names the level, and a real directory survives", () =>
  withCleanupWorld(async (w) => {
    const plan = wireEffects("plan", { github: SIMULATED_GITHUB });
    assert.equal(describeRemoval("/w/issue-9", "b", { simulated: true, worktree: { status: "simulated" }, branch: { status: "simulated" } }, plan), [
      "would remove worktree /w/issue-9", "would delete branch b", "effect level plan: nothing was touched; version control is real from local",
    ]);
    const loose = w.addWorktree("issue-9", "robot-army/9-loose");
    const deps = { ...depsOf(w), effects: plan };
    assert.is(await runRemove({ target: { path: loose }, force: false }, deps), 3);
    assert.match(deps.out.join(""), `kept worktree ${loose} (directory_survived)`);
    assert.ok(existsSync(loose));
  }));

test("prune says per repository what it pruned, and below local that it was not checked", () =>
  withCleanupWorld(async (w) => {
    const deps = depsOf(w);
    assert.is(await runPrune({}, deps), 0);
    assert.is(deps.out.join(""), "demo/widgets: nothing to prune\n");
    const plan = { ...depsOf(w), effects: wireEffects("plan", { github: SIMULATED_GITHUB }) };
    await runPrune({}, plan);
    assert.is(plan.out.join(""), "demo/widgets: not checked (effect level plan; version control is real from local)\n");
  }));

test.run();
