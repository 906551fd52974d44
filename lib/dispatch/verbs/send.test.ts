import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { launcherForTerminal } from "../../boundaries/launchers/select.ts";
import type { Launched, Terminal } from "../../boundaries/launchers/types.ts";
import { PreconditionError } from "../../errors.ts";
import { queryAudit } from "../../store/audit.ts";
import type { Store } from "../../store/open.ts";
import { withTmuxWorkers } from "../../testing/tmux-workers.ts";
import { makeItem, withStore } from "../../testing/items.ts";
import { waitFor } from "../../testing/wait.ts";
import { endSession, recordSession } from "../../work-items/sessions.ts";
import { describeSent, SEND_LIMIT, sendToWorker, unsendable } from "./send.ts";
import type { SendDeps } from "./send.ts";

const HOST = "testhost";

/** A reader worker: each line typed at its prompt is written to `file`. */
const reader = (file: string) => ["sh", "-c", `while IFS= read -r line; do printf '%s\\n' "$line" >> '${file}'; done`];

/** An active item with one session row for `launched` (open unless `ended`), on this host unless `host`. */
function itemWithSession(store: Store, issue: number, launched: Pick<Launched, "sessionId" | "sessionName" | "terminal"> | null, more: { ended?: boolean; host?: string; terminal?: Terminal | null } = {}): number {
  const item = makeItem(store, { issue, state: "active" }).id;
  const terminal = more.terminal !== undefined ? more.terminal : launched?.terminal ?? null;
  const id = launched?.sessionId ?? `s-${issue}`;
  recordSession(store, {
    id, item, name: launched?.sessionName ?? `ra-widgets-${issue}`, host: more.host ?? HOST, launcher: terminal?.launcher ?? "tmux", marker: `@ra_item=${item}`,
    worktree: "/w", branch: "b", started_at: "2026-01-15T09:00:00Z", simulated: false, terminal,
  });
  if (more.ended) endSession(store, id, "exited", { code: 0, at: "2026-01-15T09:30:00Z" });
  return item;
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.instance(error, PreconditionError);
    return (error as Error).message;
  }
  throw new Error("expected a refusal");
}

test("text that cannot be typed at a prompt is refused by what it holds: nothing, too much, or a control character, named", () => {
  assert.match(unsendable("  ")!, "empty");
  assert.match(unsendable("x".repeat(SEND_LIMIT + 1))!, `at most ${SEND_LIMIT}`);
  assert.is(unsendable("é".repeat(SEND_LIMIT)), null, "characters are counted, not bytes");
  assert.match(unsendable("yes\nrm -rf /")!, "U+000A at character 4");
  assert.match(unsendable("a\u001b[31m")!, "U+001B at character 2");
  assert.match(unsendable("\u0003")!, "U+0003");
  assert.match(unsendable("a\u009bb")!, "U+009B");
  assert.match(unsendable("a\u2028b")!, "U+2028");
  assert.is(unsendable(`yes, use "quotes" and $HOME; #{x} \\ 'ok' 😀`), null);
});

test("a message is typed into the item's live worker's pane and Enter pressed; audited with its length, never its text", () => withTmuxWorkers(async (w) => {
  await withStore(async (store) => {
    const typed = join(w.dir, "typed.txt");
    // Another store's item 1 on the same server, and an earlier attempt of ours whose worker ended (remain-on-exit keeps its window): neither is typed into.
    await w.launch(1, "ra-other-1", reader(join(w.dir, "other.txt")), join(w.dir, "other", "robot-army.db"));
    const ended = await w.launch(1, "ra-widgets-1", ["sh", "-c", "exit 0"], store.path);
    await waitFor("the ended worker's pane to be dead", async () => (await w.tmux("display-message", "-p", "-t", ended.window!, "#{pane_dead}")) === "1");
    const live = await w.launch(1, "ra-widgets-1-2", reader(typed), store.path);
    const id = itemWithSession(store, 1, live);
    const deps: SendDeps = { store, sessionRoot: w.sessionRoot, host: HOST, terminalLauncher: w.terminalLauncher };
    const text = "yes, go ahead: use the second option";
    const sent = await sendToWorker(deps, id, text);
    assert.equal(sent, { item: id, session: "ra-widgets-1-2", sessionId: live.sessionId, tab: live.window!, launcher: "tmux", length: text.length });
    assert.is(describeSent(sent), `typed ${text.length} characters into ra-widgets-1-2 (tmux window ${live.window}) for work item 1, and pressed Enter`);
    await waitFor("the worker to read the line", () => existsSync(typed) && readFileSync(typed, "utf8") === text + "\n");
    assert.not.ok(existsSync(join(w.dir, "other.txt")), "another store's window got nothing");
    const records = queryAudit(store, { kind: "session.send" });
    assert.equal(records.map((r) => [r.phase, r.item, r.sessionId]), [["intent", id, live.sessionId], ["outcome", id, live.sessionId]]);
    assert.is(records[0].body.length, text.length);
    assert.is(records[0].body.tab, live.window);
    assert.is(records[1].body.result, "sent");
    assert.not.ok(JSON.stringify(records).includes("go ahead"), "the text itself is not in the audit log");
  });
}));

test("refused with nothing typed or audited: an ended session, a headless worker, another host, a worker whose process ended, no window left", () => withTmuxWorkers(async (w) => {
  await withStore(async (store) => {
    const deps: SendDeps = { store, sessionRoot: w.sessionRoot, host: HOST, terminalLauncher: w.terminalLauncher };
    const running = await w.launch(1, "ra-widgets-1", reader(join(w.dir, "1.txt")), store.path);
    const ended = itemWithSession(store, 1, running, { ended: true });
    assert.match(await refusal(sendToWorker(deps, ended, "hi")), /ended at 2026-01-15T09:30:00Z \(exited, exit 0\).*robot-army resume 1 starts it again/);
    const headless = itemWithSession(store, 2, null, { terminal: { launcher: "process" } });
    assert.match(await refusal(sendToWorker(deps, headless, "hi")), 'runs headless (launcher "process")');
    const elsewhere = itemWithSession(store, 3, { ...running, sessionId: "s-3" }, { host: "laptop" });
    assert.match(await refusal(sendToWorker(deps, elsewhere, "hi")), "runs on host laptop");
    // Its worker ended and its holder with it; the window stays (remain-on-exit): no process of it runs.
    const done = await w.launch(4, "ra-widgets-4", ["sh", "-c", "exit 0"], store.path);
    await waitFor("the worker's pane to be dead", async () => (await w.tmux("display-message", "-p", "-t", done.window!, "#{pane_dead}")) === "1");
    const stopped = itemWithSession(store, 4, done);
    const why = await refusal(sendToWorker(deps, stopped, "hi"));
    assert.match(why, /^The worker of ra-widgets-4 no longer runs \(its session's (process \d+ has ended|record is gone: it ended, and the daemon's next pass will say how)\): nothing is typed$/, why);
    // Its window was marked as another item's since (by hand): no window of it is left to type into.
    const moved = await w.launch(5, "ra-widgets-5", reader(join(w.dir, "5.txt")), store.path);
    await w.tmux("set-option", "-w", "-t", moved.window!, "@ra_item", "99");
    const unmarked = itemWithSession(store, 5, moved);
    assert.match(await refusal(sendToWorker(deps, unmarked, "hi")), "No window of ra-widgets-5 is left");
    const none = makeItem(store, { issue: 6, state: "ready" }).id;
    assert.match(await refusal(sendToWorker(deps, none, "hi")), "has had no session");
    assert.match(await refusal(sendToWorker(deps, unmarked, "hi\u001b")), "control character");
    assert.equal(queryAudit(store, { kind: "session.send" }), []);
  });
}));

test("a terminal server that cannot be asked refuses the send: never taken for an empty one, nothing audited", () => withTmuxWorkers(async (w) => {
  await withStore(async (store) => {
    const running = await w.launch(1, "ra-widgets-1", reader(join(w.dir, "1.txt")), store.path);
    const id = itemWithSession(store, 1, running);
    const broken = { store, sessionRoot: w.sessionRoot, host: HOST, terminalLauncher: (t: Terminal) => launcherForTerminal(t, { env: { PATH: "/nonexistent" } }) };
    assert.match(await refusal(sendToWorker(broken, id, "hi")), "cannot be asked");
    assert.equal(queryAudit(store, { kind: "session.send" }), []);
  });
}));

test.run();
