/**
 * `npm run bench -- pass`: one daemon pass (`runTick`, every step) over a store grown big:
 * 10,000 work items, of which 200 are active with live worker sessions and the rest done over
 * the eleven months before (their sessions retired, their tabs swept, their disk reclaimed).
 * First the pass with nothing to do, then the same store with 200 retirement candidates: done
 * items whose workers still run, idle in their journals for ten minutes with no merged pull
 * request, so each is read and left. It prints the milliseconds of each pass (the median of the
 * runs) and the GitHub requests the sandbox forge counted; the forge runs as a process of its
 * own, so its work is not robot-army's. Target: the idle pass under 100 ms and one request per
 * repository, answered 304.
 *
 * The live sessions' records name this process as their holder and command (by pid and
 * start time), so they count as running without starting 200 processes.
 *
 * The store is the one a year of real use leaves. Until issue 28's idle-pass work it was not,
 * in three ways that hid or invented costs: done items had no cleanup record, so the pass
 * took every one of them for a worktree deleted by hand (9,800 `prunable_worktree` anomalies
 * raised and looked up again each pass); the worktrees were outside the worktree root and
 * none was a git worktree, so the scan of the root found nothing to compare; and the audit
 * log held only the state changes (about 50,000 records), not the effects each item's life
 * writes (its comment, worktree, launch, retirement, tab, bundle, branch and their removal)
 * nor the daemon's own `reconcile.pass` records, so a pass that read the whole log looked cheap.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { makeTempDir, removeTempDir, git } from "../../lib/testing/fixtures.ts";
import { PROJECT_ROOT, runtimeArgv } from "../../lib/runtime.ts";
import type { GitHub } from "../../lib/boundaries/github.ts";
import type { Config } from "../../lib/config.ts";
import type { Store } from "../../lib/store/open.ts";
import type { AuditSubjects } from "../../lib/store/audit.ts";

/** How big the store is, and how many of its items have live sessions. */
export const PASS_ITEMS = 10_000;
export const PASS_LIVE = 200;

/** The idle pass's target, in milliseconds. */
export const PASS_TARGET_MS = 100;

const REPO = "bench/widgets";
/** The clock of the benchmark world (RA_NOW while it is built). */
export const NOW = "2026-01-15T10:00:00Z";

/** Runs the pass benchmark and prints its figures. */
export async function benchPass({ runs }: { runs: number }): Promise<void> {
  const [{ wireEffects }, { runTick, initialState }, { launcherFor }, journal$, lifecycle$, { transition }, { worktreePath, worktreeRoot }] = await Promise.all([
    import("../../lib/effects.ts"), import("../../lib/daemon/tick.ts"), import("../../lib/boundaries/launchers/select.ts"),
    import("../../lib/episodes/journal.ts"), import("../../lib/episodes/lifecycle.ts"), import("../../lib/work-items/transition.ts"), historyWriters(),
  ]);
  const world = await buildBenchWorld();
  try {
    const { store, config, stateDir, sessionRoot, github, forge, live } = world;
    const deps = {
      store, config, stateDir, sessionRoot, github, effects: wireEffects("live", { github: github.writer }), host: "bench",
      launcher: launcherFor(config, { env: process.env }), spoolDir: join(stateDir, "spool"), report: () => {},
    };
    const state = initialState(NOW);
    // The first pass reads every page once; the measured ones find nothing changed.
    await runTick(deps, state);
    const pass = async () => {
      await askForge(`${forge.url}/_forge/reset-stats`, { method: "POST" });
      const start = performance.now();
      const result = await runTick(deps, state);
      const wall = performance.now() - start;
      const stats = (await (await askForge(`${forge.url}/_forge/stats`)).json()) as { total: number; not_modified: number };
      if (result.failed.length) throw new Error(`the pass failed in: ${result.failed.join(", ")}`);
      return { wall, requests: stats.total, notModified: stats.not_modified, result };
    };
    const idle = await measure(runs, pass);
    // The 200 live items finish: their issues closed, their workers idle ten minutes in their journals, nothing merged.
    for (const [n, id] of live.entries()) {
      const worktree = worktreePath(worktreeRoot(config, stateDir), REPO, 1000 + n + 1);
      const journal = journal$.journalAt(worktree);
      await lifecycle$.startEpisode(journal, { key: `item-${id}`, clientPid: process.pid, now: new Date("2026-01-15T09:50:00Z") });
      await lifecycle$.setStatus(journal, { key: `item-${id}`, status: "idle", now: new Date("2026-01-15T09:50:00Z") });
      transition(store, id, "done", { reason: "issue closed", issueClosedObserved: true });
    }
    const candidates = await measure(runs, pass);
    const left = candidates.result.retire;
    const row = (label: string, p: { wall: number; requests: number; notModified: number }) =>
      `  ${label.padEnd(30)}${ms(p.wall)}  ${String(p.requests).padStart(3)} GitHub request${p.requests === 1 ? "" : "s"}, ${p.notModified} answered 304`;
    console.log([
      `pass: one daemon tick over ${PASS_ITEMS} work items (${PASS_LIVE} with live sessions), 1 repository; store made in ${ms(world.seedingMs).trim()}`,
      `  (median of ${runs} passes; the forge is a process of its own; the poll is not due, as on most ticks)`,
      row("nothing to do", idle),
      row(`${PASS_LIVE} retirement candidates`, candidates) + `  (${left.retired} retired, ${left.left} left: idle 10 min, no merge)`,
      `  target: the idle pass under ${PASS_TARGET_MS} ms and 1 request per repository answered 304: ` +
        (idle.wall < PASS_TARGET_MS && idle.requests === 1 && idle.notModified === 1 ? "met" : "NOT MET"),
    ].join("\n"));
  } finally {
    world.close();
  }
}

/** A store grown big, as the pass and web benchmarks stand on it; `close()` undoes all of it. */
export interface BenchWorld {
  /** The temp dir everything lives in. */
  dir: string;
  /** The state dir (`RA_STATE_DIR`): the store, and the managed sessions under `sessions/`. */
  stateDir: string;
  sessionRoot: string;
  /** The config.toml the world's config was read from. */
  configFile: string;
  config: Config;
  store: Store;
  github: GitHub;
  /** The sandbox forge, a process of its own. */
  forge: { url: string; stop(): void };
  /** The ids of the `PASS_LIVE` active items, whose sessions run. */
  live: number[];
  /** How long filling the store took, in milliseconds. */
  seedingMs: number;
  /** Closes the store, stops the forge, removes the temp dir and gives `RA_NOW` back its value. */
  close(): void;
}

/**
 * Builds the benchmarks' world: a forge with `bench/widgets`, a clone of it approved, and a
 * store of `PASS_ITEMS` work items, the first `PASS_LIVE` active with open session rows
 * whose managed sessions run (held by this process) in git worktrees of the clone in the
 * worktree root, the rest done over the eleven months before with their sessions retired,
 * their tabs swept and their disk reclaimed, each with the audit history its life wrote.
 * `RA_NOW` is the world's now until `close()`.
 */
export async function buildBenchWorld(): Promise<BenchWorld> {
  const [{ seedForge }, { connectGitHub }, { recordApproval }, { loadConfig }, { fingerprintOf }, { openStore }, store$, sessions$, records$, processes$, { transition }, history] = await Promise.all([
    import("../../lib/forge/seed.ts"), import("../../lib/boundaries/github.ts"), import("../../lib/repos/records.ts"),
    import("../../lib/config.ts"), import("../../lib/repos/fingerprint.ts"), import("../../lib/store/open.ts"), import("../../lib/work-items/queries.ts"),
    import("../../lib/work-items/sessions.ts"), import("../../lib/sessions/records.ts"), import("../../lib/processes.ts"), import("../../lib/work-items/transition.ts"),
    historyWriters(),
  ]);
  const { appendAudit, worktreePath, worktreeRoot } = history;
  const dir = makeTempDir("robot-army-bench-");
  const before = process.env.RA_NOW;
  const restoreNow = () => {
    if (before === undefined) delete process.env.RA_NOW;
    else process.env.RA_NOW = before;
  };
  process.env.RA_NOW = NOW;
  const undo: (() => void)[] = [() => removeTempDir(dir), restoreNow];
  const close = () => {
    for (const step of undo.reverse()) step();
  };
  try {
    const forgeDir = join(dir, "forge");
    const seeded = await seedForge(forgeDir, { repo: REPO, issues: 1, now: () => new Date(NOW) });
    const forge = await serveForge(forgeDir);
    undo.push(() => forge.stop());
    const stateDir = join(dir, "state");
    const sessionRoot = join(stateDir, "sessions");
    mkdirSync(sessionRoot, { recursive: true, mode: 0o700 });
    const store = await openStore(stateDir);
    undo.push(() => store.close());
    const clone = join(dir, "widgets");
    git(dir, "clone", "--quiet", seeded.repository.clone_url, clone);
    const configFile = join(dir, "config.toml");
    writeFileSync(configFile, [
      "[daemon]", "max_concurrent_sessions = 1000", "",
      "[github]", `api_base = ${JSON.stringify(forge.url)}`, `token_file = ${JSON.stringify(seeded.users[0].token_file)}`, 'author = "owner"', "",
      "[worker]", 'binary = "demo-worker"', 'profile = "demo"', 'launcher = "process"', "max_sessions = 1000", "",
      `[repos.${JSON.stringify(REPO)}]`, `path = ${JSON.stringify(clone)}`, 'base_branch = "main"', "max_sessions = 1000", "",
    ].join("\n"));
    const config = await loadConfig({ path: configFile });
    const github = await connectGitHub(config, store);
    recordApproval(store, REPO, clone, fingerprintOf(await github.getRepository(REPO), clone));
    const me = processes$.identify(process.pid);
    const root = worktreeRoot(config, stateDir);
    const made = performance.now();
    const live: number[] = [];
    const tip = git(clone, "rev-parse", "main");
    addWorktrees(clone, tip, Array.from({ length: PASS_LIVE }, (_, i) => ({ path: worktreePath(root, REPO, 1001 + i), branch: branchOf(i + 1) })));
    store.transaction(() => {
      for (let n = 1; n <= PASS_ITEMS; n++) {
        const isLive = n <= PASS_LIVE;
        // The done items finished one after another over the eleven months before, the newest a week and a
        // day before: older than any refresh still tracks, each as a real life leaves it in the store.
        const finished = new Date(Date.parse(NOW) - (8 * DAY + ((PASS_ITEMS - n) / PASS_ITEMS) * 330 * DAY));
        const started = isLive ? NOW : isoAt(finished, -3 * HOUR);
        process.env.RA_NOW = started;
        const item = store$.createItem(store, {
          repo: REPO, issue: 1000 + n, title: `Issue ${n}`, body: "Do the thing", author: "owner", labels: ["robot-army"],
          issue_state: "open", issue_updated_at: started,
        }, { simulated: false });
        for (const to of ["ready", "dispatching", "active"] as const) transition(store, item.id, to, { reason: "bench" });
        const id = globalThis.crypto.randomUUID();
        const name = `ra-widgets-${1000 + n}`;
        const worktree = worktreePath(root, REPO, 1000 + n);
        const about = { repo: REPO, item: item.id };
        pastEffect(history, store, "worktree.create", about, { path: worktree, branch: branchOf(n) }, { path: worktree, branch: branchOf(n), base: tip }, started);
        pastEffect(history, store, "session.launch", { ...about, sessionId: id }, {
          session: name, session_id: id, cwd: worktree, branch: branchOf(n), attempt: 1, profile: "demo", episode_key: `item-${item.id}`, settle_after_seconds: 30,
        }, { session_id: id, launcher: "process", marker: name, terminal: null }, started);
        sessions$.recordSession(store, {
          id, item: item.id, name, host: "bench", launcher: "process", marker: name, worktree, branch: branchOf(n), started_at: started, simulated: false,
        });
        pastEffect(history, store, "github.comment", about, { issue: 1000 + n, purpose: "started" }, { comment_id: n, url: `${forge.url}/${REPO}/issues/${1000 + n}#comment-${n}` }, started);
        if (isLive) {
          live.push(item.id);
          records$.writeRecord(sessionRoot, liveRecord(id, name, item.id, store.path, worktree, me));
          continue;
        }
        const done = isoAt(finished, 0);
        process.env.RA_NOW = done;
        transition(store, item.id, "done", { reason: "issue closed", issueClosedObserved: true });
        pastEffect(history, store, "session.retire", { ...about, sessionId: id }, { session: name, signal: "SIGTERM", idle_s: 60, pull_request: n }, { result: "retired" }, done);
        sessions$.endSession(store, id, "retired", { code: 0, at: done });
        pastEffect(history, store, "tab.close", about, { tab: name, marker: name, store: store.path, terminal: null }, { closed: true }, done);
        sessions$.markTabsSwept(store, item.id, "bench", done);
        reclaimDisk(history, store, { item: item.id, n, worktree, tip, stateDir, clone, finished });
        // The daemon's own record of each pass, among everything else: ten for each item, a month of passes every half minute in all.
        for (let pass = 0; pass < PASSES_PER_ITEM; pass++) {
          appendAudit(store, { kind: "reconcile.pass", at: isoAt(finished, pass * 5 * 60 * 1000), body: QUIET_PASS });
        }
      }
    });
    process.env.RA_NOW = NOW;
    const seedingMs = performance.now() - made;
    return { dir, stateDir, sessionRoot, configFile, config, store, github, forge, live, seedingMs, close };
  } catch (error) {
    close();
    throw error;
  }
}

/** A managed session's record naming `me` as holder and command: running, for as long as this process runs. */
function liveRecord(id: string, name: string, item: number, storePath: string, cwd: string, me: { pid: number; started_at: string | null; start_id?: string | null }) {
  return {
    schema: 1 as const, id, name, command: "demo-worker", args: [], cwd, env: {}, tags: { ra_item: String(item), ra_store: storePath },
    permanent: false, ephemeral: false, generation: 1, startedAt: NOW,
    holderPid: me.pid, holderStartedAt: me.started_at, holderStartId: me.start_id ?? null,
    childPid: me.pid, childStartedAt: me.started_at, childStartId: me.start_id ?? null, childPgid: null,
    killRequestedAt: null, exitedAt: null, exitCode: null, exitSignal: null, ended: null, startError: null, lastLines: [], log: join(cwd, "log"),
  };
}

const DAY = 24 * 3600 * 1000;
const HOUR = 3600 * 1000;
/** The `reconcile.pass` records each done item brings along: about 98,000 in all. */
const PASSES_PER_ITEM = 10;
/** What a pass with nothing to do records (lib/daemon/tick.ts TickResult). */
const QUIET_PASS = {
  tick: 1, failed: [], spool: { processed: 0, kept: 0 }, settled: { lost: 0, ended: 0, unknown: 0, cut_short: 0 }, needs_info: { asked: 0, answered: 0 },
  silent: { raised: 0, retracted: 0 }, unfinished: { settled: 0, reported: 0, waiting: 0 }, pulls: { repos: 1, requests: 1, not_modified: 1, stored: 0, failed: 0 },
  poll: { ran: false, new: 0, done: 0, abandoned: 0 }, retire: { retired: 0, left: 0, orphans: { raised: 0, retracted: 0, gone: 0 } }, tabs: { closed: 0, unknown: 0 },
  cleanup: { done: 0, branch_retained: 0, retained: 0, skipped: 0, failed: 0, bundles_removed: 0 }, disk: { raised: 0, retracted: 0 },
  dispatch: { withheld: null, would_dispatch: 0, active: 0, failed: 0, waiting: 0 }, notify: { sent: 0, held_back: 0, failed_deliveries: 0 },
};
/** The daemon that wrote the history's intents: a process long gone. */
const PAST_WRITER = { pid: 4_000_000, started_at: "2025-01-01T00:00:00.000Z", start_id: "bench-boot:1" };

function branchOf(n: number): string {
  return `robot-army/issue-${1000 + n}-issue-${n}`;
}

function isoAt(at: Date, plusMs: number): string {
  return new Date(at.getTime() + plusMs).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * The live items' worktrees: git worktrees of the clone, in the worktree root, each on its
 * branch at `tip`, as dispatch makes them and `git worktree list` lists them. Written as git
 * writes a worktree's files (its `.git` file, and `gitdir`, `HEAD` and `commondir` under the
 * clone's `.git/worktrees/`) with the branches made in one `git update-ref`: 200 `git worktree
 * add` would take longer than the rest of the store. Nothing is checked out in them; the pass
 * reads only that they are there and what git lists.
 */
function addWorktrees(clone: string, tip: string, worktrees: Array<{ path: string; branch: string }>): void {
  const refs = worktrees.map((w) => `create refs/heads/${w.branch} ${tip}\n`).join("");
  const made = spawnSync("git", ["update-ref", "--stdin"], { cwd: clone, input: refs, encoding: "utf8" });
  if (made.status !== 0) throw new Error(`git update-ref failed: ${made.stderr}`);
  for (const { path, branch } of worktrees) {
    const admin = join(clone, ".git", "worktrees", basename(path));
    mkdirSync(admin, { recursive: true });
    mkdirSync(path, { recursive: true });
    writeFileSync(join(path, ".git"), `gitdir: ${admin}\n`);
    writeFileSync(join(admin, "gitdir"), `${join(path, ".git")}\n`);
    writeFileSync(join(admin, "HEAD"), `ref: refs/heads/${branch}\n`);
    writeFileSync(join(admin, "commondir"), "../..\n");
  }
  const listed = git(clone, "worktree", "list", "--porcelain").split("\n").filter((line) => line.startsWith("worktree ")).length;
  if (listed !== worktrees.length + 1) throw new Error(`git lists ${listed - 1} worktrees of the clone, not ${worktrees.length}`);
}

/** What writes the history: the audit log, the cleanup records, and where worktrees are. */
type HistoryWriters = Awaited<ReturnType<typeof historyWriters>>;

async function historyWriters() {
  const [{ appendAudit }, { recordCleanup }, { worktreePath }, { worktreeRoot }] = await Promise.all([
    import("../../lib/store/audit.ts"), import("../../lib/cleanup/records.ts"), import("../../lib/boundaries/worktrees.ts"), import("../../lib/work-items/worktree-root.ts"),
  ]);
  return { appendAudit, recordCleanup, worktreePath, worktreeRoot };
}

/** An effect of the past, as `auditEffect` records it: its intent (naming its writer) and its outcome, one action id. */
function pastEffect(lib: HistoryWriters, store: Store, kind: string, about: AuditSubjects, intent: Record<string, unknown>, outcome: Record<string, unknown>, at: string): void {
  const actionId = globalThis.crypto.randomUUID();
  lib.appendAudit(store, { ...about, kind, phase: "intent", actionId, at, body: { ...intent, writer: PAST_WRITER } });
  lib.appendAudit(store, { ...about, kind, phase: "outcome", actionId, at, body: { ok: true, ...outcome } });
}

/**
 * A done item's disk reclaimed as the cleanup pass does it a minute after the item finished
 * (lib/cleanup/checkout.ts, lib/cleanup/cleanup.ts): the worktree removed, the branch proven on
 * origin, bundled and deleted, the decision recorded `done`; and, once `keep_bundles` (30 days)
 * passed, the bundle removed by a later pass. The directories and files are gone, as they would be.
 */
function reclaimDisk(lib: HistoryWriters, store: Store, d: { item: number; n: number; worktree: string; tip: string; stateDir: string; clone: string; finished: Date }): void {
  const at = isoAt(d.finished, 60 * 1000);
  const about = { repo: REPO, item: d.item };
  const branch = branchOf(d.n);
  const file = join(d.stateDir, "bundles", ...REPO.split("/"), `${branch}.bundle`);
  const proof = `merged into origin/main at ${d.tip.slice(0, 12)}`;
  pastEffect(lib, store, "worktree.remove", about, { path: d.worktree, branch, force: false, simulated: false }, { worktree: { status: "removed" }, simulated: false }, at);
  pastEffect(lib, store, "bundle.write", about, { branch, tip: d.tip, file }, { file }, at);
  pastEffect(lib, store, "branch.delete", about, { branch, tip: d.tip, proof, bundle: file }, { branch: { status: "deleted" } }, at);
  lib.recordCleanup(store, {
    item: d.item, state: "done", reason: `worktree removed; branch deleted (${proof})`, worktree_path: d.worktree, branch, worktree: "removed",
    branch_outcome: "deleted", proof, tip: d.tip, bundle: file, restore: `git -C ${d.clone} fetch ${file} ${d.tip}:refs/heads/${branch}`, by: "pass", simulated: false, at,
  });
  const removeAt = d.finished.getTime() + 30 * DAY + 60 * 1000;
  if (removeAt > Date.parse(NOW)) return;
  const removed = isoAt(new Date(removeAt), 0);
  pastEffect(lib, store, "bundle.remove", about, { file, written_at: at, keep_bundles: "30d" }, {}, removed);
}

/**
 * A request to the forge's stats hooks (both safe to repeat), asked again once if the forge had
 * closed the kept-alive connection: a pass can hold the event loop longer than the forge keeps an
 * idle connection open, so the request after it may be sent on a connection already closed.
 */
async function askForge(url: string, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    if ((error as { cause?: { code?: string } }).cause?.code !== "UND_ERR_SOCKET") throw error;
    return await fetch(url, init);
  }
}

/** The median pass of `runs`, with the last one's result. */
async function measure<T extends { wall: number }>(runs: number, pass: () => Promise<T>): Promise<T> {
  const all: T[] = [];
  for (let run = 0; run < runs; run++) all.push(await pass());
  const sorted = all.map((p) => p.wall).sort((a, b) => a - b);
  return { ...all.at(-1)!, wall: sorted[Math.floor(sorted.length / 2)] };
}

/** `robot-army forge serve` on a free loopback port, as a process of its own; its URL once it listens. */
async function serveForge(forgeDir: string): Promise<{ url: string; stop(): void }> {
  const argv = runtimeArgv(join(PROJECT_ROOT, "scripts", "robot-army.ts"));
  const child = spawn(argv[0], [...argv.slice(1), "forge", "serve", "--dir", forgeDir, "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const found = /http:\/\/127\.0\.0\.1:\d+/.exec(out)?.[0];
      if (found) resolve(found);
    });
    child.on("exit", (code) => reject(new Error(`forge serve exited ${code}: ${out}`)));
  });
  return { url, stop: () => void child.kill("SIGTERM") };
}

function ms(value: number): string {
  return `${value.toFixed(1).padStart(7)} ms`;
}
