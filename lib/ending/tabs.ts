/**
 * The tab sweep: a tab (tmux window, kitty window) is closed when its work item is `done`
 * and none of its sessions is still open, all of the item's tabs, not only the last. It is
 * a sweep on every pass, not a step of retirement, so a tab left by a crash between a stop
 * and a close is closed on the next pass. `failed` and `abandoned` items keep their tabs
 * (that is what remain-on-exit and `--hold` are for): only `done` is a candidate.
 *
 * A tab is found by the markers its launch wrote, the item's id AND this store's path (item
 * ids start at 1 in every store: another state dir's item 1, or the rehearsal's, is not this
 * one's), on the terminal server a session row of this host recorded (never the one the
 * config names now, never by a window's number); a window without both markers is never
 * touched, nor one whose command still runs (no session row open does not prove nothing runs
 * there). Each close is audited (`tab.close`, intent and outcome). A server that cannot be
 * asked is unknown, never "no tabs": nothing is marked.
 *
 * Cheap with thousands of finished items: an item's session rows are marked swept once a
 * pass's listing found none of its tabs left on any of their servers (so after the pass
 * that closed them, on the next one), and only unmarked rows are read. Each server is asked
 * once per pass, and only when some item is still to sweep. A crash between a close and
 * the mark leaves the rows unmarked, so the next pass sweeps again.
 */
import { samePath } from "../same-path.ts";
import { configuredTerminal, launcherForTerminal, terminalKey } from "../boundaries/launchers/select.ts";
import { parseTerminal } from "../boundaries/launchers/types.ts";
import type { Launcher, TabRef, Terminal } from "../boundaries/launchers/types.ts";
import type { Config } from "../config.ts";
import type { DaemonEvent } from "../events.ts";
import type { Finding } from "../store/findings.ts";
import type { Effects } from "../effects.ts";
import { auditEffect } from "../store/audit.ts";
import type { AuditRecord } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { getItem } from "../work-items/queries.ts";
import { itemsWithTabsToSweep, markTabsSwept, sessionsOf } from "../work-items/sessions.ts";

/** What the tab sweep works with. */
export interface TabsDeps {
  store: Store;
  config: Config;
  /** This machine: rows of another host name terminal servers that are not here. */
  host: string;
  effects: Pick<Effects, "sessions" | "simulated">;
  /** Builds the launcher that reaches a recorded terminal server (default: `launcherForTerminal` in robot-army's environment). */
  terminalLauncher?: (terminal: Terminal) => Launcher;
}

/** What one sweep did: tabs closed, one event per close (or failed close), and items whose tabs could not be told this pass. */
export interface TabsSweep {
  closed: number;
  events: DaemonEvent[];
  /** Items left for the next pass: a server of theirs could not be asked, a tab of theirs still runs something, or a close failed. */
  unknown: number;
}

/** One terminal server the pass asks, once. */
interface Server {
  terminal: Terminal;
  launcher: Launcher;
  listing?: TabRef[] | "unknown";
}

/**
 * Closes every tab of every `done` item none of whose sessions is open, on the servers its
 * sessions were recorded on. Below `no-remote` (no real sessions or terminals) it does nothing.
 * @example const sweep = await closeFinishedTabs({ store, config, effects }); sweep.events.forEach(report);
 */
export async function closeFinishedTabs(deps: TabsDeps): Promise<TabsSweep> {
  const result: TabsSweep = { closed: 0, events: [], unknown: 0 };
  if (!deps.effects.sessions) return result;
  const items = itemsWithTabsToSweep(deps.store, deps.effects.simulated, deps.host);
  if (items.length === 0) return result;
  const build = deps.terminalLauncher ?? ((terminal: Terminal) => launcherForTerminal(terminal));
  const servers = new Map<string, Server>();
  const plans = items.map((item) => ({ item, servers: serversOf(deps, item, servers, build) }));
  // Each server once, all at once: one listing answers for every item recorded there.
  await Promise.all([...servers.values()].map(async (server) => {
    server.listing = await server.launcher.markedTabs().catch(() => "unknown" as const);
  }));
  for (const { item, servers: mine } of plans) {
    if (mine === "unknown" || mine.some((server) => server.listing === "unknown")) {
      result.unknown++;
      continue;
    }
    const tabs = mine.flatMap((server) => (server.listing as TabRef[]).filter((tab) => isOurs(deps.store, item, tab)).map((tab) => ({ tab, server })));
    // Marked only from a listing that found none left: after the pass that closes them, the next one marks.
    if (tabs.length === 0) {
      markTabsSwept(deps.store, item, deps.host);
      continue;
    }
    let allClosed = true;
    for (const { tab, server } of tabs) {
      // Something still runs in it (respawned, or a worker whose row was closed while it lived): left, and asked again next pass.
      if (tab.running === true) allClosed = false;
      else if (!(await closeTab(deps.store, item, tab, server, result))) allClosed = false;
    }
    if (!allClosed) result.unknown++;
  }
  return result;
}

/**
 * Whether a listed tab is this item's of this store: its item marker names the item and its
 * store marker this store's file (the same path, or one resolving to the same file). A tab
 * with no store marker (launched before stores were marked) is never taken for ours.
 */
export function isOurs(store: Store, item: number, tab: TabRef): boolean {
  if (tab.item !== item || tab.store === null) return false;
  return samePath(tab.store, store.path);
}

/**
 * The servers an item's sessions on this host were recorded on (a row from before terminals
 * were recorded: the server the config names for its launcher), added to `servers`; "unknown"
 * when a row names a launcher whose server cannot be told. Headless rows have no tabs.
 */
function serversOf(deps: TabsDeps, item: number, servers: Map<string, Server>, build: (terminal: Terminal) => Launcher): Server[] | "unknown" {
  const mine = new Map<string, Server>();
  for (const session of sessionsOf(deps.store, item)) {
    if (session.host !== deps.host) continue;
    const terminal = session.terminal ?? configuredTerminal(deps.config, session.launcher);
    if (terminal === null) return "unknown";
    if (terminal.launcher === "process") continue;
    const key = terminalKey(terminal);
    let server = servers.get(key);
    if (!server) servers.set(key, server = { terminal, launcher: build(terminal) });
    mine.set(key, server);
  }
  return [...mine.values()];
}

/** Closes one tab between a `tab.close` intent and outcome; false when it could not be closed (reported, left for the next pass). */
async function closeTab(store: Store, item: number, tab: TabRef, server: Server, result: TabsSweep): Promise<boolean> {
  const work = getItem(store, item);
  const at = work ? `${work.repo}#${work.issue}` : `item ${item}`;
  const subject = { event: "tab_closed", item, repo: work?.repo ?? null, issue: work?.issue ?? null, tab: tab.id, launcher: tab.launcher };
  try {
    const closed = await auditEffect(
      store,
      { kind: "tab.close", repo: work?.repo, item, body: { tab: tab.id, marker: tab.marker, store: tab.store, terminal: server.terminal } },
      () => server.launcher.closeTab(tab),
      (outcome) => ({ result: outcome }),
    );
    if (closed === "closed") {
      result.closed++;
      result.events.push({ ...subject, line: `closed tab ${tab.id} of item ${item} (${at})` });
    }
    return true;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    result.events.push({ ...subject, event: "tab_close_failed", line: `could not close tab ${tab.id} of item ${item} (${at}): ${why}`, reason: why });
    return false;
  }
}

/**
 * What became of a `tab.close` a crash cut short, from the terminal it names: the tab still
 * there with its marker (not closed), not there (closed), or the terminal cannot be asked
 * now (the next pass reads it again).
 */
export async function tabCloseEvidence(intent: AuditRecord, build: (terminal: Terminal) => Launcher = (t) => launcherForTerminal(t)): Promise<Finding> {
  const terminal = parseTerminal(JSON.stringify(intent.body.terminal ?? null));
  const tab = intent.body.tab;
  if (terminal === null || typeof tab !== "string" || intent.item === null) return { settled: false, check: "its intent names no terminal, tab and item" };
  const listing = await build(terminal).tabs(intent.item).catch(() => "unknown" as const);
  if (listing === "unknown") return { settled: "later", why: `the ${terminal.launcher} server it names cannot be asked now` };
  const facts = { tab, marker: intent.body.marker ?? null };
  return listing.some((ref) => ref.id === tab)
    ? { settled: true, ok: false, found: "not closed (the tab is there with its marker)", facts }
    : { settled: true, ok: true, found: "closed (no tab with its marker is there)", facts };
}
