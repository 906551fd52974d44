import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { openJournal } from "../episodes/journal.ts";
import { setStatus, startEpisode } from "../episodes/lifecycle.ts";
import { feedbackOf, keepFeedback, waitingFeedback } from "../intake/feedback.ts";
import { appendAudit, queryAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { git } from "../testing/fixtures.ts";
import { atTimeAsync, makeItem, withStore } from "../testing/items.ts";
import { withTmuxWorkers } from "../testing/tmux-workers.ts";
import type { TmuxWorkers } from "../testing/tmux-workers.ts";
import { sleep, waitFor } from "../testing/wait.ts";
import { configFrom } from "../testing/workers.ts";
import { getItem } from "../work-items/queries.ts";
import { endSession, recordSession } from "../work-items/sessions.ts";
import { deliverFeedback, FEEDBACK_PER_MESSAGE } from "./feedback-delivery.ts";
import { feedbackMessage } from "./feedback-message.ts";
import { SEND_LIMIT, unsendable } from "./verbs/send.ts";

const HOST = "testhost";
const T0 = "2026-01-15T10:00:00Z";

/** A reader worker: each line typed at its prompt is appended to `file`. */
const reader = (file: string) => ["sh", "-c", `while IFS= read -r line; do printf '%s\\n' "$line" >> '${file}'; done`];

/** An active item whose worker (a reader) runs in the test's tmux server, with its episode open and `status`. */
async function liveWorker(w: TmuxWorkers, store: Store, issue: number, status: "idle" | "busy") {
  const worktree = join(w.dir, "work");
  if (!existsSync(join(worktree, ".git"))) git(worktree, "init", "--quiet");
  const typed = join(w.dir, `typed-${issue}.txt`);
  const item = makeItem(store, { issue, state: "active" }).id;
  const key = `item-${item}`;
  const launched = await w.launch(item, `ra-widgets-${issue}`, reader(typed), store.path);
  recordSession(store, {
    id: launched.sessionId, item, name: launched.sessionName, host: HOST, launcher: "tmux", marker: `@ra_item=${item}`,
    worktree, branch: `robot-army/issue-${issue}`, started_at: "2026-01-15T09:00:00Z", simulated: false, terminal: launched.terminal, episode_key: key,
  });
  const journal = await openJournal(worktree, { forWrite: true });
  await startEpisode(journal, { key, clientPid: process.pid, now: new Date("2026-01-15T09:00:00Z") });
  await setStatus(journal, { key, status, now: new Date("2026-01-15T09:30:00Z") });
  return { item, key, typed, journal, session: launched.sessionId };
}

function piece(store: Store, item: number, id: number, more: { author?: string; body?: string } = {}) {
  return keepFeedback(store, "demo/widgets", {
    item, finished: false, source: "review", github_id: String(id), pull_request: 13, author: more.author ?? "owner",
    what: "requested changes on pull request #13", body: more.body ?? `Please rename foo to bar (${id})`, url: `http://forge.test/demo/widgets/pull/13#pullrequestreview-${id}`,
    created_at: "2026-01-15T09:40:00Z",
  })!;
}

async function deps(w: TmuxWorkers, store: Store) {
  return { store, sessionRoot: w.sessionRoot, stateDir: join(w.dir, "state"), host: HOST, terminalLauncher: w.terminalLauncher, config: await configFrom('[worker]\nbinary = "sh"\nprofile = "generic"\n') };
}

/** The file a typed line says holds its feedback in full, read. */
function fileOf(line: string): string {
  const path = / All of it, in full: the file (\S+\.md)\. /.exec(line)?.[1];
  assert.ok(path, `no file named in: ${line}`);
  return readFileSync(path!, "utf8");
}

const lines = (file: string) => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : []);

test("feedback waits while its worker is at work, is typed once it is idle as one quoted line, audited with its GitHub id, and never typed twice", () => withTmuxWorkers(async (w) => {
  await withStore(async (store) => {
    // The generic profile keeps no registry: a demo profile's episode is what is read.
    const d = { ...(await deps(w, store)), config: await configFrom('[worker]\nbinary = "demo-worker"\n') };
    const worker = await liveWorker(w, store, 1, "busy");
    const first = piece(store, worker.item, 45, { body: 'Please rename foo to bar.\nAnd "quote" this; $(rm -rf /)\u001b[31m' });

    const busy = await atTimeAsync(T0, () => deliverFeedback(d));
    assert.equal({ messages: busy.messages, held: busy.held }, { messages: 0, held: 1 });
    await sleep(500);
    assert.equal(lines(worker.typed), [], "nothing is typed into a busy worker");
    assert.is(waitingFeedback(store, worker.item).length, 1);

    await setStatus(worker.journal, { key: worker.key, status: "idle", now: new Date("2026-01-15T09:50:00Z") });
    const idle = await atTimeAsync(T0, () => deliverFeedback(d));
    assert.equal({ messages: idle.messages, pieces: idle.pieces }, { messages: 1, pieces: 1 });
    const got = await waitFor("the feedback typed", () => lines(worker.typed).length === 1 && lines(worker.typed));
    assert.match(got[0], "@owner requested changes on pull request #13");
    assert.match(got[0], '"Please rename foo to bar. And \\"quote\\" this; $(rm -rf /) [31m"', "its words quoted on one line, the escape's control character dropped");
    // In full in a file of the item's prompt folder, with where it was written.
    const full = fileOf(got[0]);
    assert.match(full, "pullrequestreview-45");
    assert.match(full, "> Please rename foo to bar.\n> And \"quote\" this;");
    const row = feedbackOf(store, worker.item)[0];
    assert.equal([row.id, row.delivered_how, row.delivered_session], [first.id, "typed", worker.session]);
    const audit = queryAudit(store, { kinds: ["feedback.delivered"] });
    assert.equal(audit.map((r) => r.phase), ["intent", "outcome"]);
    assert.equal(audit[0].body.github_ids, ["review:45"]);
    assert.is(audit[1].body.ok, true);

    // Read again by a daemon started again: the store says it was given.
    const again = await atTimeAsync("2026-01-15T10:05:00Z", () => deliverFeedback(d));
    assert.is(again.messages, 0);
    await sleep(400);
    assert.is(lines(worker.typed).length, 1, "never typed twice");
  });
}));

test("a long review reaches the worker five pieces a message, a message at most every minute; a piece whose typing a crash cut short is never typed again", () => withTmuxWorkers(async (w) => {
  await withStore(async (store) => {
    const d = { ...(await deps(w, store)), config: await configFrom('[worker]\nbinary = "demo-worker"\n') };
    const worker = await liveWorker(w, store, 2, "idle");
    const cut = piece(store, worker.item, 100);
    store.statement("UPDATE feedback SET delivery_action = 'cut-short-action' WHERE id = ?").run(cut.id);
    for (let id = 1; id <= 7; id++) piece(store, worker.item, id);

    const first = await atTimeAsync(T0, () => deliverFeedback(d));
    assert.equal({ messages: first.messages, pieces: first.pieces }, { messages: 1, pieces: FEEDBACK_PER_MESSAGE });
    const one = await waitFor("the first message", () => lines(worker.typed).length === 1 && lines(worker.typed)[0]);
    assert.match(one, "2 more pieces will follow");
    assert.not.match(one, "(100)", "the piece cut short is not typed again");

    const soon = await atTimeAsync("2026-01-15T10:00:30Z", () => deliverFeedback(d));
    assert.equal({ messages: soon.messages, held: soon.held }, { messages: 0, held: 1 }, "held: less than a minute since the last");
    const later = await atTimeAsync("2026-01-15T10:01:01Z", () => deliverFeedback(d));
    assert.equal({ messages: later.messages, pieces: later.pieces }, { messages: 1, pieces: 2 });
    await waitFor("the second message", () => lines(worker.typed).length === 2);
    assert.match(lines(worker.typed)[1], "(7)");
    assert.equal(feedbackOf(store, worker.item).filter((f) => f.delivered_how === "typed").length, 7);
    assert.is(feedbackOf(store, worker.item).find((f) => f.id === cut.id)!.delivered_at, null);
  });
}));

test("a claim a crash left before its effect began is released a minute on (nothing was typed); one an intent names is never typed again", () => withTmuxWorkers(async (w) => {
  await withStore(async (store) => {
    const d = { ...(await deps(w, store)), config: await configFrom('[worker]\nbinary = "demo-worker"\n') };
    const worker = await liveWorker(w, store, 5, "idle");
    const orphan = piece(store, worker.item, 21);
    const begun = piece(store, worker.item, 22);
    store.statement("UPDATE feedback SET delivery_action = 'pending 2026-01-15T09:58:00Z 1111' WHERE id = ?").run(orphan.id);
    store.statement("UPDATE feedback SET delivery_action = 'pending 2026-01-15T09:58:00Z 2222' WHERE id = ?").run(begun.id);
    appendAudit(store, { kind: "feedback.delivered", phase: "intent", actionId: "action-2222", item: worker.item, body: { feedback_claim: "pending 2026-01-15T09:58:00Z 2222" } });

    const early = await atTimeAsync("2026-01-15T09:58:30Z", () => deliverFeedback(d));
    assert.is(early.messages, 0, "a claim less than a minute old may be a start still on its way");
    assert.is(feedbackOf(store, worker.item).find((f) => f.id === begun.id)!.delivery_action, "action-2222", "bound to the intent that names it");

    const later = await atTimeAsync(T0, () => deliverFeedback(d));
    assert.equal({ messages: later.messages, pieces: later.pieces }, { messages: 1, pieces: 1 });
    const typed = await waitFor("the released piece typed", () => lines(worker.typed).length === 1 && lines(worker.typed)[0]);
    assert.match(typed, "(21)");
    assert.not.match(typed, "(22)");
  });
}));

test("a failed check of a head since moved on from is shown, never typed; a piece another start has claimed is left to it", () => withTmuxWorkers(async (w) => {
  await withStore(async (store) => {
    const d = { ...(await deps(w, store)), config: await configFrom('[worker]\nbinary = "demo-worker"\n') };
    const worker = await liveWorker(w, store, 6, "idle");
    store.statement(
      `INSERT INTO pull_requests (repo, number, head_branch, head_sha, state, merged_at, updated_at, html_url, seen_at)
       VALUES ('demo/widgets', 13, 'robot-army/issue-6', 'bbbb', 'open', NULL, '2026-01-15T09:40:00Z', 'http://forge.test/demo/widgets/pull/13', '2026-01-15T09:40:00Z')`,
    ).run();
    const check = (sha: string) => keepFeedback(store, "demo/widgets", {
      item: worker.item, finished: false, source: "check", github_id: `${sha}:check:tests`, pull_request: 13, author: "forge-ci",
      what: `check "tests" failed on ${sha} of pull request #13`, body: "", url: `https://ci.example/${sha}`, created_at: "2026-01-15T09:40:00Z",
    })!;
    const old = check("aaaa");
    const current = check("bbbb");
    const taken = piece(store, worker.item, 31);
    store.statement("UPDATE feedback SET delivery_action = 'pending 2026-01-15T09:59:50Z 3333' WHERE id = ?").run(taken.id);
    const pass = await atTimeAsync(T0, () => deliverFeedback(d));
    assert.equal({ messages: pass.messages, pieces: pass.pieces }, { messages: 1, pieces: 1 });
    const typed = await waitFor("the current check typed", () => lines(worker.typed).length === 1 && lines(worker.typed)[0]);
    assert.match(typed, 'check "tests" failed on bbbb of pull request #13');
    assert.not.match(typed, "aaaa");
    assert.not.match(typed, "(31)", "claimed by another start: not typed here");
    const rows = new Map(feedbackOf(store, worker.item).map((f) => [f.id, f.delivered_how]));
    assert.equal([rows.get(old.id), rows.get(current.id), rows.get(taken.id)], ["superseded", "typed", null]);
  });
}));

test("a worker whose session ended has nothing typed (resume gives it); a finished item's feedback is shown and given to no one", () => withTmuxWorkers(async (w) => {
  await withStore(async (store) => {
    const d = { ...(await deps(w, store)), config: await configFrom('[worker]\nbinary = "demo-worker"\n') };
    const worker = await liveWorker(w, store, 3, "idle");
    endSession(store, worker.session, "exited", { code: 0, at: "2026-01-15T09:55:00Z" });
    piece(store, worker.item, 9);
    const ended = await atTimeAsync(T0, () => deliverFeedback(d));
    assert.equal({ messages: ended.messages, held: ended.held }, { messages: 0, held: 1 });
    assert.is(waitingFeedback(store, worker.item).length, 1);

    const done = makeItem(store, { issue: 4, state: "done" }).id;
    piece(store, done, 10);
    await atTimeAsync(T0, () => deliverFeedback(d));
    assert.equal(feedbackOf(store, done).map((f) => f.delivered_how), ["not delivered"]);
    assert.is(getItem(store, done)!.state, "done");
    await sleep(300);
    assert.equal(lines(worker.typed), []);
  });
}));

test("the message is one line that can be typed, within the limit, however many and long the pieces", () => {
  const long = "word ".repeat(2000);
  const pieces = Array.from({ length: 5 }, (_, i) => ({ author: "owner", what: `commented on src/file${i}.ts line ${i}`, body: `${long}\n\u2028\u0085`, url: `https://github.com/o/r/pull/1#discussion_r${i}` }));
  const message = feedbackMessage({ id: 1, repo: "o/r", issue: 7 }, pieces, 3, "/state/prompts/item-1/feedback-x.md");
  assert.is(unsendable(message), null);
  assert.ok([...message].length <= SEND_LIMIT);
  for (let i = 0; i < 5; i++) assert.match(message, `src/file${i}.ts line ${i}`, "every piece is named, however long the words");
  assert.match(message, "All of it, in full: the file /state/prompts/item-1/feedback-x.md.", "and the file that holds them survives the cut");
  assert.not.match(message, "discussion_r", "no link to a page strangers may write on");
  assert.match(message, "3 more pieces");
});

test.run();
