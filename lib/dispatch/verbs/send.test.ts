import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { launcherForTerminal } from "../../boundaries/launchers/select.ts";
import type { Terminal } from "../../boundaries/launchers/types.ts";
import { PreconditionError } from "../../errors.ts";
import { runCommand } from "../../run-command.ts";
import { queryAudit } from "../../store/audit.ts";
import type { Store } from "../../store/open.ts";
import { withTempDir } from "../../testing/fixtures.ts";
import { makeItem, withStore } from "../../testing/items.ts";
import { waitFor } from "../../testing/wait.ts";
import { endSession, recordSession } from "../../work-items/sessions.ts";
import { describeSent, SEND_LIMIT, sendToWorker, unsendable } from "./send.ts";
import type { SendDeps } from "./send.ts";

const HOST = "testhost";
const SESSION = "ra-workers";

/** A tmux server of the test's own (`-S <dir>/tmux.sock`), killed at the end by that socket only. */
async function withServer(fn: (server: { terminal: Terminal; env: Record<string, string | undefined>; tmux: (...args: string[]) => Promise<string>; dir: string }) => Promise<void>): Promise<void> {
  await withTempDir(async (dir) => {
    const socket = join(dir, "tmux.sock");
    const env = { ...process.env, TMUX: undefined, TMUX_TMPDIR: dir };
    const tmux = async (...args: string[]) => {
      const result = await runCommand(["tmux", "-S", socket, ...args], env);
      if (result.code !== 0) throw new Error(`tmux ${args.join(" ")}: ${result.stderr.trim()}`);
      return result.stdout.trim();
    };
    try {
      await fn({ terminal: { launcher: "tmux", socket: null, socket_path: socket, session: SESSION }, env, tmux, dir });
    } finally {
      await runCommand(["tmux", "-S", socket, "kill-server"], env);
    }
  });
}

/** Opens a window as a launch would (marked with the item and the store) whose command writes each line it reads to `file`; its id. */
async function workerWindow(tmux: (...args: string[]) => Promise<string>, item: number, store: string, file: string, first: boolean): Promise<string> {
  const reader = ["sh", "-c", `while IFS= read -r line; do printf '%s\\n' "$line" >> '${file}'; done`];
  const id = first
    ? await tmux("new-session", "-d", "-s", SESSION, "-P", "-F", "#{window_id}", "--", ...reader)
    : await tmux("new-window", "-d", "-t", `=${SESSION}:`, "-P", "-F", "#{window_id}", "--", ...reader);
  await tmux("set-option", "-w", "-t", id, "remain-on-exit", "on");
  await tmux("set-option", "-w", "-t", id, "@ra_item", String(item));
  await tmux("set-option", "-w", "-t", id, "@ra_store", store);
  return id;
}

/** An active item with one session on `terminal` (open unless `ended`), on this host unless `host`. */
function itemWithSession(store: Store, issue: number, terminal: Terminal | null, more: { ended?: boolean; host?: string; launcher?: string } = {}): number {
  const item = makeItem(store, { issue, state: "active" }).id;
  recordSession(store, {
    id: `s-${issue}`, item, name: `ra-widgets-${issue}`, host: more.host ?? HOST, launcher: more.launcher ?? terminal?.launcher ?? "tmux", marker: `@ra_item=${item}`,
    worktree: "/w", branch: "b", started_at: "2026-01-15T09:00:00Z", simulated: false, terminal,
  });
  if (more.ended) endSession(store, `s-${issue}`, "exited", { code: 0, at: "2026-01-15T09:30:00Z" });
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

test("a message is typed into the item's live window and Enter pressed; audited with its length, never its text", () => withServer(async (server) => {
  await withStore(async (store) => {
    const typed = join(server.dir, "typed.txt");
    const id = itemWithSession(store, 1, server.terminal);
    // An earlier attempt's window, its worker ended (remain-on-exit), beside the live one: the live one is typed into.
    const dead = await workerWindow(server.tmux, id, store.path, join(server.dir, "dead.txt"), true);
    await server.tmux("respawn-pane", "-k", "-t", dead, "true");
    await waitFor("the old window's command to end", async () => (await server.tmux("display-message", "-p", "-t", dead, "#{pane_dead}")) === "1");
    const live = await workerWindow(server.tmux, id, store.path, typed, false);
    // Another store's item 1 on the same server: never typed into.
    await workerWindow(server.tmux, id, join(server.dir, "other", "robot-army.db"), join(server.dir, "other.txt"), false);
    const deps: SendDeps = { store, host: HOST, terminalLauncher: (t) => launcherForTerminal(t, { env: server.env }) };
    const text = "yes, go ahead: use the second option";
    const sent = await sendToWorker(deps, id, text);
    assert.equal(sent, { item: id, session: "ra-widgets-1", tab: live, launcher: "tmux", length: text.length });
    assert.is(describeSent(sent), `typed ${text.length} characters into ra-widgets-1 (tmux window ${live}) for work item 1, and pressed Enter`);
    await waitFor("the worker to read the line", () => existsSync(typed) && readFileSync(typed, "utf8") === text + "\n");
    assert.not.ok(existsSync(join(server.dir, "other.txt")), "another store's window got nothing");
    assert.not.ok(existsSync(join(server.dir, "dead.txt")), "the ended worker's window got nothing");
    const records = queryAudit(store, { kind: "session.send" });
    assert.equal(records.map((r) => [r.phase, r.item, r.sessionId]), [["intent", id, "s-1"], ["outcome", id, "s-1"]]);
    assert.is(records[0].body.length, text.length);
    assert.is(records[0].body.tab, live);
    assert.is(records[1].body.result, "sent");
    assert.not.ok(JSON.stringify(records).includes("go ahead"), "the text itself is not in the audit log");
  });
}));

test("refused with nothing typed or audited: an ended session, another host, a headless worker, no window left, a worker no longer running", () => withServer(async (server) => {
  await withStore(async (store) => {
    const deps: SendDeps = { store, host: HOST, terminalLauncher: (t) => launcherForTerminal(t, { env: server.env }) };
    const ended = itemWithSession(store, 1, server.terminal, { ended: true });
    assert.match(await refusal(sendToWorker(deps, ended, "hi")), /ended at 2026-01-15T09:30:00Z \(exited, exit 0\).*robot-army resume 1 starts it again/);
    const elsewhere = itemWithSession(store, 2, server.terminal, { host: "laptop" });
    assert.match(await refusal(sendToWorker(deps, elsewhere, "hi")), "runs on host laptop");
    const headless = itemWithSession(store, 3, { launcher: "process" });
    assert.match(await refusal(sendToWorker(deps, headless, "hi")), 'runs headless (launcher "process")');
    const gone = itemWithSession(store, 4, server.terminal);
    await workerWindow(server.tmux, 99, store.path, join(server.dir, "99.txt"), true);
    assert.match(await refusal(sendToWorker(deps, gone, "hi")), "No window of ra-widgets-4 is left");
    const stopped = itemWithSession(store, 5, server.terminal);
    const window = await workerWindow(server.tmux, stopped, store.path, join(server.dir, "5.txt"), false);
    await server.tmux("respawn-pane", "-k", "-t", window, "true");
    await waitFor("the window's command to end", async () => (await server.tmux("display-message", "-p", "-t", window, "#{pane_dead}")) === "1");
    assert.match(await refusal(sendToWorker(deps, stopped, "hi")), "no longer runs");
    const none = makeItem(store, { issue: 6, state: "ready" }).id;
    assert.match(await refusal(sendToWorker(deps, none, "hi")), "has had no session");
    assert.match(await refusal(sendToWorker(deps, stopped, "hi\u001b")), "control character");
    assert.equal(queryAudit(store, { kind: "session.send" }), []);
  });
}));

test("a terminal server that cannot be asked refuses the send: never taken for an empty one, nothing audited", () => withStore(async (store) => {
  const id = itemWithSession(store, 1, { launcher: "tmux", socket: null, socket_path: "/nonexistent/dir/tmux.sock", session: SESSION });
  const broken = { store, host: HOST, terminalLauncher: (t: Terminal) => launcherForTerminal(t, { env: { PATH: "/nonexistent" } }) };
  assert.match(await refusal(sendToWorker(broken, id, "hi")), "cannot be asked");
  assert.equal(queryAudit(store, { kind: "session.send" }), []);
}));

test.run();
