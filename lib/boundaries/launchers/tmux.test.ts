import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readRecord } from "../../sessions/records.ts";
import { runCommand } from "../../run-command.ts";
import type { Env } from "./session-run.ts";
import { LauncherTests, recordNamed, rejection, waitFor } from "../../testing/launchers.ts";
import type { LauncherDirs } from "../../testing/launchers.ts";
import { TmuxLauncher } from "./tmux.ts";
import { LaunchError } from "./types.ts";
import type { LaunchSpec, TabRef } from "./types.ts";

const tests = new LauncherTests();
const SESSION = "ra-workers";
/** The store path the launches mark their windows with (only compared, never opened). */
const STORE = "/var/lib/robot-army/robot-army.db";

/** Each test has a tmux server of its own: `-L <socket>`, the socket in the test's temp dir (TMUX_TMPDIR). */
const SOCKET = `ra-test-${process.pid}`;

/** Runs tmux on the test's private server. */
async function tmux(dirs: LauncherDirs, ...args: string[]): Promise<string> {
  const result = await runCommand(["tmux", "-L", SOCKET, ...args], dirs.env);
  if (result.code !== 0) throw new Error(`tmux ${args.join(" ")} failed: ${result.stderr.trim()}`);
  return result.stdout.trim();
}

/** Kills the test's own tmux server (never another) and waits until its process is gone. */
async function killServer(dirs: LauncherDirs): Promise<void> {
  const pid = await tmux(dirs, "display-message", "-p", "#{pid}").catch(() => "");
  await runCommand(["tmux", "-L", SOCKET, "kill-server"], dirs.env);
  if (!pid) return;
  await waitFor(`tmux server ${pid} to exit`, () => !isAlive(Number(pid)));
}

/** Whether a process runs (a zombie does not): read from /proc, the server being a daemon that is not our child. */
function isAlive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "Z";
  } catch {
    return false;
  }
}

/** A launcher test with a private tmux server, killed at the end whatever happens. */
function tmuxTest(name: string, fn: (dirs: LauncherDirs, launcher: TmuxLauncher) => Promise<void>) {
  return tests.in(name, (dirs) => fn(dirs, new TmuxLauncher({ env: dirs.env, session: SESSION, socket: SOCKET })), killServer);
}

function spec(item: number, cwd: string, argv: string[], more: Partial<LaunchSpec> = {}): LaunchSpec {
  return { item, name: `ra-demo-${item}`, cwd, argv, tags: {}, ...more };
}

/** Window id, dead flag and marker of every window of the workers' session. */
async function windows(dirs: LauncherDirs): Promise<Array<{ id: string; dead: string; marker: string }>> {
  const out = await tmux(dirs, "list-windows", "-t", `=${SESSION}`, "-F", "#{window_id} #{pane_dead} #{@ra_item}");
  return out.split("\n").map((line) => {
    const [id, dead, marker = ""] = line.split(" ");
    return { id, dead, marker };
  });
}

test("launch opens a window marked @ra_item and @ra_store, remain-on-exit on, the worker running in its session", tmuxTest("launch", async (dirs, launcher) => {
  const store = join(dirs.state, "robot-army.db");
  const launched = await launcher.launch(spec(7, dirs.work, ["sh", "-c", "echo hi; exec sleep 30"], { tags: { repo: "o/demo", ra_store: store } }));
  tests.note(dirs.root);
  assert.match(launched.window!, /^@\d+$/);
  assert.equal({ ...launched, sessionId: "", window: "" }, {
    launcher: "tmux", marker: "@ra_item=7", sessionName: "ra-demo-7", sessionId: "", window: "",
    terminal: { launcher: "tmux", socket: SOCKET, socket_path: join(dirs.dir, `tmux-${process.getuid!()}`, SOCKET), session: SESSION },
  });
  assert.is(await tmux(dirs, "show-options", "-w", "-v", "-t", launched.window!, "@ra_item"), "7");
  assert.is(await tmux(dirs, "show-options", "-w", "-v", "-t", launched.window!, "@ra_store"), store);
  assert.is(await tmux(dirs, "show-options", "-w", "-v", "-t", launched.window!, "remain-on-exit"), "on");
  assert.is(await tmux(dirs, "display-message", "-p", "-t", launched.window!, "#{session_name} #{window_name} #{pane_current_path}"), `${SESSION} ra-demo-7 ${dirs.work}`);

  const record = readRecord(dirs.root, launched.sessionId)!;
  assert.equal(record.tags, { ra_item: "7", repo: "o/demo", ra_store: store });
  assert.is(record.childPgid, null, "a window's worker runs in the foreground, in the pane's terminal");
  await waitFor("the worker's output in the pane", async () => (await tmux(dirs, "capture-pane", "-p", "-S", "-", "-t", launched.window!)).includes("hi"));

  assert.equal(await launcher.find(7), { launcher: "tmux", id: launched.window, marker: "@ra_item=7", running: true });
  assert.is(await launcher.find(8), null);
}));

test("attachCommand attaches to the window by id, or switches to it from inside the same server", tmuxTest("attach", async (dirs, launcher) => {
  const launched = await launcher.launch(spec(7, dirs.work, ["sleep", "30"]));
  tests.note(dirs.root);
  const socket = SOCKET;
  assert.equal(await launcher.attachCommand(7), ["tmux", "-L", socket, "attach-session", "-t", `=${SESSION}:${launched.window}`]);
  assert.is(await launcher.attachCommand(8), null);
  const inside = new TmuxLauncher({ env: { ...dirs.env, TMUX: `${join(dirs.dir, `tmux-${process.getuid!()}`, socket)},123,0` }, session: SESSION, socket });
  assert.equal(await inside.attachCommand(7), ["tmux", "-L", socket, "switch-client", "-t", `=${SESSION}:${launched.window}`]);
  const elsewhere = new TmuxLauncher({ env: { ...dirs.env, TMUX: "/tmp/tmux-0/default,123,0" }, session: SESSION, socket });
  assert.is((await elsewhere.attachCommand(7))![3], "attach-session", "inside another server, attach");
  // Without a socket of its own the launcher reaches the server $TMUX names: a pane of a server that is not
  // called "default" is still inside it, so the window is switched to, not attached (which tmux refuses there).
  const unnamed = new TmuxLauncher({ env: { ...dirs.env, TMUX: `${join(dirs.dir, `tmux-${process.getuid!()}`, socket)},123,0` }, session: SESSION });
  assert.equal(await unnamed.attachCommand(7), ["tmux", "switch-client", "-t", `=${SESSION}:${launched.window}`]);
}));

test("remain-on-exit keeps the window of a worker that could not start, readable, and launch fails", tmuxTest("cannot-start", async (dirs, launcher) => {
  await launcher.launch(spec(1, dirs.work, ["sleep", "30"]));
  tests.note(dirs.root);
  const error = await rejection(launcher.launch(spec(8, dirs.work, ["/nonexistent/worker"])));
  assert.instance(error, LaunchError);
  assert.match(error.message, 'Cannot launch session "ra-demo-8" for work item 8 (tmux): its command "/nonexistent/worker" could not start');
  const window = /\(tmux window (@\d+)\)/.exec(error.message)?.[1];
  assert.ok(window, error.message);
  // The failed start is on record a moment before session run itself exits and tmux marks the pane dead.
  await waitFor("the pane to be dead", async () => (await tmux(dirs, "display-message", "-p", "-t", window, "#{pane_dead}")) === "1");
  assert.equal(await launcher.find(8), { launcher: "tmux", id: window, marker: "@ra_item=8", running: false });
  assert.match(await tmux(dirs, "capture-pane", "-p", "-S", "-", "-t", window), "could not start", "session run's message stays in the dead pane");
  assert.is(recordNamed(dirs.root, "ra-demo-8")?.ended, "failed-to-start");
}));

test("a session run that fails before its record is written leaves the reason in the error and the window", tmuxTest("no-cwd", async (dirs, launcher) => {
  const missing = join(dirs.dir, "gone", "x".repeat(60));
  const error = await rejection(launcher.launch(spec(6, missing, ["sleep", "30"])));
  assert.instance(error, LaunchError);
  // tmux may see the terminal close before it learns the exit status, so the status is not asserted.
  assert.match(error.message, /its command ended (with status 3 )?before the worker started: Working directory ".*" does not exist/);
  assert.match(error.message, missing);
  assert.equal((await windows(dirs)).map((w) => [w.dead, w.marker]), [["1", "6"]]);
}));

test("a worker that ends at once was launched; its window stays with its output and status", tmuxTest("ends-at-once", async (dirs, launcher) => {
  const launched = await launcher.launch(spec(9, dirs.work, ["sh", "-c", "echo oops; exit 3"]));
  // tmux may see the terminal close before it learns the exit status; the status is in the exit spool either way.
  await waitFor("the pane to be dead", async () => (await tmux(dirs, "display-message", "-p", "-t", launched.window!, "#{pane_dead}")) === "1");
  const spooled = join(dirs.state, "spool", `${launched.sessionId}.1.json`);
  await waitFor("the exit record", () => existsSync(spooled));
  assert.is(JSON.parse(readFileSync(spooled, "utf8")).code, 3);
  assert.match(await tmux(dirs, "capture-pane", "-p", "-S", "-", "-t", launched.window!), "oops");
  assert.equal(await launcher.find(9), { launcher: "tmux", id: launched.window, marker: "@ra_item=9", running: false });
}));

test("arguments ending in ';', '#{...}' and a cwd with '#' reach the worker unchanged", tmuxTest("literal", async (dirs, launcher) => {
  const cwd = join(dirs.dir, "w#{session_name};");
  mkdirSync(cwd);
  const out = join(dirs.dir, "args.txt");
  const args = [";", "a;", "b\\;", "#{window_id}", "$(touch pwned)", "two words"];
  await launcher.launch(spec(4, cwd, ["sh", "-c", 'pwd > "$0"; printf "%s\\n" "$@" >> "$0"; exec sleep 30', out, ...args]));
  tests.note(dirs.root);
  const written = await waitFor("the worker's file", () => {
    try {
      return readFileSync(out, "utf8");
    } catch {
      return undefined;
    }
  });
  assert.equal(written.split("\n").slice(0, -1), [cwd, ...args]);
}));

test("no server or no session: find null; tmux that cannot run: unknown, and launch fails", tmuxTest("absent", async (dirs, launcher) => {
  assert.is(await launcher.find(7), null);
  assert.is(await launcher.attachCommand(7), null);
  await tmux(dirs, "new-session", "-d", "-s", "other", "--", "sleep", "30");
  assert.is(await launcher.find(7), null, "a server without the workers' session has none of their windows");
  const broken = new TmuxLauncher({ env: dirs.env, session: SESSION, binary: join(dirs.dir, "no-tmux") });
  assert.is(await broken.find(7), "unknown");
  const error = await rejection(broken.launch(spec(7, dirs.work, ["sleep", "1"])));
  assert.instance(error, LaunchError);
  assert.match(error.message, "tmux cannot list the windows");
}));

test("a name already on record is refused before any window opens; a session name tmux would misread is refused", tmuxTest("refusals", async (dirs, launcher) => {
  await launcher.launch(spec(7, dirs.work, ["sleep", "30"]));
  tests.note(dirs.root);
  const error = await rejection(launcher.launch(spec(8, dirs.work, ["sleep", "30"], { name: "ra-demo-7" })));
  assert.match(error.message, 'a session named "ra-demo-7" is already on record');
  assert.is((await windows(dirs)).length, 1);
  for (const bad of ["a:b", "a.b", "a#b", ""]) {
    assert.throws(() => new TmuxLauncher({ env: dirs.env as Env, session: bad }), /tmux session name/);
  }
}));

test("tabs lists every window of the workers' session whose @ra_item is exactly the item; closeTab kills one only while its markers hold", tmuxTest("tabs", async (dirs, launcher) => {
  const tags = { ra_store: STORE };
  const first = await launcher.launch(spec(7, dirs.work, ["sh", "-c", "exit 0"], { tags }));
  const other = await launcher.launch(spec(17, dirs.work, ["sleep", "30"], { tags }));
  const second = await launcher.launch(spec(7, dirs.work, ["sleep", "30"], { name: "ra-demo-7-2", tags }));
  tests.note(dirs.root);
  // The owner's own window in the workers' session, and one in another session marked as item 7: neither is robot-army's to list.
  await tmux(dirs, "new-window", "-d", "-t", `=${SESSION}:`, "--", "sleep", "30");
  const elsewhere = await tmux(dirs, "new-session", "-d", "-s", "owner", "-P", "-F", "#{window_id}", "--", "sleep", "30");
  await tmux(dirs, "set-option", "-w", "-t", elsewhere, "@ra_item", "7");
  await waitFor("the first window's command to end", async () => (await tmux(dirs, "display-message", "-p", "-t", first.window!, "#{pane_dead}")) === "1");

  const tab = (id: string, item: number, running: boolean): TabRef => ({ launcher: "tmux", id, marker: `@ra_item=${item}`, running, item, store: STORE });
  assert.equal(await launcher.tabs(7), [tab(first.window!, 7, false), tab(second.window!, 7, true)]);
  assert.equal((await launcher.markedTabs() as Array<{ item: number }>).map((t) => t.item), [7, 17, 7]);
  assert.equal(await launcher.tabs(8), []);

  // Listed as item 7's, window `other` is item 17's (as a reused id would be): it is not closed.
  assert.is(await launcher.closeTab(tab(other.window!, 7, true)), "gone");
  assert.is(await launcher.closeTab(tab(first.window!, 7, false)), "closed");
  assert.is(await launcher.closeTab(tab(first.window!, 7, false)), "gone", "closed already");
  assert.is(await launcher.closeTab(tab(second.window!, 7, true)), "closed");
  assert.equal((await windows(dirs)).map((w) => w.marker), ["17", ""], "item 17's window and the owner's are untouched");
  assert.is(await tmux(dirs, "display-message", "-p", "-t", elsewhere, "#{window_id}"), elsewhere, "another session's window is untouched");
  assert.match((await rejection(launcher.closeTab(tab("3", 7, true)))).message, "is not of the form @N");
}));

test("closeTab closes a window only while its @ra_store is the store it was listed with, whatever the path holds; never one without it", tmuxTest("tabs-store", async (dirs, launcher) => {
  // Item ids start at 1 in every store: another state dir's item 7 and the owner's older window carry the same @ra_item.
  const weird = join(dirs.dir, "a b,c}d#{e};");
  const ours = await launcher.launch(spec(7, dirs.work, ["sleep", "30"], { tags: { ra_store: weird } }));
  const theirs = await launcher.launch(spec(7, dirs.work, ["sleep", "30"], { name: "ra-other-7", tags: { ra_store: STORE } }));
  const unmarked = await launcher.launch(spec(7, dirs.work, ["sleep", "30"], { name: "ra-old-7" }));
  tests.note(dirs.root);
  const listed = await launcher.tabs(7) as TabRef[];
  assert.equal(listed.map((t) => [t.id, t.store]), [[ours.window, weird], [theirs.window, STORE], [unmarked.window, null]]);

  const [mine, other, old] = listed;
  // Listed as the weird store's (as if its store marker changed since), the other store's window is not closed.
  assert.is(await launcher.closeTab({ ...other, store: weird }), "gone");
  assert.is(await launcher.closeTab({ ...mine, store: STORE }), "gone");
  assert.match((await rejection(launcher.closeTab(old))).message, "carries no @ra_store");
  assert.is(await launcher.closeTab({ ...old, store: STORE }), "gone", "a window without @ra_store is not closed as any store's");
  assert.equal((await launcher.tabs(7) as TabRef[]).map((t) => t.id), [ours.window, theirs.window, unmarked.window]);
  assert.is(await launcher.closeTab(mine), "closed");
  assert.is(await launcher.closeTab(other), "closed");
  assert.equal((await launcher.tabs(7) as TabRef[]).map((t) => t.id), [unmarked.window]);
}));

test("a marked window runs while any of its panes does: an owner's split beside the ended worker keeps it running, whichever pane is active", tmuxTest("tabs-running", async (dirs, launcher) => {
  const launched = await launcher.launch(spec(7, dirs.work, ["sh", "-c", "exit 0"], { tags: { ra_store: STORE } }));
  await waitFor("the worker's pane to be dead", async () => (await tmux(dirs, "display-message", "-p", "-t", launched.window!, "#{pane_dead}")) === "1");
  assert.equal((await launcher.tabs(7) as TabRef[]).map((t) => t.running), [false]);
  const split = await tmux(dirs, "split-window", "-d", "-t", launched.window!, "-P", "-F", "#{pane_id}", "--", "sleep", "30");
  // The ended worker's pane stays the active one (-d): its pane_dead alone would say nothing runs there.
  assert.is(await tmux(dirs, "display-message", "-p", "-t", launched.window!, "#{pane_dead}"), "1");
  assert.equal((await launcher.tabs(7) as TabRef[]).map((t) => t.running), [true]);
  await tmux(dirs, "kill-pane", "-t", split);
}));

test("a window whose @ra_store changes between closeTab's look and its kill is not killed: the one-command guard checks the store, escaped", tmuxTest("tabs-guard", async (dirs, launcher) => {
  // Listed with a store whose path holds tmux format syntax; by the kill, the window names a prefix of it (up to the "}").
  const listedStore = join(dirs.dir, "a}#{c},b");
  const launched = await launcher.launch(spec(7, dirs.work, ["sleep", "30"], { tags: { ra_store: listedStore } }));
  tests.note(dirs.root);
  const [ref] = await launcher.tabs(7) as TabRef[];
  // A tmux that changes the window's @ra_store just before the guarded kill, as another process could.
  const racing = join(dirs.dir, "tmux-racing");
  writeFileSync(racing, `#!/bin/sh\nfor a in "$@"; do [ "$a" = if-shell ] && tmux -L "$2" set-option -w -t "$RACE_WINDOW" @ra_store "$RACE_STORE"; done\nexec tmux "$@"\n`, { mode: 0o755 });
  const racer = new TmuxLauncher({ env: { ...dirs.env, RACE_WINDOW: launched.window!, RACE_STORE: join(dirs.dir, "a") }, session: SESSION, socket: SOCKET, binary: racing });
  assert.is(await racer.closeTab(ref), "gone");
  assert.equal((await launcher.tabs(7) as TabRef[]).map((t) => [t.id, t.store]), [[launched.window, join(dirs.dir, "a")]], "the window stays");
}));

test("sendText types the text as it is into the worker's own pane, then Enter, only while it runs and both markers hold; never into an owner's split; no buffer left behind", tmuxTest("send", async (dirs, launcher) => {
  const typed = join(dirs.work, "typed.txt");
  const reader = ["sh", "-c", 'while IFS= read -r line; do printf "%s\\n" "$line" >> typed.txt; done'];
  const launched = await launcher.launch(spec(7, dirs.work, reader, { tags: { ra_store: STORE } }));
  const other = await launcher.launch(spec(17, dirs.work, ["sleep", "30"], { tags: { ra_store: STORE } }));
  tests.note(dirs.root);
  const holder = recordNamed(dirs.root, "ra-demo-7")!.holderPid!;
  // The owner split the worker's window and left their own shell's pane active: a line typed there would run as a command.
  const owners = join(dirs.work, "owners.txt");
  await tmux(dirs, "split-window", "-t", launched.window!, "--", "sh", "-c", `IFS= read -r line; printf '%s\\n' "$line" > '${owners}'; exec sleep 30`);
  const [ref] = await launcher.tabs(7) as TabRef[];
  // What tmux's own parser would read as syntax, were the text ever given to it as a command: a trailing ";", a format, an option.
  const text = `-t @0 "yes" it's fine; #{pane_id} $HOME \\ élan ;`;
  assert.is(await launcher.sendText(ref, text, holder), "sent");
  await waitFor("the worker to read the line", () => existsSync(typed) && readFileSync(typed, "utf8") === text + "\n");
  await new Promise((done) => setTimeout(done, 300));
  assert.not.ok(existsSync(owners), "the owner's pane got nothing");
  // Listed as item 7's, window `other` is item 17's (a reused id): nothing is typed into it; nor into another store's.
  assert.is(await launcher.sendText({ ...ref, id: other.window! }, "no", holder), "gone");
  assert.is(await launcher.sendText({ ...ref, store: "/elsewhere/robot-army.db" }, "no", holder), "gone");
  assert.match((await rejection(launcher.sendText({ ...ref, store: null }, "no", holder))).message, "carries no @ra_store");
  // Another process's pid (item 17's holder runs in another window): no pane of this window runs it.
  assert.is(await launcher.sendText(ref, "no", recordNamed(dirs.root, "ra-demo-17")!.holderPid!), "gone");
  // The store marker changes between the look and the paste: the guarded paste types nothing, and its buffer is deleted.
  const racing = join(dirs.dir, "tmux-racing");
  writeFileSync(racing, `#!/bin/sh\nfor a in "$@"; do [ "$a" = if-shell ] && tmux -L "$2" set-option -w -t "$RACE_WINDOW" @ra_store "$RACE_STORE"; done\nexec tmux "$@"\n`, { mode: 0o755 });
  const racer = new TmuxLauncher({ env: { ...dirs.env, RACE_WINDOW: launched.window!, RACE_STORE: join(dirs.dir, "a") }, session: SESSION, socket: SOCKET, binary: racing });
  assert.is(await racer.sendText(ref, "raced", holder), "gone");
  await new Promise((done) => setTimeout(done, 500));
  assert.is(readFileSync(typed, "utf8"), text + "\n", "only the first text was typed");
  assert.is(await tmux(dirs, "list-buffers", "-F", "#{buffer_name}"), "", "no buffer of robot-army's is left");
}));

test("the terminal a launch returns reaches its server by socket path, whatever socket name or TMUX_TMPDIR is used later", tmuxTest("terminal", async (dirs, launcher) => {
  const launched = await launcher.launch(spec(7, dirs.work, ["sleep", "30"], { tags: { ra_store: STORE } }));
  tests.note(dirs.root);
  assert.is(launched.terminal.launcher, "tmux");
  const path = (launched.terminal as { socket_path: string }).socket_path;
  const later = new TmuxLauncher({ env: { ...dirs.env, TMUX_TMPDIR: join(dirs.dir, "elsewhere") }, session: SESSION, socketPath: path });
  assert.equal((await later.tabs(7) as Array<{ id: string }>).map((t) => t.id), [launched.window]);
  assert.is(await later.closeTab({ launcher: "tmux", id: launched.window!, marker: "@ra_item=7", running: true, item: 7, store: STORE }), "closed");
  // The server ends with its last window; while it is shutting down it may not answer yet (unknown), never "none" early.
  await waitFor("the server to be gone with its last window: no tabs, not unknown", async () => {
    const tabs = await later.tabs(7);
    return Array.isArray(tabs) && tabs.length === 0;
  });
}));

test("tmux that cannot run: tabs unknown, never none; closeTab throws", tmuxTest("tabs-unknown", async (dirs) => {
  const broken = new TmuxLauncher({ env: dirs.env, session: SESSION, binary: join(dirs.dir, "no-tmux") });
  assert.is(await broken.tabs(7), "unknown");
  assert.match((await rejection(broken.closeTab({ launcher: "tmux", id: "@1", marker: "@ra_item=7", running: true, item: 7, store: STORE }))).message, "tmux cannot say what window @1 is");
}));

test("a worker in a tmux server already running gets the launcher's environment, not the server's, with the pane's own terminal variables", tmuxTest("environment", async (dirs, launcher) => {
  // The owner's server, started long before with an environment of its own.
  await runCommand(["tmux", "-L", SOCKET, "new-session", "-d", "-s", "owner"], { ...dirs.env, RA_TEST_AGENT_BASE: "from the old server", RA_TEST_SERVER_ONLY: "stale" });
  const daemon = new TmuxLauncher({ env: { ...dirs.env, RA_TEST_AGENT_BASE: "http://127.0.0.1:9/", RA_TEST_DAEMON_ONLY: "set for the agent" }, session: SESSION, socket: SOCKET });
  const out = join(dirs.work, "env.txt");
  const launched = await daemon.launch(spec(9, dirs.work, ["sh", "-c", `env > ${out}; exec sleep 30`], { env: { RA_REPO: "o/demo" } }));
  tests.note(dirs.root);
  const seen = await waitFor("the worker's environment", () => existsSync(out) && readFileSync(out, "utf8").includes("RA_SESSION_ID=") && readFileSync(out, "utf8"));
  const vars = Object.fromEntries(seen.trim().split("\n").map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]));
  assert.is(vars.RA_TEST_AGENT_BASE, "http://127.0.0.1:9/", "the daemon's value, not the server's");
  assert.is(vars.RA_TEST_DAEMON_ONLY, "set for the agent");
  assert.is(vars.RA_TEST_SERVER_ONLY, undefined, "nothing of the server's own environment");
  assert.equal([vars.RA_REPO, vars.RA_SESSION_ID], ["o/demo", launched.sessionId], "robot-army's own variables on top");
  assert.match(vars.TMUX_PANE ?? "", /^%\d+$/, "the pane's own terminal variables stay");
  // The file that carried it is gone: read and removed by the holder, or by the launch after it.
  assert.equal(readdirSync(join(dirs.state, "launch-env")), []);
  void launcher;
}));

test("no test left a session process running", () => {
  assert.equal(tests.leaked, []);
});

test.run();
