/**
 * The real Codex CLI (the pinned devDependency) as robot-army's worker, in tmux, its model
 * requests answered by the scripted stand-in for the Responses API on loopback
 * (lib/testing/openai-api.ts): no key, nothing leaves the machine. Each test dispatches
 * through the daemon's own tick and reads what a user would: the item, the worker's
 * registry (its episode, kept by Codex's hooks), and the worker's pane.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { answersTool, lastPrompt, toolResults, userTexts } from "../lib/testing/openai-api.ts";
import type { ModelScript, ModelTurn } from "../lib/testing/openai-api.ts";
import { TASK_POINTER, episodeStatus, killAndResume, sessionOf, textOf, waitWorker } from "../lib/testing/claude-world.ts";
import { codexWorld, obedientCodex } from "../lib/testing/codex-world.ts";
import { forgeTemplate } from "../lib/testing/forge.ts";
import { waitFor } from "../lib/testing/wait.ts";
import { git } from "../lib/testing/fixtures.ts";
import { initialState, runTick } from "../lib/daemon/tick.ts";
import { getItem } from "../lib/work-items/queries.ts";
import { readRegistry } from "../lib/work-items/idleness.ts";
import { readRecord } from "../lib/sessions/records.ts";
import { pause } from "../lib/dispatch/controls.ts";
import { listAnomalies } from "../lib/store/anomalies.ts";
import { FIRST_HOOK_SECONDS } from "../lib/work-items/silent-workers.ts";
import { atTimeAsync } from "../lib/testing/items.ts";
import { run as runShow } from "./show.ts";
import { run as runCleanup } from "./cleanup.ts";
import { archiveDir } from "../lib/cleanup/record-archive.ts";
import { sessionById } from "../lib/work-items/sessions.ts";
import { ANSWERED_WAITING_REASON } from "../lib/work-items/needs-info.ts";

/** The rollouts (Codex's transcripts) a worker's home holds: `.codex/sessions/<y>/<m>/<d>/rollout-*.jsonl`. */
function rolloutsOf(home: string): string[] {
  const root = join(home, ".codex", "sessions");
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith(".jsonl")).map((name) => join(root, name));
}

const template = forgeTemplate();
test.after(() => template.remove());
const withCodex = codexWorld(template);

test("a dispatched Codex reads its task with no permission prompt, commits in its worktree, and its hooks show it busy, then idle", async () => {
  let reading: (turn: ModelTurn) => void = () => {};
  const held = new Promise<ModelTurn>((resolve) => (reading = resolve));
  const script: ModelScript = (request) => {
    if (!request.tools.includes("exec_command")) return { text: "ok" };
    const results = toolResults(request);
    // The answer to the task's read is held back, so the worker is seen busy first; then it commits, and ends its turn.
    if (answersTool(request) && results.length === 1) return held;
    if (answersTool(request) && results.length === 2) return { text: "Committed." };
    return obedientCodex()(request);
  };
  await withCodex(script, async (w) => {
    await runTick(w.deps, initialState());
    const session = await waitFor("item 1's worker", () => sessionOf(w, 1), 30_000);
    const answering = await waitWorker(w, "the task's read to reach the model", () => w.api.requests.find((request) => toolResults(request).length === 1));
    assert.is(await episodeStatus(session), "busy");
    const [read] = toolResults(answering);
    assert.match(read.text, /You are working on GitHub issue demo\/widgets#/, `the read of the task failed: ${read.text}`);
    assert.match(read.text, "robot-army started you with", "the prompt names the hooks Codex was started with");
    // Its commit, in Codex's sandbox: the worktree's git folders outside it were granted.
    reading({ shell: "echo fixed > fix.txt && git add fix.txt && git commit -q -m 'Fix it' && git log --oneline -1" });
    await waitWorker(w, "the worker idle once its turn ended", async () => (await episodeStatus(session)) === "idle");
    const [, commit] = toolResults(w.api.requests.find((request) => toolResults(request).length === 2)!);
    assert.match(commit.text, "Process exited with code 0", commit.text);
    assert.is(git(session.worktree, "log", "-1", "--format=%s").trim(), "Fix it");
    assert.is(getItem(w.store, 1)!.state, "active");
    assert.not.match(await w.pane(), /Would you like to run|Hooks need review|Trust this folder/);
    const shown = await textOf((write) => runShow({ ref: { id: 1 }, includeSimulated: false, json: false }, { config: w.config, store: w.store, sessionRoot: w.deps.sessionRoot, write }));
    assert.match(shown, /    activity: idle for \d+s \(since /);
    const registry = await readRegistry(session, "codex");
    assert.ok(registry.known && registry.agentSession, "Codex's own session id is on the episode");
    assert.match(shown, `${registry.known ? registry.agentSession : ""}`);
    assert.equal(w.api.egress.filter((line) => !/raw\.githubusercontent\.com/.test(line)), [], "nothing else tried to leave the machine");
  });
});

test("a real approval prompt makes the item needs_info in the hook's own words; the owner's yes brings it back", async () => {
  const script: ModelScript = (request) => {
    if (!request.tools.includes("exec_command")) return { text: "ok" };
    const results = toolResults(request);
    if (answersTool(request) && results.length === 1) {
      return { tool: "exec_command", input: { cmd: "touch /etc/robot-army-probe; echo asked", sandbox_permissions: "require_escalated", justification: "Write outside the worktree" } };
    }
    if (answersTool(request) && results.length === 2) return { text: "Done." };
    return obedientCodex()(request);
  };
  await withCodex(script, async (w) => {
    await runTick(w.deps, initialState());
    const session = await waitWorker(w, "item 1's worker", () => sessionOf(w, 1));
    const words = "Codex asks permission to run Bash: touch /etc/robot-army-probe; echo asked";
    await waitWorker(w, "the worker's approval prompt in its registry", async () => {
      const registry = await readRegistry(session, "codex");
      return registry.known && registry.status === "needs_info" && registry.reason === words;
    });
    await runTick(w.deps, initialState());
    assert.equal([getItem(w.store, 1)!.state, getItem(w.store, 1)!.reason], ["needs_info", `worker asks: ${words}`]);
    assert.match(await w.pane(), "Would you like to run the following command?");
    // The owner attaches and declines; Codex tells the model, whose turn then ends.
    await w.press("Escape");
    await waitWorker(w, "the worker idle once its turn ended", async () => (await episodeStatus(session)) === "idle");
    await runTick(w.deps, initialState());
    assert.equal([getItem(w.store, 1)!.state, getItem(w.store, 1)!.reason], ["active", ANSWERED_WAITING_REASON]);
  });
});

test("a killed Codex worker, resumed, keeps its registry: Codex's own session comes back by id and its hooks drive the new attempt's episode", async () => {
  await withCodex(obedientCodex(), async (w) => {
    await runTick(w.deps, initialState());
    const first = await waitWorker(w, "item 1's worker", () => sessionOf(w, 1));
    await waitWorker(w, "the worker idle after reading its task", async () => (await episodeStatus(first)) === "idle");
    const registry = await readRegistry(first, "codex");
    const agentSession = registry.known ? registry.agentSession : undefined;
    assert.ok(agentSession, "Codex's session id is on the episode");
    // Codex writes its rollout a moment after a turn; a crash before that leaves nothing to resume.
    // The answer is in it twice: first as an event for the screen, then as the conversation's own item, which a resume reads back.
    await waitWorker(w, "the worker's turn in its rollout on disk", () => rolloutsOf(w.home).some((file) => readFileSync(file, "utf8").split("\n")
      .some((line) => line.includes('"response_item"') && line.includes('"role":"assistant"') && line.includes("I have read my task."))));
    const second = await killAndResume(w, first);
    const { args } = readRecord(w.deps.sessionRoot, second.id)!;
    assert.is(args[0], "resume");
    assert.is(args.at(-2), agentSession, "the earlier Codex session, by its own id");
    // Told that it was resumed, Codex goes on at once: its hooks open the new attempt's episode with no one typing.
    await waitWorker(w, "the resumed worker's episode open", async () => (await readRegistry(second, "codex")).known);
    await waitWorker(w, "the resumed worker idle after its first turn", async () => (await episodeStatus(second)) === "idle");
    await w.type("go on");
    await waitWorker(w, "the resumed worker idle after the owner's prompt", async () => {
      const now = await readRegistry(second, "codex");
      return now.known && now.status === "idle" && w.api.requests.some((request) => lastPrompt(request) === "go on");
    });
    const after = await readRegistry(second, "codex");
    assert.is(after.known && after.agentSession, agentSession, "codex resume keeps the session id");
    const turn = w.api.requests.filter((request) => lastPrompt(request) === "go on").at(-1)!;
    assert.ok(userTexts(turn).some((text) => TASK_POINTER.test(text)), `the resumed conversation holds the earlier one's first message: ${JSON.stringify(userTexts(turn).map((t) => t.slice(0, 100)))}`);
    assert.match(JSON.stringify(turn.input), "I have read my task.", "and the earlier turn's answer");
  });
});

test("a worker at Codex's folder-trust question is never invisible: past the bound it needs its owner, with the pane's hint, and once answered its hooks run", async () => {
  await withCodex(obedientCodex(), async (w) => {
    await runTick(w.deps, initialState());
    const session = await waitWorker(w, "item 1's worker", () => sessionOf(w, 1));
    await waitWorker(w, "the trust question in the worker's pane", async () => /Trust this folder\?/.test(await w.pane()));
    assert.match((await w.pane()).replace(/\s+/g, " "), "Trusting will apply to the repository root", "Codex's own answer is the clone's");
    const later = new Date(Date.parse(session.started_at) + (FIRST_HOOK_SECONDS + 30) * 1000).toISOString();
    await atTimeAsync(later, () => runTick(w.deps, initialState()));
    const [silent] = listAnomalies(w.store, { open: true, kind: "worker_silent" });
    assert.ok(silent, "a worker_silent anomaly is open");
    assert.match(silent.detail, `its pane shows Codex's folder-trust question: attach and answer it, or record your yes for every worker of the repository with "robot-army trust demo/widgets"`);
    assert.is(await episodeStatus(session), `unknown (no open episode "${session.episode_key}" in ${session.worktree})`, "unknown, never idle");

    // The owner attaches and trusts the folder: Codex goes on, its hooks report, and the anomaly is withdrawn.
    await w.press("Enter");
    await waitWorker(w, "the worker's first hooks", async () => (await readRegistry(session, "codex")).known);
    await atTimeAsync(later, () => runTick(w.deps, initialState()));
    assert.equal(listAnomalies(w.store, { open: true, kind: "worker_silent" }), []);
  }, { trustClone: false });
});

test("a merged pull request retires the Codex worker at once; cleanup reclaims its worktree, the record its SessionEnd hook had written archived", async () => {
  const script: ModelScript = (request) => {
    if (!request.tools.includes("exec_command")) return { text: "ok" };
    const results = toolResults(request);
    if (answersTool(request) && results.length === 1) return { shell: "echo 'widget fixed' > FIXED.md && git add FIXED.md && git commit -q -m 'Fix the widget (#1)'" };
    if (answersTool(request) && results.length === 2) return { text: "Committed; the owner pushes." };
    return obedientCodex()(request);
  };
  await withCodex(script, async (w) => {
    await runTick(w.deps, initialState());
    const session = await waitWorker(w, "item 1's worker", () => sessionOf(w, 1));
    await waitWorker(w, "the worker idle after its commit", async () => (await episodeStatus(session)) === "idle" && w.api.requests.some((r) => toolResults(r).length === 2));
    pause(w.store, { reason: "the test follows item 1 alone" });
    // The owner pushes the worker's branch (a push from Codex's sandbox asks them first), opens the pull request and merges it.
    git(session.worktree, "push", "-q", "-u", "origin", "HEAD");
    const pull = await w.t.owner.rest.pulls.create({ owner: "demo", repo: "widgets", head: session.branch, base: "main", title: "Fix the widget", body: "Closes #1" });
    await w.t.owner.rest.pulls.merge({ owner: "demo", repo: "widgets", pull_number: pull.data.number, merge_method: "merge" });

    await runTick(w.deps, initialState());
    assert.is(getItem(w.store, 1)!.state, "done");
    assert.ok(w.lines().some((line) => line.startsWith(`retired ${session.name} of item 1 (demo/widgets#1): pull request #${pull.data.number} merged, worker idle `)), w.lines().join("\n"));
    assert.equal(sessionById(w.store, session.id)?.end_reason, "retired");
    // Stopped by a signal, Codex runs no SessionEnd hook: the retirement ended its episode, its record written.
    assert.not.ok((await readRegistry(session, "codex")).known, "the episode is closed");

    const report = await textOf((write) => runCleanup({ json: false }, { ...w.deps, write }));
    assert.match(report, "work item 1 (demo/widgets#1): done");
    assert.match(report, `worktree removed; 1 episode record robot-army wrote archived in ${archiveDir(w.deps.stateDir, 1)}; branch deleted`);
    assert.not.ok(existsSync(session.worktree), "the worktree is gone");
  });
});

test.run();
