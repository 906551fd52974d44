/**
 * The real Claude Code CLI (the pinned devDependency) as robot-army's worker, in tmux, its
 * model requests answered by the scripted stand-in for the Anthropic API on loopback
 * (lib/testing/anthropic-api.ts): no key, nothing leaves the machine. Each test dispatches
 * through the daemon's own tick and reads what a user would: the item, the worker's
 * registry (its episode, kept by Claude Code's hooks), and the worker's pane.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { join } from "node:path";
import { readFileSync, writeFileSync } from "node:fs";
import { answersTool, lastPrompt, toolResults } from "../lib/testing/anthropic-api.ts";
import type { ModelScript, ModelTurn } from "../lib/testing/anthropic-api.ts";
import { claudeWorld, episodeStatus, killAndResume, obedientWorker, sessionOf, textOf, transcriptsOf, waitWorker } from "../lib/testing/claude-world.ts";
import { forgeTemplate } from "../lib/testing/forge.ts";
import { sleep, waitFor } from "../lib/testing/wait.ts";
import { makeTempDir, removeTempDir } from "../lib/testing/fixtures.ts";
import { initialState, runTick } from "../lib/daemon/tick.ts";
import { getItem } from "../lib/work-items/queries.ts";
import { readRegistry } from "../lib/work-items/idleness.ts";
import { readRecord } from "../lib/sessions/records.ts";
import { listAnomalies } from "../lib/store/anomalies.ts";
import { FIRST_HOOK_SECONDS } from "../lib/work-items/silent-workers.ts";
import { statusReport } from "../lib/reports/status.ts";
import { atTimeAsync } from "../lib/testing/items.ts";
import { run as runStatus } from "./status.ts";
import { run as runShow } from "./show.ts";
import { ANSWERED_WAITING_REASON } from "../lib/work-items/needs-info.ts";
import { sendToWorker } from "../lib/dispatch/verbs/send.ts";

const template = forgeTemplate();
test.after(() => template.remove());
const withClaude = claudeWorld(template);

test("a dispatched Claude Code reads its task with no permission prompt, and its hooks show it busy, then idle", async () => {
  let reading: (turn: ModelTurn) => void = () => {};
  const held = new Promise<ModelTurn>((resolve) => (reading = resolve));
  const script: ModelScript = (request) => {
    // The answer to the task's read is held back, so the worker is seen busy first.
    if (request.withTools && answersTool(request) && toolResults(request).length === 1) return held;
    return obedientWorker()(request);
  };
  await withClaude(script, async (w) => {
    await runTick(w.deps, initialState());
    const session = await waitFor("item 1's worker", () => sessionOf(w, 1), 30_000);
    const answering = await waitWorker(w, "the task's read to reach the model", () => w.api.requests.find((request) => toolResults(request).length === 1));
    assert.is(await episodeStatus(session), "busy");
    const read = toolResults(answering)[0];
    assert.ok(read, "the worker called no tool");
    assert.not.ok(read.isError, `the read of the task failed: ${read.text}`);
    assert.match(read.text, /You are working on GitHub issue demo\/widgets#/);
    reading({ text: "I have read my task." });
    await waitWorker(w, "the worker idle", async () => (await episodeStatus(session)) === "idle");
    assert.is(getItem(w.store, 1)!.state, "active");
    // What the owner reads: the worker idle since when, in status and show, and the names of the variables robot-army set.
    const status = await textOf((write) => runStatus({ includeSimulated: false, json: false }, { config: w.config, store: w.store, stateDir: w.deps.stateDir, write }));
    assert.match(status, new RegExp(`demo/widgets#\\d+  item 1  ${session.name} on testhost: idle for \\d+s \\(since `));
    const shown = await textOf((write) => runShow({ ref: { id: 1 }, includeSimulated: false, json: false }, { config: w.config, store: w.store, sessionRoot: w.deps.sessionRoot, write }));
    assert.match(shown, /    activity: idle for \d+s \(since /);
    const variables = /variables robot-army set: (.*)/.exec(shown)?.[1].split(", ") ?? [];
    assert.ok(variables.includes("RA_EPISODE_KEY") && variables.includes("RA_SESSION_ID"), variables.join(", "));
    assert.not.ok(variables.includes("RA_GITHUB_TOKEN_FILE"), "robot-army's own token is never handed to an agent");
  });
});

test("a killed Claude Code worker, resumed, keeps its registry: its hooks open the new attempt's episode and drive it", async () => {
  await withClaude(obedientWorker(), async (w) => {
    await runTick(w.deps, initialState());
    const first = await waitWorker(w, "item 1's worker", () => sessionOf(w, 1));
    await waitWorker(w, "the worker idle after reading its task", async () => (await episodeStatus(first)) === "idle");
    const record = readRecord(w.deps.sessionRoot, first.id)!;
    assert.ok(record.childPid, "the worker's pid is on record");
    // Claude Code writes its transcript a moment after a turn; a crash before that leaves nothing to resume.
    await waitWorker(w, "the worker's turn in its transcript on disk", () => {
      const file = transcriptsOf(w.home).find((name) => name.endsWith(`/${first.id}.jsonl`));
      return file && readFileSync(join(w.home, ".claude", "projects", file), "utf8").includes("I have read my task.");
    });
    const second = await killAndResume(w, first);
    // Claude Code resumed with --resume <earlier> --fork-session: its hooks report the fork's own start, at its prompt.
    await waitWorker(w, "the resumed worker's episode open and idle", async () => (await episodeStatus(second)) === "idle");
    await w.type("go on");
    await waitWorker(w, "the owner's prompt to reach the model", () => w.api.requests.some((request) => lastPrompt(request) === "go on"));
    await waitWorker(w, "the resumed worker idle again after its turn", async () => {
      const registry = await readRegistry(second, "claude");
      return registry.known && registry.status === "idle" && w.api.requests.some((request) => lastPrompt(request) === "go on");
    });
    const earlier = w.api.requests.filter((request) => lastPrompt(request) === "go on").at(-1)!;
    assert.ok(toolResults(earlier).length >= 1, "the resumed conversation holds the earlier one's read of the task");
  });
});

test("a real permission prompt makes the item needs_info in the hook's own words, and the owner's answer, sent without attaching, brings it back", async () => {
  const outside = join(makeTempDir("robot-army-outside-"), "notes.txt");
  writeFileSync(outside, "notes kept outside the worktree\n");
  const script: ModelScript = (request) => {
    if (request.withTools && answersTool(request) && toolResults(request).length === 1) return { tool: "Read", input: { file_path: outside } };
    if (request.withTools && answersTool(request) && toolResults(request).length === 2) return { text: "Read both." };
    return obedientWorker()(request);
  };
  try {
    await withClaude(script, async (w) => {
      await runTick(w.deps, initialState());
      const session = await waitWorker(w, "item 1's worker", () => sessionOf(w, 1));
      const words = `Claude Code asks permission to use Read: ${outside}`;
      await waitWorker(w, "the worker's permission prompt in its registry", async () => {
        const registry = await readRegistry(session, "claude");
        return registry.known && registry.status === "needs_info" && registry.reason === words;
      });
      await runTick(w.deps, initialState());
      assert.equal([getItem(w.store, 1)!.state, getItem(w.store, 1)!.reason], ["needs_info", `worker asks: ${words}`]);
      assert.match(await w.pane(), "Allow this read outside the working directories?");
      // The owner answers from afar (robot-army send, the item page's text box): the prompt's option, then Enter, typed into its window.
      const sent = await sendToWorker({ store: w.store, sessionRoot: w.deps.sessionRoot, host: w.deps.host }, 1, "4");
      assert.equal([sent.session, sent.launcher, sent.length], [session.name, "tmux", 1]);
      await waitWorker(w, "the read to reach the model", () => w.api.requests.some((request) => toolResults(request).length === 2));
      await waitWorker(w, "the worker idle once its turn ended", async () => (await episodeStatus(session)) === "idle");
      const [, read] = toolResults(w.api.requests.find((request) => toolResults(request).length === 2)!);
      assert.match(read.text, "notes kept outside the worktree");
      await runTick(w.deps, initialState());
      assert.equal([getItem(w.store, 1)!.state, getItem(w.store, 1)!.reason], ["active", ANSWERED_WAITING_REASON]);
    });
  } finally {
    removeTempDir(join(outside, ".."));
  }
});

test("a worker at Claude Code's folder-trust question is never invisible: past the bound it needs its owner, with the pane's hint, and once answered its hooks run", async () => {
  await withClaude(obedientWorker(), async (w) => {
    await runTick(w.deps, initialState());
    const session = await waitWorker(w, "item 1's worker", () => sessionOf(w, 1));
    await waitWorker(w, "the trust question in the worker's pane", async () => /Yes, I trust this folder/.test(await w.pane()));
    assert.equal(listAnomalies(w.store, { open: true, kind: "worker_silent" }), [], "not before the bound: a worker may take a moment to start");
    const later = new Date(Date.parse(session.started_at) + (FIRST_HOOK_SECONDS + 30) * 1000).toISOString();
    await atTimeAsync(later, () => runTick(w.deps, initialState()));
    const [silent] = listAnomalies(w.store, { open: true, kind: "worker_silent" });
    assert.ok(silent, "a worker_silent anomaly is open");
    assert.equal([silent.item, silent.action_id], [1, session.id]);
    assert.match(silent.detail, "is waiting before its first hook");
    assert.match(silent.detail, `its pane shows Claude Code's folder-trust question: attach and answer it, or record your yes for every worker of the repository with "robot-army trust demo/widgets"`);
    assert.match(silent.detail, '"robot-army attach 1" to look');
    assert.ok(statusReport(w.store, w.config, false, w.deps.stateDir).anomalies.some((a) => a.id === silent.id), "status lists it among what needs the owner");
    assert.is(await episodeStatus(session), `unknown (no open episode "${session.episode_key}" in ${session.worktree})`, "unknown, never idle");

    // The owner attaches and trusts the folder: Claude Code starts, its hooks report, and the anomaly is withdrawn.
    // The dialog may draw itself anew as its checks finish, which puts the choice back on "No": the choice is made
    // again until the pane shows it, and confirmed at once.
    await waitWorker(w, "the answer chosen", async () => {
      if (/❯ Yes, I trust this folder/.test(await w.pane())) return true;
      await w.press("Down");
      await sleep(100);
      return false;
    });
    await w.press("Enter");
    await waitWorker(w, "the worker's first hooks", async () => (await readRegistry(session, "claude")).known);
    await atTimeAsync(later, () => runTick(w.deps, initialState()));
    assert.equal(listAnomalies(w.store, { open: true, kind: "worker_silent" }), []);
  }, { trustClone: false });
});

test.run();
