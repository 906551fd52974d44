import { test } from "uvu";
import * as assert from "uvu/assert";
import { join } from "node:path";
import { parse } from "../lib/cli.ts";
import type { Config } from "../lib/config.ts";
import { PreconditionError, UsageError } from "../lib/errors.ts";
import { withTempDir } from "../lib/testing/fixtures.ts";
import { atTime, configWithRepos, interruptedItem, makeItem, withStore } from "../lib/testing/items.ts";
import { appendAudit } from "../lib/store/audit.ts";
import { openExistingStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { transition } from "../lib/work-items/transition.ts";
import { recordSession } from "../lib/work-items/sessions.ts";
import { approveWords, recordTrust, wordsHash } from "../lib/intake/issue-trust.ts";
import { withCleanupWorld } from "../lib/testing/cleanup-world.ts";
import { applyHook } from "../lib/episodes/hook.ts";
import { openJournal } from "../lib/episodes/journal.ts";
import { cleanupItem } from "../lib/cleanup/cleanup.ts";
import { endSession, sessionsOf } from "../lib/work-items/sessions.ts";
import { command, run, showOptions } from "./show.ts";
import { writeFileSync } from "node:fs";
import { git, originCloneTemplate } from "../lib/testing/fixtures.ts";

const repos = originCloneTemplate();
test.after(() => repos.remove());

async function show(store: Store | undefined, ...argv: string[]): Promise<string> {
  return await showWith(await configWithRepos({ "demo/widgets": 0 }), store, ...argv);
}

async function showWith(config: Config, store: Store | undefined, ...argv: string[]): Promise<string> {
  let text = "";
  await run(showOptions(parse(command, argv)), { config, store, write: (chunk) => (text += chunk) });
  return text;
}

test("show's trust line: a held item's words with their sha256 and the approve command; after approval, who changed them", () =>
  withStore(async (store) => {
    const item = makeItem(store, { issue: 7, title: "Fix the widget" });
    const base = await configWithRepos({ "demo/widgets": 0 });
    const config = { ...base, github: { ...base.github, author: "owner" } };
    const changed = { labelledBy: "owner", editedBy: ["eve"], renamedBy: ["mallory"], title: item.title, body: item.body };
    recordTrust(store, item, changed, { author: "owner", label: "robot-army" });
    const short = wordsHash(item).slice(0, 12);
    assert.match(await showWith(config, store, "1"),
      `trust   : held for you: its title was changed by mallory and its body edited by eve; "robot-army approve 1" after reading it; title and body sha256 ${short}: "robot-army approve 1 --sha256 ${short}"\n`);
    assert.equal(JSON.parse(await showWith(config, store, "1", "--json")).trust.approve, `robot-army approve 1 --sha256 ${short}`);
    approveWords(store, item, item, changed);
    assert.match(await showWith(config, store, "1"), "trust   : changed by mallory, eve; you approved the title and body as they read at ");
  }));

function refused(fn: () => Promise<unknown>, pattern: RegExp) {
  return fn().then(
    () => assert.unreachable("expected a refusal"),
    (error: unknown) => {
      assert.instance(error, PreconditionError);
      assert.is((error as PreconditionError).exitCode, 3);
      assert.match((error as Error).message, pattern);
    },
  );
}

test("show by id prints the issue, the state and every state change from the audit log", () =>
  withStore(async (store) => {
    makeItem(store, { issue: 7, title: "Fix the widget", at: "2026-01-15T08:00:00Z" });
    const text = await show(store, "1");
    assert.is(text, [
      "item    : 1",
      'issue   : demo/widgets#7 "Fix the widget" (open, updated 2026-01-15T08:00:00Z)',
      "author  : owner",
      "url     : https://github.com/demo/widgets/issues/7",
      "labels  : robot-army",
      "state   : ready (repository onboarded), since 2026-01-15T08:00:00Z",
      "history : 2 state changes",
      "  2026-01-15T08:00:00Z  (new) -> discovered  labelled by its author",
      "  2026-01-15T08:00:00Z  discovered -> ready  repository onboarded",
      "sessions : none",
      "pull requests : not checked",
      "cleanup : not decided",
      "",
    ].join("\n"));
  }));

test("show by owner/name#N finds the live item of the issue, else its latest", () =>
  withStore(async (store) => {
    const first = makeItem(store, { issue: 7, state: "abandoned" });
    assert.match(await show(store, "demo/widgets#7"), `item    : ${first.id}\n`);
    const second = makeItem(store, { issue: 7 });
    assert.match(await show(store, "demo/widgets#7"), `item    : ${second.id}\n`);
    await refused(() => show(store, "demo/widgets#8"), /^No work item for demo\/widgets#8; "robot-army status" lists them$/);
  }));

test("a failed item has a failure line with its reason, and the failure in its history", () =>
  withStore(async (store) => {
    makeItem(store, { issue: 3, state: "failed", at: "2026-01-15T09:00:00Z" });
    const text = await show(store, "demo/widgets#3");
    assert.match(text, "state   : failed, since 2026-01-15T09:00:00Z\n");
    assert.match(text, "\nfailure : worktree could not be made: disk full\n");
    assert.match(text, "  2026-01-15T09:00:00Z  dispatching -> failed  worktree could not be made: disk full\n");
    const json = JSON.parse(await show(store, "1", "--json"));
    assert.is(json.failure, "worktree could not be made: disk full");
    assert.equal(json.history.map((h: { from: string | null; to: string }) => `${h.from}->${h.to}`), ["null->discovered", "discovered->ready", "ready->dispatching", "dispatching->failed"]);
    assert.equal([json.sessions, json.pull_requests, json.cleanup], [[], "not checked", null]);
  }));

test("an item whose worker waits for you shows the question, when it was asked, and attach to answer it; --json has them", () =>
  withStore(async (store) => {
    const item = makeItem(store, { issue: 3, state: "active", at: "2026-01-15T09:00:00Z" });
    atTime("2026-01-15T09:30:00Z", () => transition(store, item.id, "needs_info", { reason: "worker asks: which database?" }));
    const text = await show(store, String(item.id));
    assert.match(text, "state   : needs_info (worker asks: which database?), since 2026-01-15T09:30:00Z\n");
    assert.match(text, `\nasks    : which database?, asked 2026-01-15T09:30:00Z; to answer: robot-army attach ${item.id}\n`);
    const json = JSON.parse(await show(store, String(item.id), "--json"));
    assert.equal(json.needs_info, { question: "which database?", asked_at: "2026-01-15T09:30:00Z", answer: `robot-army attach ${item.id}` });
    atTime("2026-01-15T09:40:00Z", () => transition(store, item.id, "active", { reason: "the worker is at work again" }));
    assert.not.match(await show(store, String(item.id)), "asks    :");
    assert.is(JSON.parse(await show(store, String(item.id), "--json")).needs_info, null);
  }));

test("no failure line unless the item failed; later moves join the history", () =>
  withStore(async (store) => {
    const item = makeItem(store, { issue: 3, state: "failed" });
    atTime("2026-01-15T09:30:00Z", () => transition(store, item.id, "ready", { reason: "owner retried" }));
    const text = await show(store, String(item.id));
    assert.not.match(text, "failure :");
    assert.match(text, "history : 5 state changes");
    assert.match(text, "  2026-01-15T09:30:00Z  failed -> ready  owner retried\n");
  }));

test("show lists the item's pull requests: merged and when, open, closed unmerged, with the head's short sha; none once GitHub answered; not checked before", () =>
  withStore(async (store) => {
    const item = makeItem(store, { issue: 7, state: "active" });
    for (const [n, branch] of ["robot-army/issue-7-a", "robot-army/issue-7-b"].entries()) {
      recordSession(store, {
        id: `s${n}`, item: item.id, name: "ra-widgets-7", host: "here", launcher: "process", marker: "", worktree: "/w", branch,
        started_at: "2026-01-15T10:00:00Z", simulated: false,
      });
    }
    const other = makeItem(store, { issue: 8, state: "active" });
    recordSession(store, { id: "s9", item: other.id, name: "ra-widgets-8", host: "here", launcher: "process", marker: "", worktree: "/w8", branch: "robot-army/issue-8", started_at: "2026-01-15T10:00:00Z", simulated: false });
    assert.match(await show(store, "1"), "\npull requests : not checked\n");
    // What a refresh writes (lib/intake/pull-requests.test.ts reads them from the forge).
    const pull = store.statement("INSERT INTO pull_requests (repo, number, head_branch, head_sha, state, merged_at, updated_at, html_url, seen_at) VALUES ('demo/widgets', ?, ?, ?, ?, ?, ?, ?, '2026-01-16T00:00:00Z')");
    pull.run(6, "robot-army/issue-7-a", "a".repeat(40), "closed", "2026-01-15T12:00:00Z", "2026-01-15T12:00:00Z", "https://github.com/demo/widgets/pull/6");
    pull.run(9, "robot-army/issue-7-b", "b".repeat(40), "open", null, "2026-01-15T13:00:00Z", "https://github.com/demo/widgets/pull/9");
    pull.run(11, "robot-army/issue-7-b", "c".repeat(40), "closed", null, "2026-01-15T14:00:00Z", "https://github.com/demo/widgets/pull/11");
    store.statement("INSERT INTO pull_request_refreshes VALUES ('demo/widgets', '2026-01-16T00:00:00Z')").run();
    const text = await show(store, "1");
    assert.match(text, [
      "pull requests : 3",
      "  #6  merged 2026-01-15T12:00:00Z  head aaaaaaa (robot-army/issue-7-a)  https://github.com/demo/widgets/pull/6",
      "  #9  open  head bbbbbbb (robot-army/issue-7-b)  https://github.com/demo/widgets/pull/9",
      "  #11  closed unmerged  head ccccccc (robot-army/issue-7-b)  https://github.com/demo/widgets/pull/11",
      "cleanup : not decided",
    ].join("\n"));
    const json = JSON.parse(await show(store, "1", "--json"));
    assert.equal(json.pull_requests.map((p: { number: number; merged_at: string | null }) => [p.number, p.merged_at]), [[6, "2026-01-15T12:00:00Z"], [9, null], [11, null]]);
    assert.match(await show(store, "2"), "\npull requests : none\n");
    assert.equal(JSON.parse(await show(store, "2", "--json")).pull_requests, []);
  }));

test("an unknown id, or any id with no database, is exit 3", () =>
  withTempDir(async (dir) => {
    await refused(async () => show(await openExistingStore(join(dir, "state")), "99"), /^No work item 99; "robot-army status" lists them$/);
    await withStore(async (store) => refused(() => show(store, "99"), /^No work item 99/));
  }));

test("by issue, a real item is preferred to a simulated one unless simulated ones are included", () =>
  withStore(async (store) => {
    const real = makeItem(store, { issue: 7, state: "abandoned" });
    const simulated = makeItem(store, { issue: 7, simulated: true });
    assert.match(await show(store, "demo/widgets#7"), `item    : ${real.id}\n`);
    assert.match(await show(store, "demo/widgets#7", "--include-simulated"), `item    : ${simulated.id} (simulated)\n`);
    makeItem(store, { issue: 8, simulated: true });
    await refused(() => show(store, "demo/widgets#8"), /is simulated .*--include-simulated shows it$/);
  }));

test("a simulated item is shown only with --include-simulated, and says it is simulated", () =>
  withStore(async (store) => {
    makeItem(store, { issue: 4, simulated: true });
    await refused(() => show(store, "1"), /^Work item 1 is simulated \(made below the live effect level\); --include-simulated shows it$/);
    const text = await show(store, "demo/widgets#4", "--include-simulated");
    assert.match(text, "item    : 1 (simulated)\n");
    assert.match(text, "(new) -> discovered  labelled by its author  (simulated)\n");
  }));

test("the issue's address comes from the audit log when recorded, else from GitHub's API base", () =>
  withStore(async (store) => {
    makeItem(store, { issue: 7 });
    const config = await configWithRepos({});
    const at = (apiBase: string) => ({ ...config, github: { ...config.github, api_base: apiBase } });
    assert.match(await showWith(at("https://ghe.example.com/api/v3"), store, "1"), "url     : https://ghe.example.com/demo/widgets/issues/7\n");
    assert.not.match(await showWith(at("http://127.0.0.1:4567"), store, "1"), "url", "a forge's address is not guessed");
    appendAudit(store, { kind: "intake.seen", repo: "demo/widgets", item: 1, body: { html_url: "http://127.0.0.1:4567/demo/widgets/issues/7" } });
    assert.match(await showWith(at("http://127.0.0.1:4567"), store, "1"), "url     : http://127.0.0.1:4567/demo/widgets/issues/7\n");
  }));

test("an item's sessions are listed, one line per attempt with where it ran", () =>
  withStore(async (store) => {
    makeItem(store, { issue: 7, title: "Fix the widget", at: "2026-01-15T08:00:00Z" });
    recordSession(store, {
      id: "0b3c6a4e-1111-4111-8111-111111111111", item: 1, name: "ra-widgets-7", host: "box", launcher: "process", marker: "ra-widgets-7",
      worktree: "/wt/demo/widgets/issue-7", branch: "robot-army/issue-7-fix-the-widget", started_at: "2026-01-15T09:00:00Z", simulated: false,
    });
    const text = await show(store, "1");
    assert.match(text, "sessions : 1\n  attempt 1  ra-widgets-7  0b3c6a4e-1111-4111-8111-111111111111  on box via process, started 2026-01-15T09:00:00Z, open\n");
    assert.match(text, "    branch robot-army/issue-7-fix-the-widget  worktree /wt/demo/widgets/issue-7\n");
    const json = JSON.parse(await show(store, "1", "--json"));
    assert.equal(json.sessions.map((s: { name: string; attempt: number }) => [s.name, s.attempt]), [["ra-widgets-7", 1]]);
  }));

test("show says how to bring the latest session back, as its profile does, and that a generic worker is never taken for idle", () =>
  withStore(async (store) => {
    makeItem(store, { issue: 7, title: "Fix the widget", at: "2026-01-15T08:00:00Z" });
    recordSession(store, {
      id: "0b3c6a4e-1111-4111-8111-111111111111", item: 1, name: "ra-widgets-7", host: "box", launcher: "process", marker: "ra-widgets-7",
      worktree: "/wt/demo/widgets/issue-7", branch: "robot-army/issue-7-fix-the-widget", started_at: "2026-01-15T09:00:00Z", simulated: false,
    });
    const base = await configWithRepos({ "demo/widgets": 0 });
    const claude = await showWith({ ...base, worker: { ...base.worker, binary: "claude", profile: "claude" } }, store, "1");
    assert.match(claude, "resume  : claude --resume 0b3c6a4e-1111-4111-8111-111111111111  (in /wt/demo/widgets/issue-7)\n");
    assert.not.match(claude, "registry");
    const generic = await showWith({ ...base, worker: { ...base.worker, binary: "aider", profile: "generic" } }, store, "1");
    assert.not.match(generic, "resume  :");
    assert.match(generic, "registry: worker profile generic: no registry, so its workers are never taken for idle (never retired)");
  }));

test("anything but an id or owner/name#N is a usage error with the help", () => {
  for (const bad of ["x", "demo/widgets", "#7", "demo#7", "-1"]) {
    assert.throws(() => showOptions(parse(command, ["--", bad])), (e: unknown) => e instanceof UsageError && e.help?.startsWith("Usage: robot-army show") === true);
  }
});


/** A token as GitHub formats it, written into rows as a store made before the redactor would hold it. */
const OLD_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

test("a title is printed with every control character escaped, the C1 ones too (U+009B, CSI)", () =>
  withStore(async (store) => {
    makeItem(store, { issue: 7, title: "Fix\u009b2J the\u001b[31m widget\u0085" });
    const text = await show(store, "1");
    assert.match(text, 'issue   : demo/widgets#7 "Fix\\u009b2J the\\u001b[31m widget\\u0085" (open');
    assert.not.match(text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  }));

test("rows and audit records written before the redactor existed are shown redacted, as text and as JSON", () =>
  withStore(async (store) => {
    const item = makeItem(store, { issue: 7, state: "failed" });
    store.db.prepare("UPDATE work_items SET title = ?, reason = ? WHERE id = ?").run(`Leaked ${OLD_TOKEN}`, `post-create printed ${OLD_TOKEN}`, item.id);
    store.db.prepare("INSERT INTO audit (at, kind, phase, item, body) VALUES ('2026-01-15T09:30:00Z', 'state.work_item', 'fact', ?, ?)")
      .run(item.id, JSON.stringify({ from: "dispatching", to: "failed", reason: `token ${OLD_TOKEN} in the output` }));
    for (const argv of [["1"], ["1", "--json"]]) {
      const text = await show(store, ...argv);
      assert.not.ok(text.includes(OLD_TOKEN), text);
      assert.ok(text.includes("post-create printed [redacted]") && text.includes("token [redacted] in the output"), text);
    }
  }));

test("show lists the episode records cleanup archived, each copy under the state dir, after the worktree is gone", () =>
  withCleanupWorld(async (w) => {
    const path = w.addWorktree("issue-3", "robot-army/issue-3");
    const id = w.claim(3, path, "robot-army/issue-3", "done");
    const [session] = sessionsOf(w.store, id);
    endSession(w.store, session.id, "retired");
    // Claude Code's SessionStart and SessionEnd hooks: the episode's record is left uncommitted.
    const journal = await openJournal(path, { forWrite: true });
    for (const action of ["start", "end"] as const) {
      await applyHook(journal, { key: session.episode_key, action, clientPid: process.pid, now: new Date("2026-01-15T10:00:00Z") });
    }
    assert.is((await cleanupItem({ store: w.store, config: w.config, stateDir: w.stateDir, effects: w.effects }, id, { by: "cleanup" })).record.state, "done");
    const text = await showWith(w.config, w.store, String(id), "--include-simulated");
    const archive = join(w.stateDir, "archive", `item-${id}`);
    assert.match(text, "records : 1 archived\n");
    assert.match(text, new RegExp(`\\n  ${archive}/2026-01-15T10-00-00Z--[0-9a-f-]{36}\\.md  from \\.ai/repo/sessions/`));
    const json = JSON.parse(await showWith(w.config, w.store, String(id), "--json", "--include-simulated"));
    assert.is(json.archived_records.length, 1);
    assert.is(json.archived_records[0].kept, true);
  }));

test("an interrupted item's show says what to decide by: how it ended, what its worktree holds, its pull request, when it last worked; a done one does not", () =>
  withTempDir(async (dir) => {
    const { clone } = repos.copy(join(dir, "repos"));
    const worktree = join(dir, "issue-12");
    git(clone, "worktree", "add", "--quiet", "-b", "ra/12-fix", worktree, "origin/main");
    writeFileSync(join(worktree, "notes.md"), "untracked\n");
    await withStore(async (store) => {
      const config = await configWithRepos({ "demo/widgets": 0 });
      const id = interruptedItem(store, { issue: 12, worktree, branch: "ra/12-fix", ended: { reason: "crashed", code: 1, at: "2026-01-15T09:40:00Z" } });
      const shown = await showWith(config, store, String(id));
      assert.match(shown, [
        "decide  : what it ended with and holds",
        "  ended       crashed (exit 1) at 2026-01-15T09:40:00Z, session ra-widgets-12",
        "  uncommitted 1 file (notes.md)",
        "  commits     0 not on main, the branch not on origin",
        "  pull        none open",
        "  worked      last at 2026-01-15T09:40:00Z",
        "  choices     resume carries on in its worktree with the worker's context; restart starts a fresh worker there; reset is refused over 1 uncommitted file (only --force at a terminal discards them)",
      ].join("\n"));
      assert.equal(JSON.parse(await showWith(config, store, String(id), "--json")).decision.work.uncommitted, 1);
      transition(store, id, "done", { reason: "issue closed", issueClosedObserved: true });
      assert.not.match(await showWith(config, store, String(id)), "decide  :");
      assert.is(JSON.parse(await showWith(config, store, String(id), "--json")).decision, null);
    });
  }));

test.run();
