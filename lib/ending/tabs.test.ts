import { test } from "uvu";
import * as assert from "uvu/assert";
import { join } from "node:path";
import { launcherForTerminal } from "../boundaries/launchers/select.ts";
import { runCommand } from "../run-command.ts";
import type { Launcher, Terminal } from "../boundaries/launchers/types.ts";
import { defaultConfig } from "../config.ts";
import type { Config } from "../config.ts";
import { SIMULATED_GITHUB, wireEffects } from "../effects.ts";
import { queryAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { withTempDir } from "../testing/fixtures.ts";
import { makeItem, withStore } from "../testing/items.ts";
import { writeKittyStandIn, writeUnreachableKitty } from "../testing/kitty-standin.ts";
import { waitFor } from "../testing/wait.ts";
import { transition } from "../work-items/transition.ts";
import { endSession, recordSession, sessionsOf } from "../work-items/sessions.ts";
import { closeFinishedTabs, tabCloseEvidence } from "./tabs.ts";
import type { TabsDeps } from "./tabs.ts";

const SESSION = "ra-workers";
const HOST = "testhost";
const LIVE = wireEffects("live", { github: SIMULATED_GITHUB });

/** A tmux server of the test's own, in its temp dir (`-S <dir>/tmux.sock`): killed at the end, by that socket only. */
interface Server {
  socket: string;
  env: Record<string, string | undefined>;
  tmux(...args: string[]): Promise<string>;
  /**
   * Opens a window in the workers' session, marked `@ra_item` when `item` is given and
   * `@ra_store` when `store` is, as a launch marks it; its id. Its command (`sleep 30`) has
   * ended, the window kept by remain-on-exit, unless `running`.
   */
  window(item?: number, store?: string, options?: { running?: boolean }): Promise<string>;
  /** `<window id> <@ra_item>` of every window on the server. */
  windows(): Promise<string[]>;
  terminal: Terminal;
}

async function withServer(fn: (server: Server, dir: string) => Promise<void>): Promise<void> {
  await withTempDir(async (dir) => {
    const socket = join(dir, "tmux.sock");
    const env = { ...process.env, TMUX: undefined, TMUX_TMPDIR: dir };
    const tmux = async (...args: string[]) => {
      const result = await runCommand(["tmux", "-S", socket, ...args], env);
      if (result.code !== 0) throw new Error(`tmux ${args.join(" ")}: ${result.stderr.trim()}`);
      return result.stdout.trim();
    };
    let opened = false;
    const server: Server = {
      socket, env, tmux,
      async window(item, store, { running = false } = {}) {
        const id = opened
          ? await tmux("new-window", "-d", "-t", `=${SESSION}:`, "-P", "-F", "#{window_id}", "--", "sleep", "30")
          : await tmux("new-session", "-d", "-s", SESSION, "-P", "-F", "#{window_id}", "--", "sleep", "30");
        opened = true;
        await tmux("set-option", "-w", "-t", id, "remain-on-exit", "on");
        if (item !== undefined) await tmux("set-option", "-w", "-t", id, "@ra_item", String(item));
        if (store !== undefined) await tmux("set-option", "-w", "-t", id, "@ra_store", store);
        if (!running) {
          // The pane's own command, which this test started: ended by its pid, the window staying as a worker's does.
          process.kill(Number(await tmux("display-message", "-p", "-t", id, "#{pane_pid}")), "SIGTERM");
          await waitFor(`window ${id}'s command to end`, async () => (await tmux("display-message", "-p", "-t", id, "#{pane_dead}")) === "1");
        }
        return id;
      },
      async windows() {
        const result = await runCommand(["tmux", "-S", socket, "list-windows", "-a", "-F", "#{window_id} #{@ra_item}"], env);
        return result.code === 0 ? result.stdout.trim().split("\n") : [];
      },
      terminal: { launcher: "tmux", socket: null, socket_path: socket, session: SESSION },
    };
    try {
      await fn(server, dir);
    } finally {
      await runCommand(["tmux", "-S", socket, "kill-server"], env);
    }
  });
}

/**
 * A work item walked to `state` with one closed session row per terminal given (open when
 * `open`; on this test's host unless `host`), as dispatch and settle would leave it.
 */
function itemWith(store: Store, issue: number, state: "done" | "failed" | "abandoned" | "active", sessions: Array<{ terminal: Terminal | null; launcher?: string; open?: boolean; host?: string }>): number {
  const item = makeItem(store, { issue, state: "active" }).id;
  sessions.forEach((s, i) => {
    recordSession(store, {
      id: `s-${issue}-${i}`, item, name: `ra-widgets-${issue}`, host: s.host ?? HOST, launcher: s.launcher ?? s.terminal?.launcher ?? "tmux", marker: `@ra_item=${item}`,
      worktree: "/w", branch: "b", started_at: "2026-01-15T09:00:00Z", simulated: false, terminal: s.terminal,
    });
    if (!s.open) endSession(store, `s-${issue}-${i}`, "exited", { code: 0 });
  });
  if (state === "done") transition(store, item, "done", { reason: "issue closed", issueClosedObserved: true });
  else if (state === "failed") transition(store, item, "failed", { reason: "worker exited 1" });
  else if (state === "abandoned") transition(store, item, "abandoned", { reason: "owner abandoned it" });
  return item;
}

/** Sweep deps whose launchers are counted: `asks` is how many listings each terminal server was asked for. */
function sweepDeps(store: Store, config: Config, env: Record<string, string | undefined>, more: Partial<TabsDeps> = {}) {
  const asks: string[] = [];
  const deps: TabsDeps = {
    store, config, host: HOST, effects: LIVE,
    terminalLauncher: (terminal) => {
      const launcher = launcherForTerminal(terminal, { env });
      return {
        ...launcher, name: launcher.name,
        markedTabs: () => {
          asks.push(terminal.launcher);
          return launcher.markedTabs();
        },
        closeTab: (ref) => launcher.closeTab(ref),
      } as Launcher;
    },
    ...more,
  };
  return { deps, asks };
}

test("a done item with no open session has every tab of all its attempts closed, each audited; failed, abandoned and open ones keep theirs", () => withServer(async (server) => {
  await withStore(async (store) => {
    const config = await defaultConfig();
    const owners = await server.window();
    const [first, second] = [await server.window(1, store.path), await server.window(1, store.path)];
    const failed = await server.window(2, store.path);
    const abandoned = await server.window(3, store.path);
    const open = await server.window(4, store.path);
    const t = server.terminal;
    assert.is(itemWith(store, 11, "done", [{ terminal: t }, { terminal: t }]), 1);
    itemWith(store, 12, "failed", [{ terminal: t }]);
    itemWith(store, 13, "abandoned", [{ terminal: t }]);
    itemWith(store, 14, "done", [{ terminal: t }, { terminal: t, open: true }]);

    const { deps, asks } = sweepDeps(store, config, server.env);
    const sweep = await closeFinishedTabs(deps);
    assert.equal(sweep.events.map((e) => e.line), [`closed tab ${first} of item 1 (demo/widgets#11)`, `closed tab ${second} of item 1 (demo/widgets#11)`]);
    assert.equal({ closed: sweep.closed, unknown: sweep.unknown }, { closed: 2, unknown: 0 });
    assert.equal(asks, ["tmux"], "the server is asked once for every item on it");
    assert.equal(await server.windows(), [`${owners} `, `${failed} 2`, `${abandoned} 3`, `${open} 4`], "the owner's unmarked window and the kept tabs stay");

    const audit = queryAudit(store, { kind: "tab.close" });
    assert.equal(audit.map((r) => [r.phase, r.item, r.body.tab ?? r.body.result]), [["intent", 1, first], ["outcome", 1, "closed"], ["intent", 1, second], ["outcome", 1, "closed"]]);
    assert.equal(audit[0].body.terminal, t);
    assert.is(audit[0].actionId, audit[1].actionId);

    // The pass after the closes finds none left and marks the item swept; after that no server is asked.
    assert.equal(sessionsOf(store, 1).map((s) => s.tabs_swept_at), [null, null]);
    assert.equal((await closeFinishedTabs(deps)).events, []);
    assert.equal(asks.length, 2);
    assert.ok(sessionsOf(store, 1).every((s) => s.tabs_swept_at !== null));
    assert.equal(sessionsOf(store, 4).map((s) => s.tabs_swept_at), [null, null], "an item with an open session is not swept");
    // Item 4's open row keeps it a candidate that is skipped, not asked about: closing that row makes it one.
    endSession(store, "s-14-1", "retired");
    const last = await closeFinishedTabs(deps);
    assert.equal(last.events.map((e) => e.line), [`closed tab ${open} of item 4 (demo/widgets#14)`]);
  });
}));

test("a tab is looked for on the server its session recorded, not the one the config names now", () => withServer(async (server, dir) => {
  await withStore(async (store) => {
    const base = await defaultConfig();
    // The config now names another session on another server: the recorded one still answers.
    const config = { ...base, worker: { ...base.worker, launcher: "tmux", tmux_session: "elsewhere", tmux_socket: "ra-test-none" } } as Config;
    const tab = await server.window(1, store.path);
    itemWith(store, 11, "done", [{ terminal: server.terminal }]);
    const sweep = await closeFinishedTabs({ store, config, host: HOST, effects: LIVE, terminalLauncher: (t) => launcherForTerminal(t, { env: { ...server.env, TMUX_TMPDIR: join(dir, "other") } }) });
    assert.equal(sweep.events.map((e) => e.line), [`closed tab ${tab} of item 1 (demo/widgets#11)`]);
    assert.equal(await server.windows(), [], "the last window gone, the server ended with it");
  });
}));

test("a server that cannot be asked is unknown, never none: nothing is closed or marked, and the next pass asks again", () => withTempDir(async (dir) => {
  await withStore(async (store) => {
    const config = await defaultConfig();
    itemWith(store, 11, "done", [{ terminal: { launcher: "kitty", to: "unix:/nowhere" } }]);
    const binary = writeUnreachableKitty(dir);
    const deps: TabsDeps = { store, config, host: HOST, effects: LIVE, terminalLauncher: (t) => launcherForTerminal(t, { kittyBinary: binary }) };
    for (let pass = 0; pass < 2; pass++) {
      const sweep = await closeFinishedTabs(deps);
      assert.equal({ closed: sweep.closed, unknown: sweep.unknown, events: sweep.events }, { closed: 0, unknown: 1, events: [] });
      assert.equal(sessionsOf(store, 1).map((s) => s.tabs_swept_at), [null]);
    }
  });
}));

test("on kitty, every window carrying the item's ra_item is closed by id and marker together; others stay", () => withTempDir(async (dir) => {
  await withStore(async (store) => {
    const config = await defaultConfig();
    const kitty = writeKittyStandIn(dir);
    const ours = { ra_store: store.path };
    kitty.seed([
      { id: 4, title: "ra-widgets-11", vars: { ra_item: "1", ...ours } },
      { id: 5, title: "owner's shell", vars: {} },
      { id: 6, title: "ra-widgets-12", vars: { ra_item: "2", ...ours } },
      { id: 7, title: "ra-widgets-11-2", vars: { ra_item: "1", ...ours } },
      { id: 8, title: "ra-widgets-110", vars: { ra_item: "10", ...ours } },
      { id: 9, title: "another store's item 1", vars: { ra_item: "1", ra_store: `${store.path}-other` } },
      { id: 10, title: "item 1 of before stores were marked", vars: { ra_item: "1" } },
    ]);
    const terminal: Terminal = { launcher: "kitty", to: "unix:/run/kitty-test" };
    itemWith(store, 11, "done", [{ terminal }, { terminal }]);
    itemWith(store, 12, "failed", [{ terminal }]);
    const env = { ...process.env, ...kitty.env };
    const sweep = await closeFinishedTabs({ store, config, host: HOST, effects: LIVE, terminalLauncher: (t) => launcherForTerminal(t, { env, kittyBinary: kitty.binary }) });
    assert.equal(sweep.events.map((e) => e.line), ["closed tab 4 of item 1 (demo/widgets#11)", "closed tab 7 of item 1 (demo/widgets#11)"]);
    assert.equal(kitty.tabs().map((t) => t.id), [5, 6, 8, 9, 10], "another store's item 1 and an unmarked store's stay");
    const closes = kitty.calls().map((c) => c.argv.slice(3).join(" ")).filter((call) => call.startsWith("close-window"));
    assert.equal(closes.map((call) => call.replace(/ and var:ra_store=.*$/, "")), ["close-window --match id:4 and var:ra_item=^1$", "close-window --match id:7 and var:ra_item=^1$"]);
    assert.ok(closes.every((call) => call.includes(" and var:ra_store=^")), "each close matches the store too");
  });
}));

test("headless sessions have no tabs: their done items are marked swept without asking anything; below no-remote nothing is asked", () => withTempDir(async () => {
  await withStore(async (store) => {
    const config = await defaultConfig();
    itemWith(store, 11, "done", [{ terminal: { launcher: "process" } }]);
    itemWith(store, 12, "done", [{ terminal: null, launcher: "process" }]);
    const { deps, asks } = sweepDeps(store, config, process.env, { effects: wireEffects("local", { github: SIMULATED_GITHUB }) });
    await closeFinishedTabs(deps);
    assert.equal(sessionsOf(store, 1).map((s) => s.tabs_swept_at), [null], "below no-remote the sweep does nothing");
    await closeFinishedTabs({ ...deps, effects: LIVE });
    assert.equal(asks, []);
    assert.ok([1, 2].every((item) => sessionsOf(store, item).every((s) => s.tabs_swept_at !== null)));
  });
}));

test("with 10,000 done items swept, a pass asks no server and reads only what is left to sweep", () => withServer(async (server) => {
  await withStore(async (store) => {
    const config = await defaultConfig();
    store.transaction(() => {
      const item = store.statement(
        `INSERT INTO work_items (id, repo, issue, state, title, body, author, issue_state, created_at, updated_at)
         VALUES (?, 'demo/widgets', ?, 'done', 't', 'b', 'owner', 'closed', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`,
      );
      const session = store.statement(
        `INSERT INTO sessions (id, item, name, host, launcher, marker, worktree, branch, attempt, started_at, ended_at, end_reason, terminal, tabs_swept_at)
         VALUES (?, ?, 'n', 'h', 'tmux', 'm', '/w', 'b', 1, '2026-01-01T00:00:00Z', '2026-01-01T01:00:00Z', 'retired', ?, '2026-01-01T02:00:00Z')`,
      );
      for (let id = 1000; id < 11_000; id++) {
        item.run(id, id);
        session.run(`old-${id}`, id, JSON.stringify(server.terminal));
      }
    });
    const { deps, asks } = sweepDeps(store, config, server.env);
    const started = performance.now();
    const sweep = await closeFinishedTabs(deps);
    const ms = performance.now() - started;
    assert.equal({ closed: sweep.closed, asks }, { closed: 0, asks: [] });
    assert.ok(ms < 100, `a pass with nothing to sweep took ${ms.toFixed(1)} ms`);
    const plan = store.statement(
      `EXPLAIN QUERY PLAN SELECT DISTINCT s.item FROM sessions AS s INDEXED BY sessions_tabs_unswept WHERE s.tabs_swept_at IS NULL`,
    ).all().map((row) => String((row as { detail: string }).detail));
    assert.ok(plan.some((detail) => detail.includes("sessions_tabs_unswept")), plan.join("; "));

    // One more item to sweep: the server is asked once, and only its tab is closed.
    const id = itemWith(store, 20, "done", [{ terminal: server.terminal }]);
    const tab = await server.window(id, store.path);
    assert.equal((await closeFinishedTabs(deps)).events.map((e) => e.line), [`closed tab ${tab} of item ${id} (demo/widgets#20)`]);
    assert.equal(asks, ["tmux"]);
    assert.equal(await server.windows(), []);
  });
}));

test("a window of another store with the same item id, or with no store marker, is left open; the item is swept of its own", () => withServer(async (server) => {
  await withStore(async (store) => {
    const config = await defaultConfig();
    // Item ids start at 1 in every store: the rehearsal's or a second state dir's item 1 shares the server.
    const theirs = await server.window(1, join(store.path, "..", "..", "other", "robot-army.db"), { running: true });
    const older = await server.window(1);
    const ours = await server.window(1, store.path);
    itemWith(store, 11, "done", [{ terminal: server.terminal }]);
    const { deps } = sweepDeps(store, config, server.env);
    const sweep = await closeFinishedTabs(deps);
    assert.equal(sweep.events.map((e) => e.line), [`closed tab ${ours} of item 1 (demo/widgets#11)`]);
    assert.equal(await server.windows(), [`${theirs} 1`, `${older} 1`]);
    assert.equal((await closeFinishedTabs(deps)).events, []);
    assert.ok(sessionsOf(store, 1).every((s) => s.tabs_swept_at !== null), "none of its own left: swept, the others' windows not waited for");
    assert.equal(await server.windows(), [`${theirs} 1`, `${older} 1`]);
  });
}));

test("a tab whose pane still runs something is left open and its item not marked swept, until the pane is dead", () => withServer(async (server) => {
  await withStore(async (store) => {
    const config = await defaultConfig();
    const ended = await server.window(1, store.path);
    const running = await server.window(1, store.path, { running: true });
    itemWith(store, 11, "done", [{ terminal: server.terminal }, { terminal: server.terminal }]);
    const { deps } = sweepDeps(store, config, server.env);
    for (let pass = 0; pass < 2; pass++) {
      const sweep = await closeFinishedTabs(deps);
      assert.equal(sweep.events.map((e) => e.line), pass === 0 ? [`closed tab ${ended} of item 1 (demo/widgets#11)`] : []);
      assert.is(sweep.unknown, 1, "the running tab leaves the item for the next pass");
      assert.equal(await server.windows(), [`${running} 1`]);
      assert.equal(sessionsOf(store, 1).map((s) => s.tabs_swept_at), [null, null]);
    }
    // Once its command has ended, the next pass closes it and the one after marks the item.
    process.kill(Number(await server.tmux("display-message", "-p", "-t", running, "#{pane_pid}")), "SIGTERM");
    await waitFor("the pane to be dead", async () => (await server.tmux("display-message", "-p", "-t", running, "#{pane_dead}")) === "1");
    assert.equal((await closeFinishedTabs(deps)).events.map((e) => e.line), [`closed tab ${running} of item 1 (demo/widgets#11)`]);
    await closeFinishedTabs(deps);
    assert.ok(sessionsOf(store, 1).every((s) => s.tabs_swept_at !== null));
  });
}));

test("only rows of this host are swept: another machine's row names a terminal server that is not here", () => withServer(async (server) => {
  await withStore(async (store) => {
    const config = await defaultConfig();
    const elsewhere = await server.window(1, store.path);
    itemWith(store, 11, "done", [{ terminal: server.terminal, host: "otherhost" }]);
    const both = itemWith(store, 12, "done", [{ terminal: { launcher: "process" } }, { terminal: server.terminal, host: "otherhost" }]);
    const { deps, asks } = sweepDeps(store, config, server.env);
    for (let pass = 0; pass < 2; pass++) {
      const sweep = await closeFinishedTabs(deps);
      assert.equal({ closed: sweep.closed, unknown: sweep.unknown, asks }, { closed: 0, unknown: 0, asks: [] }, "no server of another host is asked");
    }
    assert.equal(await server.windows(), [`${elsewhere} 1`], "another host's tab is not closed from here");
    assert.equal(sessionsOf(store, 1).map((s) => s.tabs_swept_at), [null], "nor marked swept: it is that host's to sweep");
    assert.equal(sessionsOf(store, both).map((s) => s.tabs_swept_at !== null), [true, false], "of an item on both hosts, only this host's row is marked");
  });
}));

test("a tab.close cut short is settled from its terminal, by marker: there means not closed, absent closed, unreachable later", () => withServer(async (server, dir) => {
  const tab = await server.window(1);
  await server.window();
  const intent = (body: Record<string, unknown>) => ({
    id: 1, at: "2026-01-15T10:00:00Z", kind: "tab.close", phase: "intent" as const, repo: "demo/widgets", item: 1, sessionId: null, episodeId: null,
    actionId: "a", simulated: false, body,
  });
  const build = (t: Terminal) => launcherForTerminal(t, { env: server.env, kittyBinary: writeUnreachableKitty(dir) });
  const open = await tabCloseEvidence(intent({ tab, marker: "@ra_item=1", terminal: server.terminal }), build);
  assert.equal(open, { settled: true, ok: false, found: "not closed (the tab is there with its marker)", facts: { tab, marker: "@ra_item=1" } });
  await server.tmux("kill-window", "-t", tab);
  const closed = await tabCloseEvidence(intent({ tab, marker: "@ra_item=1", terminal: server.terminal }), build);
  assert.equal(closed, { settled: true, ok: true, found: "closed (no tab with its marker is there)", facts: { tab, marker: "@ra_item=1" } });
  const later = await tabCloseEvidence(intent({ tab: "3", marker: "ra_item=1", terminal: { launcher: "kitty", to: null } }), build);
  assert.is(later.settled, "later");
  assert.is((await tabCloseEvidence(intent({ tab }), build)).settled, false, "an intent naming no terminal is the owner's to check");
}));

test.run();
