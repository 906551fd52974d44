// The demo worker end to end: a real clone of a sandbox forge's bare repository, the real
// robot-army binary for the journal, real git pushes and a pull request over real HTTP.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import type { EffectLevel } from "../lib/config.ts";
import { composePrompt, writePromptFile } from "../lib/dispatch/prompt.ts";
import { git, signalChild } from "../lib/testing/fixtures.ts";
import { forgeTemplate } from "../lib/testing/forge.ts";
import type { TestForge } from "../lib/testing/forge.ts";
import { PROJECT_ROOT, runtimeArgv } from "../lib/runtime.ts";
import { PassThrough } from "node:stream";
import { waitFor } from "../lib/testing/wait.ts";
import { run } from "./demo-worker.ts";

// Seeded: #1..#3 labelled by owner; #1 is "Add a --verbose flag to the widget builder".
const template = forgeTemplate();
test.after(() => template.remove());

const BRANCH = "robot-army/issue-1-add-a-verbose-flag-to-the-widget-builder";
const KEY = "item-12";

/** A clone of the forge's repository on the item's branch, and its prompt file as dispatch writes it at `level`. */
function prepare(t: TestForge, level: EffectLevel = "live"): { clone: string; env: Record<string, string> } {
  const clone = join(t.tmp, "clone");
  git(t.tmp, "clone", "--quiet", t.seeded.repository.clone_url, clone);
  git(clone, "config", "user.name", "Robot Army Test");
  git(clone, "config", "user.email", "test@robot-army.invalid");
  git(clone, "switch", "--quiet", "-c", BRANCH);
  const promptFile = writePromptFile(join(t.tmp, "session"), composePrompt({
    item: 12, repo: "demo/widgets", issue: 1, title: "Add a --verbose flag to the widget builder",
    body: "Seeded work.", branch: BRANCH, worktree: clone, episodeKey: KEY, words: { editedBy: [], held: null },
    level, instructions: { base: "main", commit: git(clone, "rev-parse", "HEAD"), files: [] },
  }));
  return {
    clone,
    env: {
      RA_PROMPT_FILE: promptFile,
      RA_REPO: "demo/widgets",
      RA_GITHUB_API: t.forge.url,
      RA_GITHUB_TOKEN_FILE: t.seeded.users[0].token_file,
    },
  };
}

/** Starts the demo worker in `cwd`; `lines` resolves when stdout holds the text. */
function startWorker(cwd: string, env: Record<string, string>, ...args: string[]) {
  const [command, ...rest] = runtimeArgv(join(PROJECT_ROOT, "scripts", "demo-worker.ts"));
  const child = spawn(command, [...rest, ...args], { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  const waiting: Array<{ text: string; resolve: () => void }> = [];
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk;
    for (const w of waiting) if (stdout.includes(w.text)) w.resolve();
  });
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return {
    exited,
    output: () => ({ stdout, stderr }),
    printed: (text: string) => new Promise<void>((resolve, reject) => {
      if (stdout.includes(text)) return resolve();
      waiting.push({ text, resolve });
      exited.then(() => reject(new Error(`The worker exited without printing "${text}": ${stdout}${stderr}`)));
    }),
    signal: (name: NodeJS.Signals) => signalChild(child, name),
  };
}

/** The one record `episode end` wrote, its front matter parsed. */
function record(clone: string): Record<string, unknown> {
  const dir = join(clone, ".ai/repo/sessions");
  const files = readdirSync(dir);
  assert.is(files.length, 1, `one record in ${dir}`);
  const match = /^---\n([\s\S]*?)\n---\n/.exec(readFileSync(join(dir, files[0]), "utf8"));
  return parse(match![1]);
}

function ledger(clone: string): Array<{ kind: string; key: string; data: Record<string, unknown> }> {
  return readFileSync(join(clone, ".ai/local/state/ledger.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line));
}

test("--once: a pushed branch, an open pull request closing #1, ledger notes and an episode record", () =>
  template.use(async (t) => {
    const { clone, env } = prepare(t);
    const worker = startWorker(clone, env, "--once");
    assert.is(await worker.exited, 0, worker.output().stderr);
    const { stdout, stderr } = worker.output();
    assert.is(stderr, "");
    const lines = stdout.trimEnd().split("\n");
    assert.equal(lines.map((line) => line.replace(/[0-9a-f]{7,}/, "SHA").replace(/#\d+: \S+$/, "#N: URL")), [
      `demo worker for work item 12: demo/widgets#1 on ${BRANCH}`,
      `episode started (key ${KEY})`,
      "busy",
      "wrote notes/issue-1.md",
      `committed SHA on ${BRANCH}`,
      `pushed ${BRANCH} to origin`,
      "opened pull request #N: URL",
      "idle",
      "episode ended (outcome done)",
      `committed and pushed the episode's record on ${BRANCH}`,
    ]);
    // The record is committed and pushed too: the worktree is left clean, nothing exists only there.
    assert.is(git(clone, "status", "--porcelain", "--untracked-files=all"), "");
    assert.match(git(clone, "log", "-1", "--format=%s"), "Record the episode of issue #1");
    const head = git(clone, "rev-parse", "HEAD");
    assert.is(git(t.seeded.repository.clone_url, "rev-parse", `refs/heads/${BRANCH}`), head, "the branch is pushed to the forge's bare repository");
    assert.is(git(clone, "rev-parse", "--abbrev-ref", "@{upstream}"), `origin/${BRANCH}`, "pushed with -u");
    assert.match(git(clone, "show", "HEAD:notes/issue-1.md"), "# demo/widgets#1: Add a --verbose flag to the widget builder");

    const pulls = (await t.owner.rest.pulls.list({ owner: "demo", repo: "widgets", state: "open" })).data;
    assert.is(pulls.length, 1);
    assert.is(pulls[0].head.ref, BRANCH);
    assert.is(pulls[0].head.sha, head, "the pull request's head is the pushed record commit");
    assert.is(pulls[0].base.ref, "main");
    assert.match(pulls[0].body ?? "", /^Closes #1\n/);
    assert.match(stdout, `opened pull request #${pulls[0].number}: ${pulls[0].html_url}\n`);

    const done = record(clone);
    assert.is(done.key, KEY);
    assert.is(done.outcome, "done");
    const events = ledger(clone);
    assert.equal(events.map((e) => e.kind), [
      "episode.start", "episode.busy", "note", "note", "note", "note", "note", "episode.idle", "episode.end",
    ]);
    const notes = events.filter((e) => e.kind === "note");
    assert.equal(notes.map((e) => String(e.data.text).replace(/[0-9a-f]{7,}/, "SHA").replace(/#\d+: \S+$/, "#N")), [
      "busy", "wrote notes/issue-1.md", `committed SHA on ${BRANCH}`, `pushed ${BRANCH} to origin`, "opened pull request #N",
    ]);
    assert.is(notes[4].data.pull_request, pulls[0].number);
    assert.ok(notes.every((e) => e.key === KEY));
    assert.is(git(clone, "status", "--porcelain", "--untracked-files=no"), "", "nothing uncommitted but the record");
  }));

test("without --once it waits at its prompt until SIGTERM, then ends the episode done; run again and stopped by SIGINT, it finds its pull request open", () =>
  template.use(async (t) => {
    const { clone, env } = prepare(t);
    const worker = startWorker(clone, env);
    await worker.printed("waiting at the prompt (Ctrl-C stops it)\n");
    const open = parse(readFileSync(join(clone, ".ai/local/state/sessions-open", `${KEY}.yaml`), "utf8"));
    assert.is(open.status, "idle");
    worker.signal("SIGTERM");
    assert.is(await worker.exited, 0, worker.output().stderr);
    assert.match(worker.output().stdout, "idle\nwaiting at the prompt (Ctrl-C stops it)\nstopping (SIGTERM)\nepisode ended (outcome done)\n");
    assert.is(record(clone).outcome, "done");
    assert.not.ok(existsSync(join(clone, ".ai/local/state/sessions-open", `${KEY}.yaml`)));

    // In a managed session it names the session, so the way to stop it is a command that works as printed.
    const again = startWorker(clone, { ...env, RA_SESSION_NAME: "ra-widgets-1" });
    await again.printed('waiting at the prompt (Ctrl-C or "robot-army session kill ra-widgets-1" stops it)\n');
    again.signal("SIGINT");
    assert.is(await again.exited, 0, again.output().stderr);
    const { stdout } = again.output();
    assert.match(stdout, `nothing new to commit on ${BRANCH}\n`);
    assert.match(stdout, /found open pull request #\d+: /);
    assert.match(stdout, "stopping (SIGINT)\nepisode ended (outcome done)\n");
    assert.is((await t.owner.rest.pulls.list({ owner: "demo", repo: "widgets", state: "all" })).data.length, 1);
  }));

test("a push that fails is one line on stderr, exit 1, and the episode ended as failed", () =>
  template.use(async (t) => {
    const { clone, env } = prepare(t);
    git(clone, "remote", "remove", "origin");
    const worker = startWorker(clone, env, "--once");
    assert.is(await worker.exited, 1);
    const { stdout, stderr } = worker.output();
    assert.match(stderr, /^demo worker: git push --quiet -u origin HEAD failed: .*origin/);
    assert.is(stderr.trimEnd().split("\n").length, 1, stderr);
    assert.match(stdout, "episode ended (outcome failed)\n");
    assert.not.match(stdout, "pushed");
    assert.is(record(clone).outcome, "failed");
  }));

test("the wrong branch checked out is refused before anything is committed", () =>
  template.use(async (t) => {
    const { clone, env } = prepare(t);
    git(clone, "switch", "--quiet", "main");
    const worker = startWorker(clone, env, "--once");
    assert.is(await worker.exited, 1);
    assert.is(worker.output().stderr, `demo worker: HEAD is on branch "main", not "${BRANCH}" as the prompt says; nothing was committed\n`);
    assert.is(git(clone, "rev-list", "--count", "origin/main..HEAD"), "0");
    assert.is(record(clone).outcome, "failed");
  }));

test("a prompt below live asks for commits only, and the demo worker follows it: no push, no pull request, its episode done", () =>
  template.use(async (t) => {
    const { clone, env } = prepare(t, "no-remote");
    // Nothing remote is needed when the prompt asks for no remote writes.
    const worker = startWorker(clone, { ...env, RA_GITHUB_API: "", RA_GITHUB_TOKEN_FILE: "" }, "--once");
    assert.is(await worker.exited, 0, worker.output().stderr);
    const { stdout, stderr } = worker.output();
    assert.is(stderr, "");
    assert.equal(stdout.trimEnd().split("\n").map((line) => line.replace(/[0-9a-f]{7,}/, "SHA")), [
      `demo worker for work item 12: demo/widgets#1 on ${BRANCH}`,
      `episode started (key ${KEY})`,
      "busy",
      "wrote notes/issue-1.md",
      `committed SHA on ${BRANCH}`,
      `a rehearsal with no remote writes: ${BRANCH} is not pushed and no pull request is opened`,
      "idle",
      "episode ended (outcome done)",
      `committed the episode's record on ${BRANCH}`,
    ]);
    assert.is(git(clone, "status", "--porcelain", "--untracked-files=all"), "", "the worktree is left clean");
    assert.match(git(clone, "show", "HEAD~1:notes/issue-1.md"), "in a rehearsal with no remote\nwrites (nothing pushed, no pull request).");
    assert.is(git(t.seeded.repository.clone_url, "branch", "--list", BRANCH), "", "the branch never reached the forge");
    assert.is((await t.owner.rest.pulls.list({ owner: "demo", repo: "widgets", state: "all" })).data.length, 0);
    assert.is(record(clone).outcome, "done");
  }));

test("at its prompt it takes what is typed a line at a time, notes each in its ledger as a prompt hook would, and answers feedback with a commit", () =>
  template.use(async (t) => {
    const { clone, env } = prepare(t, "no-remote");
    const input = new PassThrough();
    const stop = new AbortController();
    const said: string[] = [];
    const saw = (text: string) => waitFor(`"${text}" printed`, () => said.some((line) => line.includes(text)), 30_000);
    const running = run({ once: false }, { cwd: clone, stop: stop.signal, input, out: (line) => said.push(line), err: (line) => said.push(`ERR ${line}`) }, { ...process.env, ...env });
    await saw("waiting at the prompt");
    input.write("what are you doing?\n");
    await saw("read a prompt of 19 characters; nothing to do");
    const feedback = 'robot-army: feedback came on your work for demo/widgets#1, from its owner, a reviewer they trust, or GitHub. 1) @owner requested changes on pull request #3: "Rename foo." (in full: http://x)';
    input.write(`${feedback}\n`);
    await saw("addressed the feedback: committed");
    stop.abort("SIGTERM");
    assert.is(await running, 0, said.join("\n"));
    assert.equal(ledger(clone).filter((e) => e.kind === "prompt").map((e) => [e.data.from, e.data.text]), [["owner", undefined], ["robot-army", feedback]]);
    assert.is(git(clone, "log", "-1", "--skip=1", "--format=%s"), "Address the feedback on issue #1", "the commit before the episode's record");
    assert.match(git(clone, "show", "HEAD~1:notes/issue-1.md"), '## Feedback addressed\n\nfeedback came on your work for demo/widgets#1');
    assert.not.ok(said.some((line) => line.startsWith("ERR")), said.join("\n"));
  }));

test("missing settings are one line on stderr and exit 1, before any episode is opened", () =>
  template.use(async (t) => {
    const { clone, env } = prepare(t);
    for (const [name, message] of [
      ["RA_PROMPT_FILE", "demo worker: RA_PROMPT_FILE is not set; it names the file holding the worker's prompt\n"],
      ["RA_GITHUB_API", "demo worker: RA_GITHUB_API is not set; it is the API base the pull request is opened on\n"],
      ["RA_GITHUB_TOKEN_FILE", "demo worker: RA_GITHUB_TOKEN_FILE is not set; it names a 0600 file holding the token\n"],
    ]) {
      const worker = startWorker(clone, { ...env, [name]: "" }, "--once");
      assert.is(await worker.exited, 1);
      assert.is(worker.output().stderr, message);
    }
    assert.not.ok(existsSync(join(clone, ".ai")), "no episode was opened");
  }));

test.run();
