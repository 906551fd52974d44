/**
 * `npm run bench -- pass`: one daemon pass (`runTick`, every step) over a store grown big:
 * 10,000 work items, of which 200 are active with live worker sessions and the rest done a
 * month before (their sessions closed, their tabs swept). First the pass with nothing to do, then
 * the same store with 200 retirement candidates: done items whose workers still run, idle
 * in their journals for ten minutes with no merged pull request, so each is read and left.
 * It prints the milliseconds of each pass (the median of the runs) and the GitHub requests
 * the sandbox forge counted; the forge runs as a process of its own, so its work is not
 * robot-army's. Target: the idle pass under 100 ms and one request per repository, answered 304.
 *
 * The live sessions' records name this process as their holder and command (by pid and
 * start time), so they count as running without starting 200 processes.
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir, removeTempDir, git } from "../../lib/testing/fixtures.ts";
import { PROJECT_ROOT, runtimeArgv } from "../../lib/runtime.ts";
import type { GitHub } from "../../lib/boundaries/github.ts";
import type { Config } from "../../lib/config.ts";
import type { Store } from "../../lib/store/open.ts";

/** How big the store is, and how many of its items have live sessions. */
export const PASS_ITEMS = 10_000;
export const PASS_LIVE = 200;

/** The idle pass's target, in milliseconds. */
export const PASS_TARGET_MS = 100;

const REPO = "bench/widgets";
/** The clock of the benchmark world (RA_NOW while it is built). */
export const NOW = "2026-01-15T10:00:00Z";
const LONG_AGO = "2025-12-15T10:00:00Z";

/** Runs the pass benchmark and prints its figures. */
export async function benchPass({ runs }: { runs: number }): Promise<void> {
  const [{ wireEffects }, { runTick, initialState }, { launcherFor }, journal$, lifecycle$, { transition }] = await Promise.all([
    import("../../lib/effects.ts"), import("../../lib/daemon/tick.ts"), import("../../lib/boundaries/launchers/select.ts"),
    import("../../lib/episodes/journal.ts"), import("../../lib/episodes/lifecycle.ts"), import("../../lib/work-items/transition.ts"),
  ]);
  const world = await buildBenchWorld();
  try {
    const { store, config, stateDir, sessionRoot, github, forge, live, dir } = world;
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
      const worktree = join(dir, "worktrees", String(n + 1));
      mkdirSync(worktree, { recursive: true });
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
 * whose managed sessions run (held by this process), the rest done a month before with their
 * sessions retired and their tabs swept. `RA_NOW` is the world's now until `close()`.
 */
export async function buildBenchWorld(): Promise<BenchWorld> {
  const [{ seedForge }, { connectGitHub }, { recordApproval }, { loadConfig }, { fingerprintOf }, { openStore }, store$, sessions$, records$, processes$, { transition }] = await Promise.all([
    import("../../lib/forge/seed.ts"), import("../../lib/boundaries/github.ts"), import("../../lib/repos/records.ts"),
    import("../../lib/config.ts"), import("../../lib/repos/fingerprint.ts"), import("../../lib/store/open.ts"), import("../../lib/work-items/queries.ts"),
    import("../../lib/work-items/sessions.ts"), import("../../lib/sessions/records.ts"), import("../../lib/processes.ts"), import("../../lib/work-items/transition.ts"),
  ]);
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
    const made = performance.now();
    const live: number[] = [];
    store.transaction(() => {
      for (let n = 1; n <= PASS_ITEMS; n++) {
        const isLive = n <= PASS_LIVE;
        // The long-done items finished a month before: older than any refresh still tracks.
        process.env.RA_NOW = isLive ? NOW : LONG_AGO;
        const item = store$.createItem(store, {
          repo: REPO, issue: 1000 + n, title: `Issue ${n}`, body: "Do the thing", author: "owner", labels: ["robot-army"],
          issue_state: "open", issue_updated_at: NOW,
        }, { simulated: false });
        for (const to of ["ready", "dispatching", "active"] as const) transition(store, item.id, to, { reason: "bench" });
        const id = globalThis.crypto.randomUUID();
        sessions$.recordSession(store, {
          id, item: item.id, name: `ra-widgets-${1000 + n}`, host: "bench", launcher: "process", marker: `ra-widgets-${1000 + n}`,
          worktree: join(dir, "worktrees", String(n)), branch: `robot-army/issue-${1000 + n}`, started_at: isLive ? NOW : LONG_AGO, simulated: false,
        });
        if (isLive) {
          live.push(item.id);
          records$.writeRecord(sessionRoot, liveRecord(id, `ra-widgets-${1000 + n}`, item.id, store.path, join(dir, "worktrees", String(n)), me));
        } else {
          sessions$.endSession(store, id, "retired", { code: 0, at: LONG_AGO });
          transition(store, item.id, "done", { reason: "issue closed", issueClosedObserved: true });
          sessions$.markTabsSwept(store, item.id, "bench", LONG_AGO);
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
