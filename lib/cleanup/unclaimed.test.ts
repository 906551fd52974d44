import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PreconditionError } from "../errors.ts";
import { SIMULATED_GITHUB, wireEffects } from "../effects.ts";
import { queryAudit } from "../store/audit.ts";
import { git } from "../testing/fixtures.ts";
import { trackSessionProcesses, waitFor } from "../testing/sessions.ts";
import { stopSession } from "../sessions/stop.ts";
import { withCleanupWorld } from "../testing/cleanup-world.ts";
import { makeItem } from "../testing/items.ts";
import { cloneWorktrees, removeUnclaimed, sessionInPath, unclaimedDirectories, unclaimedTarget, worktreeClaims } from "./unclaimed.ts";
import { fsCalls, fsCallsCountable } from "../testing/fs-calls.ts";
import { skipWhen } from "../testing/skip.ts";

const processes = trackSessionProcesses(test, { childrenBy: "pid" });

async function refusal(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof PreconditionError, String(error));
    return error.message;
  }
  return assert.unreachable("expected a refusal") as never;
}

test("each item claims its newest session's worktree; every other directory in the root, and any worktree a clone lists inside it, is unclaimed", () =>
  withCleanupWorld(async (w) => {
    const claimed = w.addWorktree("issue-1", "robot-army/1-claimed");
    const item = w.claim(1, claimed, "robot-army/1-claimed");
    const loose = w.addWorktree("issue-9", "robot-army/9-loose");
    const stray = join(w.root, "demo", "widgets", "stray");
    mkdirSync(stray);
    const deep = join(w.root, "elsewhere", "a", "b", "c");
    git(w.clone, "worktree", "add", "--quiet", "-b", "deep", deep, "origin/main");
    assert.equal(worktreeClaims(w.store, w.root).map((c) => [c.item, c.path, c.branch]), [[item, claimed, "robot-army/1-claimed"]]);
    assert.equal(await unclaimedDirectories(w), [
      { path: loose, repo: "demo/widgets", branch: "robot-army/9-loose" },
      { path: stray, repo: null, branch: null },
      { path: deep, repo: "demo/widgets", branch: "deep" },
    ].sort((a, b) => a.path.localeCompare(b.path)));
  }));

skipWhen(test, !fsCallsCountable() && "this runtime's node:fs named exports do not follow fs.realpathSync, so its calls cannot be counted")(
  "a scan resolves each path once, however many directories and claims it compares",
  () => withCleanupWorld(async (w) => {
    for (const n of [1, 2, 3]) w.claim(n, w.addWorktree(`issue-${n}`, `robot-army/${n}-claimed`), `robot-army/${n}-claimed`);
    for (const n of [7, 8, 9]) w.addWorktree(`issue-${n}`, `robot-army/${n}-loose`);
    const claims = worktreeClaims(w.store, w.root);
    const worktrees = (await cloneWorktrees(w.store, w.config)).worktrees;
    let found: unknown[] = [];
    let pending: Promise<void> = Promise.resolve();
    const resolved = fsCalls("realpathSync", () => {
      // The resolving is synchronous, before the first await of the scan (which is given what it would list).
      pending = unclaimedDirectories(w, { claims, worktrees }).then((dirs) => void (found = dirs));
    })!;
    await pending;
    assert.is(found.length, 3);
    const twice = resolved.filter((path, i) => resolved.indexOf(path) !== i);
    assert.equal(twice, [], "no path resolved twice");
  }),
);

test("a worktree root that does not exist holds nothing unclaimed", () =>
  withCleanupWorld(async (w) => {
    assert.equal(await unclaimedDirectories(w), []);
  }));

test("the path form refuses a claimed path with the item's id, a path outside the root, one no clone lists, and a detached one", () =>
  withCleanupWorld(async (w) => {
    const claimed = w.addWorktree("issue-1", "robot-army/1-claimed");
    const item = w.claim(1, claimed, "robot-army/1-claimed", "done");
    const deps = { ...w };
    assert.match(await refusal(unclaimedTarget(deps, claimed)), `is the worktree of work item ${item} (demo/widgets#1, done): remove it with "robot-army worktree remove ${item}"`);
    assert.match(await refusal(unclaimedTarget(deps, w.clone)), "is not inside the worktree root");
    assert.match(await refusal(unclaimedTarget(deps, w.root)), "is not inside the worktree root");
    const stray = join(w.root, "demo", "widgets", "stray");
    mkdirSync(stray, { recursive: true });
    assert.match(await refusal(unclaimedTarget(deps, stray)), "No onboarded clone lists");
    const detached = join(w.root, "demo", "widgets", "detached");
    git(w.clone, "worktree", "add", "--quiet", "--detach", detached, "origin/main");
    assert.match(await refusal(unclaimedTarget(deps, detached)), "detached HEAD");
    const loose = w.addWorktree("issue-9", "robot-army/9-loose");
    const target = await unclaimedTarget(deps, loose);
    assert.equal({ ...target }, { path: loose, repo: "demo/widgets", repoPath: w.clone, base: "main", branch: "robot-army/9-loose", session: { live: false } });
  }));

test("an unclaimed worktree is removed with its branch once every commit is on origin; a dirty one is kept by git's refusal until forced", () =>
  withCleanupWorld(async (w) => {
    const loose = w.addWorktree("issue-9", "robot-army/9-loose");
    const removal = await removeUnclaimed(w, await unclaimedTarget(w, loose), { force: false });
    assert.is(removal.worktree.status, "removed");
    assert.is(removal.branch.status, "deleted");
    assert.not.ok(existsSync(loose));
    assert.is(git(w.clone, "branch", "--list", "robot-army/9-loose"), "");
    const audited = queryAudit(w.store, { kind: "worktree.remove" });
    assert.equal(audited.map((r) => r.phase), ["intent", "outcome"]);
    assert.is(audited[0].body.path, loose);

    const dirty = w.addWorktree("issue-10", "robot-army/10-dirty");
    writeFileSync(join(dirty, "notes.txt"), "only here\n");
    const kept = await removeUnclaimed(w, await unclaimedTarget(w, dirty), { force: false });
    assert.is(kept.worktree.status, "kept");
    assert.ok(existsSync(join(dirty, "notes.txt")));
    const forced = await removeUnclaimed(w, await unclaimedTarget(w, dirty), { force: true });
    assert.is(forced.worktree.status, "removed");
    assert.not.ok(existsSync(dirty));
  }));

test("an unclaimed worktree whose directory was deleted by hand is not refused: git's record goes, the branch is proven and deleted", () =>
  withCleanupWorld(async (w) => {
    const loose = w.addWorktree("issue-9", "robot-army/9-loose");
    rmSync(loose, { recursive: true });
    const removal = await removeUnclaimed(w, await unclaimedTarget(w, loose), { force: false });
    assert.is(removal.worktree.status, "absent");
    assert.is(removal.branch.status, "deleted");
    assert.not.ok(git(w.clone, "worktree", "list", "--porcelain").includes(loose));
  }));

test("below effect level local a real directory is not touched, and is reported as surviving", () =>
  withCleanupWorld(async (w) => {
    const loose = w.addWorktree("issue-9", "robot-army/9-loose");
    const plan = { ...w, effects: wireEffects("plan", { github: SIMULATED_GITHUB }) };
    const removal = await removeUnclaimed(plan, await unclaimedTarget(plan, loose), { force: false });
    assert.is(removal.simulated, true);
    assert.equal(removal.worktree.status, "kept");
    assert.ok(existsSync(loose));
    assert.ok(git(w.clone, "branch", "--list", "robot-army/9-loose").includes("robot-army/9-loose"));
  }));

test("a managed session running in the worktree makes it live, by pid and start time; once stopped it is not; an unreadable record is unknown", () =>
  withCleanupWorld(async (w) => {
    const loose = w.addWorktree("issue-9", "robot-army/9-loose");
    mkdirSync(join(loose, "sub"));
    const { record } = await processes.start(w.sessionRoot, { command: "sleep", args: ["30"], name: "inside", cwd: join(loose, "sub") });
    const live = sessionInPath(w.sessionRoot, loose);
    assert.is(live.live, true);
    assert.match("why" in live ? live.why : "", "session inside");
    assert.is((await unclaimedTarget(w, loose)).session.live, true);
    const refused = await removeUnclaimed(w, await unclaimedTarget(w, loose), { force: true });
    assert.equal(refused.worktree.status, "kept");
    assert.ok(existsSync(loose));
    await stopSession(w.sessionRoot, record, { graceMs: 2000 });
    await waitFor("the session to be seen ended", () => sessionInPath(w.sessionRoot, loose).live === false);
    assert.equal(sessionInPath(w.sessionRoot, join(w.root, "demo", "widgets", "other")), { live: false });
    writeFileSync(join(w.sessionRoot, "damaged.json"), "{ not json");
    const unknown = sessionInPath(w.sessionRoot, loose);
    assert.is(unknown.live, "unknown");
    assert.match("why" in unknown ? unknown.why : "", "cannot be read");
  }));

test("no session is left running", () => {
  assert.equal(processes.leaked, []);
});

test("a worktree dispatch is still making (its item has no session yet) is claimed, and so is any folder inside a claimed worktree", () =>
  withCleanupWorld(async (w) => {
    const dispatching = makeItem(w.store, { issue: 4, state: "dispatching", title: "Being made" });
    const made = w.addWorktree("issue-4", "robot-army/issue-4-being-made");
    const claims = worktreeClaims(w.store, w.root);
    assert.equal(claims.map((c) => [c.item, c.path, c.branch]), [[dispatching.id, made, "robot-army/issue-4-being-made"]]);
    assert.equal(await unclaimedDirectories(w), []);
    assert.match(await refusal(unclaimedTarget(w, made)), `is the worktree of work item ${dispatching.id}`);
    // A ready item whose worktree is not made yet claims nothing on disk.
    makeItem(w.store, { issue: 5, state: "ready" });
    assert.is(worktreeClaims(w.store, w.root).length, 1);
    const inside = join(made, "tmp");
    mkdirSync(inside);
    assert.match(await refusal(unclaimedTarget(w, inside)), `is the worktree of work item ${dispatching.id}`);
  }));

test.run();
