/**
 * How a worker's life ends, with the real Claude Code CLI (the pinned devDependency) as the
 * worker in tmux and its model requests answered by the scripted stand-in on loopback
 * (scripts/claude-code.test.ts shows how it starts). A merged pull request retires the worker
 * at once and its tab is closed; a closed issue without one keeps it for the quiet period;
 * `cleanup` reclaims done items' worktrees, the record Claude Code's SessionEnd hook left
 * archived first; Claude Code's own exits read as the exit-code table says; and a hook
 * committed to `.claude/settings.json` on the base branch withholds the next start until the
 * owner approves it. Each test drives the daemon's tick itself, as `robot-army run` would.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { answersTool, lastPrompt, toolResults } from "../lib/testing/anthropic-api.ts";
import type { ModelScript } from "../lib/testing/anthropic-api.ts";
import { claudeWorld, episodeStatus, obedientWorker, sessionOf, TASK_POINTER, textOf, waitWorker } from "../lib/testing/claude-world.ts";
import type { ClaudeWorld } from "../lib/testing/claude-world.ts";
import { forgeTemplate } from "../lib/testing/forge.ts";
import { makeBranch } from "../lib/testing/forge-git.ts";
import { commitFile, git } from "../lib/testing/fixtures.ts";
import { atTimeAsync } from "../lib/testing/items.ts";
import { initialState, runTick } from "../lib/daemon/tick.ts";
import type { TickDeps } from "../lib/daemon/tick.ts";
import { getItem } from "../lib/work-items/queries.ts";
import { sessionById } from "../lib/work-items/sessions.ts";
import type { StoredSession } from "../lib/work-items/sessions.ts";
import { readRecord } from "../lib/sessions/records.ts";
import { runCommand } from "../lib/run-command.ts";
import { archiveDir } from "../lib/cleanup/record-archive.ts";
import { pause } from "../lib/dispatch/controls.ts";
import { QUIET_PERIOD_SECONDS } from "../lib/ending/retire.ts";
import { readRegistry } from "../lib/work-items/idleness.ts";
import { listAnomalies } from "../lib/store/anomalies.ts";
import { queryAudit } from "../lib/store/audit.ts";
import { parse } from "../lib/cli.ts";
import { run as runCleanup } from "./cleanup.ts";
import { run as runShow } from "./show.ts";
import { command as onboardCommand, onboardOptions, run as runOnboard } from "./onboard.ts";

const template = forgeTemplate();
test.after(() => template.remove());
const withClaude = claudeWorld(template);

/** What a worker does for a commit of its own and a push: a file named for its issue, committed on its branch, pushed. */
const COMMIT_AND_PUSH = (issue: number) => [
  `echo 'widget fixed for issue ${issue}' > FIXED-${issue}.md`,
  `git add FIXED-${issue}.md`,
  `git commit -m 'Fix the widget (#${issue})'`,
  "git push -u origin HEAD",
];

/**
 * The model of a worker that does its task: it reads the file its first message names, runs
 * each command `commandsFor` gives for its issue with the Bash tool in turn (stopping at one
 * that fails), then says it is done and waits at its prompt.
 */
function workingWorker(commandsFor: (issue: number) => readonly string[]): ModelScript {
  return (request) => {
    if (!request.withTools) return { text: "ok" };
    const results = toolResults(request);
    const pointer = TASK_POINTER.exec(lastPrompt(request));
    if (pointer && !answersTool(request) && results.length === 0) return { tool: "Read", input: { file_path: pointer[1] } };
    if (!answersTool(request)) return { text: "Nothing more to do." };
    const issue = Number(/GitHub issue demo\/widgets#(\d+)/.exec(results[0].text)?.[1]);
    const next = commandsFor(issue)[results.length - 1];
    if (next !== undefined && !results.at(-1)!.isError) return { tool: "Bash", input: { command: next, description: `Run ${next.split(" ").slice(0, 2).join(" ")}` } };
    return { text: "Done: committed and pushed." };
  };
}

/**
 * The owner's home as it is for a worker that commits and pushes: their git identity, and
 * Claude Code's user settings allowing the git commands the work needs. Claude Code's default
 * permission mode here is "auto", whose safety check is a request to Anthropic's own servers
 * that never gets through the stand-in: without these rules the worker stops at "Auto mode
 * can't check actions in this session" on its first `git add`. Allowing them is the owner's
 * choice, made in their own settings, never robot-army's.
 */
function ownerHome(home: string): void {
  writeFileSync(join(home, ".gitconfig"), "[user]\n\tname = Widget Owner\n\temail = owner@widgets.invalid\n");
  mkdirSync(join(home, ".claude"), { recursive: true });
  const allow = ["Bash(git add:*)", "Bash(git commit:*)", "Bash(git push:*)"];
  writeFileSync(join(home, ".claude", "settings.json"), JSON.stringify({ permissions: { allow } }, null, 2) + "\n");
}

/** The windows on the world's tmux server, `<window id> <name>`: none once the server ended with its last one. */
async function windowsOf(w: ClaudeWorld): Promise<string[]> {
  const listed = await runCommand(["tmux", "-L", w.socket, "list-windows", "-a", "-F", "#{window_id} #{window_name}"], process.env);
  return listed.stdout.trim().split("\n").filter(Boolean);
}

/** Types a line into a worker's own window, as its owner attached to it would. */
async function typeInto(w: ClaudeWorld, session: StoredSession, line: string): Promise<void> {
  const window = (await windowsOf(w)).find((row) => row.endsWith(` ${session.name}`))?.split(" ")[0];
  assert.ok(window, `no window named ${session.name}`);
  await runCommand(["tmux", "-L", w.socket, "send-keys", "-t", window, "-l", line], process.env);
  await runCommand(["tmux", "-L", w.socket, "send-keys", "-t", window, "Enter"], process.env);
}

/** The tick's deps with room for `slots` workers of demo/widgets at once. */
function withSlots(w: ClaudeWorld, slots: number): TickDeps {
  return { ...w.deps, config: { ...w.config, repos: { "demo/widgets": { ...w.config.repos["demo/widgets"], max_sessions: slots } } } };
}

/** Ticks until `probe` holds, as a running daemon's passes would see it. */
async function tickUntil<T>(w: ClaudeWorld, what: string, probe: () => T | undefined | null | false, deps: TickDeps = w.deps): Promise<T> {
  return await waitWorker(w, what, async () => {
    await runTick(deps, initialState());
    return probe();
  }, 30_000);
}

/** Waits until `session`'s worker has finished its first turn (its Claude Code idle at its prompt). */
async function idleWorker(w: ClaudeWorld, session: StoredSession, turnDone: () => boolean = () => true): Promise<void> {
  await waitWorker(w, `${session.name} idle after its turn`, async () => (await episodeStatus(session)) === "idle" && turnDone());
}

/** The records archived for an item: the `<started>--<episode id>.md` files Claude Code's SessionEnd hook had robot-army write. */
function archivedOf(w: ClaudeWorld, item: number): string[] {
  const dir = archiveDir(w.deps.stateDir, item);
  return existsSync(dir) ? readdirSync(dir).filter((file) => file.endsWith(".md")) : [];
}

const item = (w: ClaudeWorld, id: number) => getItem(w.store, id)!;

test("without the owner's rules, the worker's first git command stops at auto mode's dialog: the item needs its owner, in Claude Code's words", async () => {
  await withClaude(workingWorker(COMMIT_AND_PUSH), async (w) => {
    await runTick(w.deps, initialState());
    const session = await waitWorker(w, "item 1's worker", () => sessionOf(w, 1), 30_000);
    const words = "Auto mode can't check actions in this session and needs your choice";
    await waitWorker(w, "the worker at auto mode's dialog, in its registry", async () => {
      const registry = await readRegistry(session, "claude");
      return registry.known && registry.status === "needs_info" && registry.reason === words;
    });
    assert.match(await w.pane(), "Auto mode can't check actions in this session");
    await runTick(w.deps, initialState());
    assert.equal([item(w, 1).state, item(w, 1).reason], ["needs_info", `worker asks: ${words}`]);
  });
});

test("a merged pull request retires the worker at once and closes its tab; cleanup reclaims the worktree with its SessionEnd record archived", async () => {
  await withClaude(workingWorker(COMMIT_AND_PUSH), async (w) => {
    ownerHome(w.home);
    await runTick(w.deps, initialState());
    const session = await waitWorker(w, "item 1's worker", () => sessionOf(w, 1), 30_000);
    const turn = () => w.api.requests.find((r) => toolResults(r).length === COMMIT_AND_PUSH(1).length + 1);
    await idleWorker(w, session, () => turn() !== undefined);
    const results = toolResults(turn()!);
    assert.equal(results.filter((r) => r.isError), [], "every command the worker ran succeeded");
    assert.match(results.at(-1)!.text, `[new branch]      HEAD -> ${session.branch}`);
    // No other item takes the slot the retirement frees: this test follows item 1 alone.
    pause(w.store, { reason: "the test follows item 1 alone" });
    assert.equal((await windowsOf(w)).map((row) => row.split(" ")[1]), [session.name]);

    // The owner opens the pull request and merges it; the forge closes the issue its body names, as GitHub does.
    const pull = await w.t.owner.rest.pulls.create({ owner: "demo", repo: "widgets", head: session.branch, base: "main", title: "Fix the widget", body: "Closes #1" });
    await w.t.owner.rest.pulls.merge({ owner: "demo", repo: "widgets", pull_number: pull.data.number, merge_method: "merge" });
    assert.is((await w.t.owner.rest.issues.get({ owner: "demo", repo: "widgets", issue_number: 1 })).data.state, "closed");

    // One pass: the merge seen, the item done, the idle worker retired at once.
    await runTick(w.deps, initialState());
    assert.is(item(w, 1).state, "done");
    assert.ok(w.lines().some((line) => line.startsWith(`retired ${session.name} of item 1 (demo/widgets#1): pull request #${pull.data.number} merged, worker idle `)), w.lines().join("\n"));
    const ended = sessionById(w.store, session.id)!;
    assert.equal([ended.end_reason, ended.ended_at !== null], ["retired", true]);
    // Its tab is closed by the sweep of a pass that finds the window's command ended (never while it runs).
    await tickUntil(w, "the retired worker's tab closed", async () => (await windowsOf(w)).length === 0 || undefined);
    const [closed] = queryAudit(w.store, { kind: "tab.close", item: 1 }).filter((r) => r.phase === "outcome");
    assert.is(closed?.body.result, "closed", "the close is audited");

    // The owner's `robot-army cleanup`: the worktree and branch reclaimed, the SessionEnd record archived first.
    const report = await textOf((write) => runCleanup({ json: false }, { ...w.deps, write }));
    assert.match(report, "work item 1 (demo/widgets#1): done");
    assert.match(report, `worktree removed; 1 episode record robot-army wrote archived in ${archiveDir(w.deps.stateDir, 1)}; branch deleted`);
    assert.not.ok(existsSync(session.worktree), "the worktree is gone");
    assert.is(git(w.config.repos["demo/widgets"].path, "branch", "--list", session.branch), "", "the branch is gone from the clone");
    const [record, ...more] = archivedOf(w, 1);
    assert.equal(more, []);
    assert.match(record, /^[^/]+--[0-9a-f-]{36}\.md$/);
    assert.match(readFileSync(join(archiveDir(w.deps.stateDir, 1), record), "utf8"), "item-1");
  });
});

/** What the worker does with the owner's review: a changelog line for its issue, committed and pushed. */
const ANSWER_REVIEW = [
  "echo 'Widgets can be fixed (#1).' > CHANGELOG-1.md",
  "git add CHANGELOG-1.md",
  "git commit -m 'Add a changelog line, as the review asked (#1)'",
  "git push",
];

test("the owner's review, typed into the idle Claude Code worker, is seen by its prompt hook and answered with a new commit", async () => {
  const first = workingWorker(COMMIT_AND_PUSH);
  const script: ModelScript = (request) => {
    if (!request.withTools || !lastPrompt(request).startsWith("robot-army: feedback came")) return first(request);
    // The review's turn: the file that holds it in full read first, then each command in turn (after the first turn's read and four commands).
    if (!answersTool(request)) return { tool: "Read", input: { file_path: /All of it, in full: the file (\S+\.md)\./.exec(lastPrompt(request))![1] } };
    const done = toolResults(request).length - (COMMIT_AND_PUSH(1).length + 2);
    const next = ANSWER_REVIEW[done];
    if (next !== undefined && !(answersTool(request) && toolResults(request).at(-1)!.isError)) return { tool: "Bash", input: { command: next, description: `Run ${next.split(" ").slice(0, 2).join(" ")}` } };
    return { text: "Done: the changelog line is committed and pushed." };
  };
  await withClaude(script, async (w) => {
    ownerHome(w.home);
    await runTick(w.deps, initialState());
    const session = await waitWorker(w, "item 1's worker", () => sessionOf(w, 1), 30_000);
    await idleWorker(w, session, () => w.api.requests.some((r) => toolResults(r).length === COMMIT_AND_PUSH(1).length + 1));
    pause(w.store, { reason: "the test follows item 1 alone" });
    const pushed = git(session.worktree, "rev-parse", "HEAD");

    // The owner opens the pull request and reviews it: GitHub lets no one request changes on their own, so a comment review.
    const pull = await w.t.owner.rest.pulls.create({ owner: "demo", repo: "widgets", head: session.branch, base: "main", title: "Fix the widget", body: "Closes #1" });
    const review = "Please also add a changelog line.";
    await w.t.owner.rest.pulls.createReview({ owner: "demo", repo: "widgets", pull_number: pull.data.number, event: "COMMENT", body: review });

    // The daemon's pass takes the review and types it into the idle worker, as one line.
    await tickUntil(w, "the review typed into the worker", () => queryAudit(w.store, { kind: "feedback.delivered", item: 1 }).some((r) => r.phase === "outcome" && r.body.ok === true));
    const asked = await waitWorker(w, "the review to reach the model", () => w.api.requests.find((r) => lastPrompt(r).startsWith("robot-army: feedback came")));
    assert.match(lastPrompt(asked), `@owner reviewed pull request #${pull.data.number} with comments: "${review}"`);
    // The file holding it in full is in the item's prompt folder, which Claude Code reads without asking.
    const read = await waitWorker(w, "the feedback file read", () => w.api.requests.map((r) => toolResults(r)[COMMIT_AND_PUSH(1).length + 1]).find(Boolean));
    assert.not.ok(read.isError, read.text);
    assert.match(read.text, `> ${review}`);
    assert.match(read.text, "pullrequestreview-");

    // Claude Code's own prompt hook saw it: the ledger notes robot-army's message in full.
    const ledger = readFileSync(join(session.worktree, ".ai", "local", "state", "ledger.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line));
    const prompts = ledger.filter((e) => e.kind === "prompt" && e.key === session.episode_key);
    assert.ok(prompts.some((e) => e.data.from === "robot-army" && String(e.data.text).includes(review)), JSON.stringify(prompts));

    // The worker answers with a new commit, pushed, and waits at its prompt again.
    await waitWorker(w, "the answering commit pushed", () => git(session.worktree, "log", "-1", "--format=%s") === "Add a changelog line, as the review asked (#1)" &&
      git(join(w.t.dir, "git", "demo", "widgets.git"), "rev-parse", `refs/heads/${session.branch}`) === git(session.worktree, "rev-parse", "HEAD"), 60_000);
    assert.is(git(session.worktree, "rev-parse", "HEAD~1"), pushed, "one new commit on top of what was reviewed");
    await idleWorker(w, session);
    assert.is(item(w, 1).state, "active");
    const shown = await textOf((write) => runShow({ ref: { id: 1 }, includeSimulated: false, json: false }, { config: w.config, store: w.store, sessionRoot: w.deps.sessionRoot, write }));
    assert.match(shown, `@owner reviewed pull request #${pull.data.number} with comments: typed into its worker at `);
  });
});

test("a closed issue without a pull request keeps its idle worker for the quiet period, then retires it", async () => {
  await withClaude(obedientWorker(), async (w) => {
    await runTick(w.deps, initialState());
    const session = await waitWorker(w, "item 1's worker", () => sessionOf(w, 1), 30_000);
    // Idle after its turn (the model answered the task's Read), not at its prompt before the task was submitted:
    // on a busy machine SessionStart's idle comes well before the prompt's busy.
    await idleWorker(w, session, () => w.api.requests.some((r) => r.withTools && toolResults(r).length === 1));
    pause(w.store, { reason: "the test follows item 1 alone" });
    await w.t.owner.rest.issues.update({ owner: "demo", repo: "widgets", issue_number: 1, state: "closed" });

    await runTick(w.deps, initialState());
    assert.is(item(w, 1).state, "done");
    assert.ok(sessionOf(w, 1), "kept: no merged pull request, and not idle for the quiet period yet");
    const registry = await readRegistry(session, "claude");
    assert.ok(registry.known && registry.status === "idle", JSON.stringify(registry));
    const idleSince = Date.parse(registry.changedAt);

    // A minute short of the quiet period: still kept, and its worker still at its prompt.
    await atTimeAsync(new Date(idleSince + (QUIET_PERIOD_SECONDS - 60) * 1000).toISOString(), () => runTick(w.deps, initialState()));
    assert.ok(sessionOf(w, 1), "kept until the quiet period has passed");
    assert.equal(listAnomalies(w.store, { open: true, kind: "orphan_session" }), [], "an idle worker waiting out the quiet period is no orphan");
    const pid = readRecord(w.deps.sessionRoot, session.id)!.childPid!;
    assert.not.throws(() => process.kill(pid, 0), "Claude Code still runs");

    await atTimeAsync(new Date(idleSince + (QUIET_PERIOD_SECONDS + 60) * 1000).toISOString(), () => runTick(w.deps, initialState()));
    const retired = w.lines().filter((line) => line.startsWith("retired "));
    assert.equal(retired, [`retired ${session.name} of item 1 (demo/widgets#1): no merged pull request, worker idle ${QUIET_PERIOD_SECONDS + 60} s (quiet period 30 min)`]);
    assert.is(sessionById(w.store, session.id)!.end_reason, "retired");
    const [retire] = queryAudit(w.store, { kind: "session.retire", item: 1 }).filter((r) => r.phase === "intent");
    assert.is(retire.body.signal, "quiet_period");
    assert.throws(() => process.kill(pid, 0), "Claude Code is stopped");
  });
});

test("cleanup reclaims the worktree of every done item: one merged, one squashed with its branch deleted, each record archived", async () => {
  await withClaude(workingWorker(COMMIT_AND_PUSH), async (w) => {
    ownerHome(w.home);
    const two = withSlots(w, 2);
    await runTick(two, initialState());
    const first = await waitWorker(w, "item 1's worker", () => sessionOf(w, 1), 30_000);
    const second = await waitWorker(w, "item 2's worker", () => sessionOf(w, 2), 30_000);
    const pushed = (session: StoredSession) => () => w.api.requests.some((r) => toolResults(r).some((result) => result.text.includes(`HEAD -> ${session.branch}`)));
    await idleWorker(w, first, pushed(first));
    await idleWorker(w, second, pushed(second));
    pause(w.store, { reason: "the test follows items 1 and 2 alone" });

    // The owner merges the first with a merge commit, squashes the second and deletes its branch, as GitHub's button does.
    const open = async (session: StoredSession, issue: number) =>
      (await w.t.owner.rest.pulls.create({ owner: "demo", repo: "widgets", head: session.branch, base: "main", title: `Fix #${issue}`, body: `Closes #${issue}` })).data.number;
    const merged = await open(first, 1);
    await w.t.owner.rest.pulls.merge({ owner: "demo", repo: "widgets", pull_number: merged, merge_method: "merge" });
    const squashed = await open(second, 2);
    await w.t.owner.rest.pulls.merge({ owner: "demo", repo: "widgets", pull_number: squashed, merge_method: "squash" });
    await w.t.owner.rest.git.deleteRef({ owner: "demo", repo: "widgets", ref: `heads/${second.branch}` });

    await runTick(two, initialState());
    assert.equal([item(w, 1).state, item(w, 2).state], ["done", "done"]);
    assert.equal([sessionById(w.store, first.id)!.end_reason, sessionById(w.store, second.id)!.end_reason], ["retired", "retired"]);

    const report = await textOf((write) => runCleanup({ json: false }, { ...two, write }));
    assert.match(report, "work item 1 (demo/widgets#1): done");
    assert.match(report, "work item 2 (demo/widgets#2): done");
    assert.match(report, "2 item(s): 2 done, 0 branch retained, 0 retained, 0 skipped");
    for (const [session, id] of [[first, 1], [second, 2]] as const) {
      assert.not.ok(existsSync(session.worktree), `item ${id}'s worktree is gone`);
      assert.is(archivedOf(w, id).length, 1, `item ${id}'s SessionEnd record is archived`);
    }
    assert.match(report, "branch deleted (every commit of it is in origin's main");
    assert.match(report, new RegExp(`branch deleted \\([^)]*refs/pull/${squashed}/head`), "the squashed branch is proven by its pull request's head on the forge");
    assert.match(await textOf((write) => runCleanup({ json: false }, { ...two, write })), "nothing to clean up");
  });
});

test("Claude Code's own exits read as the exit-code table says: /exit with no pull request, /exit with one open, and SIGTERM", async () => {
  await withClaude(obedientWorker(), async (w) => {
    const three = withSlots(w, 3);
    await runTick(three, initialState());
    const sessions = await waitWorker(w, "three workers", () => [1, 2, 3].map((id) => sessionOf(w, id)).every(Boolean) && [1, 2, 3].map((id) => sessionOf(w, id)!), 30_000);
    for (const session of sessions) await idleWorker(w, session);
    const [none, reviewed, signalled] = sessions;

    // Item 2's work is on the forge with its pull request open, and a pass has seen it.
    makeBranch(join(w.t.dir, "git", "demo", "widgets.git"), reviewed.branch, "FIXED-2.md");
    const pull = (await w.t.owner.rest.pulls.create({ owner: "demo", repo: "widgets", head: reviewed.branch, base: "main", title: "Fix #2", body: "Closes #2" })).data.number;
    pause(w.store, { reason: "no worker starts in the slots these exits free" });
    await runTick(three, initialState());

    // The owner, attached, ends two Claude Codes with /exit (exit 0); the third is sent SIGTERM.
    await typeInto(w, none, "/exit");
    await typeInto(w, reviewed, "/exit");
    process.kill(readRecord(w.deps.sessionRoot, signalled.id)!.childPid!, "SIGTERM");
    await tickUntil(w, "the three exits seen", () => [1, 2, 3].every((id) => item(w, id).state !== "active"), three);

    assert.equal([item(w, 1).state, item(w, 1).reason], ["interrupted", "worker exited 0 with no pull request"]);
    assert.equal([item(w, 2).state, item(w, 2).reason], ["awaiting_review", `worker exited 0; pull request #${pull} is open`]);
    // Claude Code catches SIGTERM and exits 143 (128 + 15): the table reads the signal from the code.
    assert.equal([item(w, 3).state, item(w, 3).reason], ["interrupted", "worker ended by SIGTERM (exit code 143)"]);
    assert.equal([sessionById(w.store, signalled.id)!.end_reason, sessionById(w.store, signalled.id)!.exit_code], ["exited", 143]);
    assert.equal([sessionById(w.store, none.id)!.end_reason, sessionById(w.store, none.id)!.exit_code], ["exited", 0]);
    assert.equal([sessionById(w.store, reviewed.id)!.end_reason, sessionById(w.store, reviewed.id)!.exit_code], ["exited", 0]);
  });
});

/** A project settings file with a SessionStart hook that leaves `marker` behind when Claude Code runs it. */
const hookedSettings = (marker: string) => `${JSON.stringify({ hooks: { SessionStart: [{ hooks: [{ type: "command", command: `touch ${marker}` }] }] } }, null, 2)}\n`;

test("a hook committed to .claude/settings.json on the base branch withholds the next start, naming the file; once approved, Claude Code runs it", async () => {
  await withClaude(obedientWorker(), async (w) => {
    await runTick(w.deps, initialState());
    const first = await waitWorker(w, "item 1's worker", () => sessionOf(w, 1), 30_000);
    await idleWorker(w, first);

    // Someone with push access lands a hook on demo/widgets' main.
    const marker = join(w.t.tmp, "the-committed-hook-ran");
    const pusher = join(w.t.tmp, "pusher");
    git(w.t.tmp, "clone", "--quiet", join(w.t.dir, "git", "demo", "widgets.git"), pusher);
    const commit = commitFile(pusher, ".claude/settings.json", hookedSettings(marker), "Add a session hook");
    git(pusher, "push", "--quiet", "origin", "HEAD:main");

    // A second slot is free, and item 2 is next: it is withheld.
    const two = withSlots(w, 2);
    await runTick(two, initialState());
    assert.is(item(w, 2).state, "ready");
    assert.is(sessionOf(w, 2), undefined);
    const [anomaly, ...more] = listAnomalies(w.store, { open: true });
    assert.equal(more, []);
    assert.equal([anomaly.kind, anomaly.repo], ["agent_files_changed", "demo/widgets"]);
    assert.match(anomaly.detail, ".claude/settings.json added");
    assert.ok(w.lines().some((line) => line.includes(`repository demo/widgets needs reapproval (.claude/settings.json added, on origin/main at ${commit})`)), w.lines().join("\n"));
    assert.not.ok(existsSync(marker), "no Claude Code ran the hook");
    assert.is(sessionOf(w, 1)!.id, first.id, "the worker already running goes on");

    // The owner reviews and approves; the next pass starts item 2, and its Claude Code runs the approved hook.
    const approved = await textOf((write) =>
      runOnboard(onboardOptions(parse(onboardCommand, ["demo/widgets", "--reapprove"])), { config: w.config, store: w.store, github: w.deps.github, write }));
    assert.match(approved, /^reapproved {2}demo\/widgets: \.claude\/settings\.json added$/m);
    await runTick(two, initialState());
    const second = await waitWorker(w, "item 2's worker", () => sessionOf(w, 2), 30_000);
    await waitWorker(w, "the committed hook run by item 2's Claude Code", () => existsSync(marker));
    await idleWorker(w, second);
  });
});

test.run();
