import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { makeTempDir, removeTempDir, signalChild, withTempDir } from "../lib/testing/fixtures.ts";
import { PROJECT_ROOT, runtimeArgv } from "../lib/runtime.ts";
import { listRecords } from "../lib/sessions/records.ts";
import { withExistingStore } from "../lib/store/open.ts";
import { listItems } from "../lib/work-items/queries.ts";
import { sessionsOf } from "../lib/work-items/sessions.ts";
import { latestCleanup } from "../lib/cleanup/records.ts";
import { git } from "../lib/testing/fixtures.ts";
import { sessionState } from "../lib/sessions/state.ts";
import { startNotifyReceivers } from "../lib/testing/notify-receivers.ts";
import { robotArmyHere } from "./start.ts";

/** A rehearsal run as `npm start` runs it, with a HOME and no config of its own, its output gathered. */
function rehearsal(home: string, args: string[] = [], extraEnv: Record<string, string> = {}) {
  const argv = runtimeArgv(join(PROJECT_ROOT, "scripts", "robot-army.ts"));
  const env: Record<string, string | undefined> = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), NO_COLOR: "1" };
  for (const key of Object.keys(env)) if (key.startsWith("RA_")) delete env[key];
  Object.assign(env, extraEnv);
  const child = spawn(argv[0], [...argv.slice(1), "start", ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  const seen = { out: "" };
  child.stdout.on("data", (chunk: Buffer) => (seen.out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (seen.out += chunk.toString()));
  const closed = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return {
    env, child, closed,
    get out() {
      return seen.out;
    },
    /** The rehearsal's folder, once it has said it. */
    get dir() {
      return /rehearsal in (\S+):/.exec(seen.out)?.[1];
    },
    /** Waits until `wanted` is in the output (or the rehearsal ended, or `ms` passed). */
    async until(wanted: string, ms: number): Promise<void> {
      const deadline = Date.now() + ms;
      while (!seen.out.includes(wanted) && Date.now() < deadline && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 250));
    },
  };
}

/** The rehearsal's work items and their sessions, read from its store. */
async function storeOf(dir: string) {
  return await withExistingStore(join(dir, "state"), (store) => {
    assert.ok(store, "the rehearsal has a store");
    return listItems(store!).map((item) => ({ issue: item.issue, state: item.state, sessions: sessionsOf(store!, item.id), cleanup: latestCleanup(store!, item.id) }));
  });
}

/** The pull request the rehearsal said it opened for issue `issue`. */
function pullOf(out: string, issue: number): string | undefined {
  return new RegExp(`pull request opened: (demo/widgets#\\d+) .*\\(Closes #${issue}\\)`).exec(out)?.[1];
}

function noWorkerLeftRunning(dir: string): void {
  const root = join(dir, "state", "sessions");
  const records = listRecords(root);
  assert.ok(records.length > 0, "the rehearsal started workers");
  assert.equal(records.filter((r) => sessionState(root, r) !== "exited").map((r) => r.name), [], "no worker left running");
}

/**
 * The two rehearsals these tests read, `start --watch` and `start`, run at once: each spends
 * its time waiting on its daemon's polls and its owner's merges far more than computing, so
 * the two take about the time of one. Each has its own HOME, forge, state and workers.
 */
const homes = [makeTempDir(), makeTempDir()];
// Each rehearsal tells a loopback webhook of everything: one given by the flag, the other by the environment.
const receivers = await Promise.all(homes.map((home) => startNotifyReceivers(join(home, "receivers"))));
// The watched one's owner has a config of their own, which start would run the daemon on: --rehearsal rehearses all the same, leaving it alone.
const ownConfig = join(homes[0], ".config", "robot-army", "config.toml");
mkdirSync(dirname(ownConfig), { recursive: true });
writeFileSync(ownConfig, '[github]\nauthor = "someone"\n\n[repos."someone/project"]\npath = "/nonexistent/project"\n');
const watched = rehearsal(homes[0], ["--rehearsal", "--watch", "--webhook-url", receivers[0].webhookUrl]);
const unwatched = rehearsal(homes[1], [], { RA_WEBHOOK_URL: receivers[1].webhookUrl });
test.after(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  for (const r of [watched, unwatched]) {
    if (r.child.exitCode === null) signalChild(r.child, "SIGINT");
    await r.closed;
    if (r.dir?.includes("robot-army-rehearsal-")) removeTempDir(r.dir);
  }
  for (const home of homes) removeTempDir(home);
});

test("start --watch plays the owner: it merges each pull request as the owner, in turn with a merge commit and squashed, keeping item 2 just before its merge, the items go done, a retired worker's worktree is reclaimed while the kept one's stays, it says when every issue is finished and runs on, and Ctrl-C stops it all", async () => {
  const r = watched;
  const finished = "every issue finished: 3 items done, 2 workers retired, 1 kept, still running; --watch runs on until Ctrl-C\n";
  await r.until(finished, 150_000);
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const ranOn = r.child.exitCode === null;
  // The hint names a command that runs where it is printed, robot-army installed or not.
  const hint = /look around with: RA_STATE_DIR=(\S+) (\S+) status --config (\S+)/.exec(r.out);
  const looked = hint && spawnSync(hint[2], ["status", "--config", hint[3]], { env: { ...r.env, RA_STATE_DIR: hint[1] }, encoding: "utf8" });
  // The rehearsal can be watched on the dashboard it printed: the kept worker's row, the three items done.
  const dashboard = /\ndashboard: (http:\/\/127\.0\.0\.1:\d+\/) \(watch the rehearsal there\)\n/.exec(r.out)?.[1];
  const watching = dashboard ? await fetch(`${dashboard}api/active`).then((res) => res.json() as Promise<{ sessions: Array<{ item: { id: number }; kept: boolean }> }>) : undefined;
  const itemPage = dashboard ? await fetch(`${dashboard}items/1`, { headers: { Accept: "text/html" } }).then((res) => res.text()) : "";
  if (r.child.exitCode === null) signalChild(r.child, "SIGINT");
  const code = await r.closed;
  const { out, dir } = r;
  assert.ok(out.includes(finished), `--watch says when every issue is finished:\n${out}`);
  assert.ok(ranOn, "--watch runs on after every issue is finished");
  assert.is(code, 0, out);
  assert.match(out, /sandbox forge at http:\/\/127\.0\.0\.1:\d+: demo\/widgets with labelled issues #1, #2, #3/, "--rehearsal rehearses though a config exists");
  assert.is(readFileSync(ownConfig, "utf8"), '[github]\nauthor = "someone"\n\n[repos."someone/project"]\npath = "/nonexistent/project"\n', "the owner's config is left alone");
  assert.not.ok(existsSync(join(homes[0], ".local", "state", "robot-army")), "and the owner's state dir is never made");
  assert.match(out, "poll: demo/widgets#1: new work item 1, ready");
  assert.match(out, "dispatched demo/widgets#1 as ra-widgets-1 (item 1)");
  assert.match(out, "commented on demo/widgets#1 (dispatched)");
  const [first, second] = [pullOf(out, 1), pullOf(out, 2)];
  assert.ok(first && second, `a pull request opened for issues 1 and 2:\n${out}`);
  assert.match(out, new RegExp(`owner \\(rehearsal\\): merged ${first} \\((merge commit|squash)\\)\n`));
  // The owner's next act after the keep is that merge; the daemon's own lines may come between them.
  const owner = out.split("\n").filter((line) => line.startsWith("owner (rehearsal): "));
  const keptAt = owner.indexOf(`owner (rehearsal): kept item 2 before merging ${second}: its worker stays after the merge`);
  assert.ok(keptAt >= 0 && owner[keptAt + 1]?.startsWith(`owner (rehearsal): merged ${second} (`), `item 2 is kept just before its pull request is merged:\n${out}`);
  assert.not.match(out, /owner \(rehearsal\): kept item 1/, "one item is kept");
  assert.not.match(out, "rehearsal finished", "--watch does not end on its own");
  assert.ok(receivers[0].received().webhook.length >= 6, "given --webhook-url, the rehearsal tells that webhook of each dispatch and each item done");
  assert.match(out, "rehearsal stopped: its workers and the forge are stopped");
  assert.ok(dashboard, `the rehearsal prints its dashboard's address:\n${out}`);
  assert.equal(watching!.sessions.map((s) => [s.item.id, s.kept]), [[2, true]], "the dashboard shows the kept worker, still running");
  assert.match(itemPage, /<span class="state done">done<\/span>/);
  assert.ok(await fetch(dashboard!).then(() => false, () => true), "the dashboard stops with the rehearsal");
  assert.ok(hint, "the rehearsal says how to look around");
  assert.is(looked!.status, 0, `${hint![2]} status: ${looked!.error ?? looked!.stderr}`);
  assert.match(looked!.stdout, "work items: ");
  const items = await storeOf(dir!);
  assert.equal(items.map((i) => [i.issue, i.state]), [[1, "done"], [2, "done"], [3, "done"]], "the merges closed the issues and the poll made their items done");
  const worktree = join(dir!, "worktrees", "demo", "widgets", "issue-1");
  assert.is(items[0].sessions[0].worktree, worktree, "the worktree was made");
  assert.is(items[0].cleanup?.state, "done", "on_issue_close reclaimed item 1's worktree once its worker was retired");
  assert.not.ok(existsSync(worktree));
  assert.is(items[1].cleanup, undefined, "the kept item, its worker running, is not offered to cleanup");
  assert.ok(existsSync(items[1].sessions[0].worktree), "so its worktree stays");
  noWorkerLeftRunning(dir!);
});

test("start runs the whole story on its own: merges said as the owner, every item done, the unkept workers retired, the kept one kept, the waiting issue dispatched, the kept worker stopped and every worktree reclaimed, a summary from the store with each issue's merge and cleanup state, exit 0 and nothing left running", async () => {
  const r = unwatched;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ended = await Promise.race([r.closed.then(() => true), new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), 180_000)))]);
  clearTimeout(timer);
  if (!ended) signalChild(r.child, "SIGINT");
  const code = await r.closed;
  const { out, dir } = r;
  assert.ok(ended, `the rehearsal ends on its own:\n${out}`);
  assert.is(code, 0, out);
  for (const issue of [1, 2, 3]) {
    const pull = pullOf(out, issue);
    assert.ok(pull, `a pull request opened for issue ${issue}:\n${out}`);
    assert.match(out, new RegExp(`owner \\(rehearsal\\): merged ${pull} \\((merge commit|squash)\\)\n`));
  }
  assert.is(out.match(/merged demo\/widgets#\d+ \(merge commit\)\n/g)?.length, 2, "the owner merges in turn: a merge commit, a squash, a merge commit");
  // The owner's two lines, each whole; the daemon's own lines may come between them.
  const merged = /owner \(rehearsal\): merged demo\/widgets#(\d+) \(squash\)\n/.exec(out);
  const deleted = /owner \(rehearsal\): deleted branch (\S+): only refs\/pull\/(\d+)\/head holds its commits on the forge now\n/.exec(out);
  const squashed = merged && deleted && merged[1] === deleted[2] ? merged : null;
  assert.ok(squashed, `the squashed pull request's branch is deleted on the forge:\n${out}`);
  assert.match(out, `owner (rehearsal): kept item 2 before merging ${pullOf(out, 2)}: its worker stays after the merge\n`);
  // Review comes back to the worker: the owner's review of the first pull request is typed into its worker, which
  // answers with a commit on it before the owner merges it.
  const first = pullOf(out, 1)!;
  assert.match(out, `owner (rehearsal): reviewed ${first}, asking for a change: "Please also say in the note how to try this out."; it is merged once the worker answers\n`);
  assert.match(out, `feedback: item 1: @owner reviewed pull request #${first.split("#")[1]} with comments\n`);
  assert.match(out, "item 1 (demo/widgets#1): 1 piece of feedback typed into ra-widgets-1\n");
  const answered = out.indexOf(`owner (rehearsal): ${first} has a new commit, `);
  assert.ok(answered >= 0 && answered < out.indexOf(`owner (rehearsal): merged ${first} `), `the worker answered before the merge:\n${out}`);
  const note = git(join(dir!, "forge", "git", "demo", "widgets.git"), "show", "main:notes/issue-1.md");
  assert.match(note, "## Feedback addressed\n\nfeedback came on your work for demo/widgets#1", "the answer is in what was merged");
  assert.match(note, "Please also say in the note how to try this out.");
  assert.match(out, "dispatched demo/widgets#3 as ra-widgets-3 (item 3)");
  assert.match(out, "item 2 (demo/widgets#2) is done and kept: its worker ra-widgets-2 is still running; the rehearsal stops it now, so its worktree can be reclaimed too\n");
  assert.match(out, "rehearsal finished: 3 items done, 2 workers retired, 1 kept (stopped now), nothing left running\n");
  for (const issue of [1, 2, 3]) {
    assert.match(out, new RegExp(`\n#${issue} done · merged \\((merge commit|squash, its branch deleted on the forge)\\) · worktree reclaimed: done\n`), `the summary says how #${issue} was merged and that its worktree was reclaimed`);
  }
  assert.is(out.match(/· merged \(squash, its branch deleted on the forge\) · worktree reclaimed: done\n/g)?.length, 1, "the squash-merged one's worktree and branch are reclaimed too");
  assert.match(out, `the rehearsal's files stay in ${dir}`);
  const items = await storeOf(dir!);
  assert.equal(items.map((i) => [i.issue, i.state]), [[1, "done"], [2, "done"], [3, "done"]]);
  assert.equal(items.map((i) => i.sessions.map((s) => s.end_reason === "retired")), [[true], [false], [true]], "items 1 and 3 had their workers retired, item 2 kept its own");
  assert.equal(items.map((i) => [i.cleanup?.state, i.cleanup?.worktree, i.cleanup?.branch_outcome]), [1, 2, 3].map(() => ["done", "removed", "deleted"]), "every worktree removed and every branch deleted");
  for (const item of items) {
    assert.not.ok(existsSync(item.sessions[0].worktree), `item ${item.issue}'s worktree is gone from disk`);
    assert.ok(item.cleanup?.bundle && existsSync(item.cleanup.bundle), `item ${item.issue}'s branch was written to a bundle before its deletion`);
  }
  // The squashed pull request's head stays on the forge after its branch's deletion. (Its demo worker, ending after
  // the merge, pushes its episode's record to the branch, so the branch is back on the forge by the time it is proven.)
  const pullRef = `refs/pull/${squashed![1]}/head`;
  assert.ok(git(join(dir!, "forge", "git", "demo", "widgets.git"), "for-each-ref", "--format=%(refname)", "refs/pull/").split("\n").includes(pullRef), `the forge keeps ${pullRef}`);
  for (const item of items) assert.match(item.cleanup?.proof ?? "", "asked live", `item ${item.issue}'s branch was proven on the forge, asked live`);
  assert.is(git(join(dir!, "widgets"), "branch", "--list", "robot-army/*"), "", "the clone has no item branch left");
  noWorkerLeftRunning(dir!);
  // Given a webhook by $RA_WEBHOOK_URL, the rehearsal told it of each dispatch and each item done, and said so.
  const titles = receivers[1].received().webhook.map((request) => (request.body as { title?: string }).title);
  for (const issue of [1, 2, 3]) {
    assert.ok(titles.includes(`robot-army: demo/widgets#${issue} dispatched (item ${issue})`), `the webhook heard of #${issue}'s dispatch: ${titles.join("; ")}`);
    assert.ok(titles.includes(`robot-army: demo/widgets#${issue} done (item ${issue})`), `the webhook heard #${issue} was done: ${titles.join("; ")}`);
    assert.match(out, `notified: demo/widgets#${issue} done (item ${issue}) (webhook)`);
  }
});

test("the rehearsal names robot-army by its path unless the name on PATH is this checkout's", () =>
  withTempDir((dir) => {
    const bin = join(PROJECT_ROOT, "bin", "robot-army.mjs");
    assert.is(robotArmyHere({ PATH: "/usr/bin:/bin" }), bin);
    const other = join(dir, "other");
    mkdirSync(other);
    symlinkSync("/bin/true", join(other, "robot-army"));
    assert.is(robotArmyHere({ PATH: other }), bin, "another program of that name is not this robot-army");
    const installed = join(dir, "installed");
    mkdirSync(installed);
    symlinkSync(bin, join(installed, "robot-army"));
    assert.is(robotArmyHere({ PATH: `${other.replace("other", "none")}:${installed}` }), "robot-army");
  }));

test.run();
