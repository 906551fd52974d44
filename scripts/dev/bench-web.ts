/**
 * `npm run bench -- web`: the dashboard over a store grown big, the pass benchmark's world
 * (10,000 work items, 200 of them active with open session rows whose sessions run). The
 * dashboard runs as a process of its own, `robot-army serve --port 0` on the state dir, as
 * an owner starts it (on Node through bin/robot-army.mjs, its compile cache filled by a first
 * start); this process only asks. Each open session's worker has its open episode in its
 * worktree, idle or busy, so `/active` reads 200 registries as it does for real workers.
 * After 10 warm-ups of each page, 200 GETs of each in turn (sequential, one connection kept
 * alive, as a browser tab asks) are timed to the last byte of the body, and the server's
 * memory is read from /proc (VmHWM, its peak; VmRSS, now). Then the pages are timed again
 * while `robot-army run` ticks once a second over the same store (issue 15's "while the
 * daemon works"), and the memory read again: its peak over the whole run. Target: p99 under
 * 50 ms for `/active` and `/`, idle and while the daemon works, the server under 100 MiB
 * over the whole run; `/api/active` is shown for information. It never fails on a missed
 * target.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readHeartbeat } from "../../lib/daemon/heartbeat.ts";
import { journalAt } from "../../lib/episodes/journal.ts";
import { setStatus, startEpisode } from "../../lib/episodes/lifecycle.ts";
import { isDeno } from "../../lib/runtime.ts";
import { startDashboard } from "../../lib/testing/dashboard.ts";
import { percentile, startDaemon } from "../../lib/testing/soak.ts";
import type { DaemonProcess } from "../../lib/testing/soak.ts";
import { openSessions } from "../../lib/work-items/sessions.ts";
import { buildBenchWorld, NOW, PASS_ITEMS, PASS_LIVE } from "./bench-pass.ts";
import type { BenchWorld } from "./bench-pass.ts";

/** Timed requests of each page, and untimed ones first. */
export const WEB_REQUESTS = 200;
export const WEB_WARMUPS = 10;

/** The targets: p99 response time of the pages, in milliseconds, and the server's peak memory, in MiB. */
export const WEB_TARGET_P99_MS = 50;
export const WEB_TARGET_MIB = 100;

/** The pages timed against the target, then the ones shown for information. */
const PAGES = ["/active", "/"];
const INFORMATION = ["/api/active"];

/** Runs the web benchmark and prints its figures. */
export async function benchWeb(): Promise<void> {
  const world = await buildBenchWorld();
  try {
    await writeEpisodes(world);
    const env = { ...process.env, RA_STATE_DIR: world.stateDir, RA_CONFIG: world.configFile };
    // A first start fills Node's compile cache, as any machine that has run robot-army once has it.
    await (await startDashboard({ env })).stop();
    const server = await startDashboard({ env });
    try {
      const timings = await timePages(server.url);
      const memory = memoryOf(server.pid);
      // The page measured is the whole one: a row for each open session.
      const sessions = (await (await fetch(server.url + "/active")).text()).split('<section id="kept"')[0];
      const rows = (sessions.match(/<tr data-item="/g) ?? []).length;
      const unknown = (sessions.match(/class="activity unknown"/g) ?? []).length;
      const p99Met = PAGES.every((path) => percentile(timings.get(path)!, 0.99) < WEB_TARGET_P99_MS);
      const row = (path: string, tail = "") => {
        const samples = timings.get(path)!;
        return `  ${`GET ${path}`.padEnd(18)}median ${ms(percentile(samples, 0.5))}   p99 ${ms(percentile(samples, 0.99))}${tail}`;
      };
      // Again while the daemon works: `robot-army run` ticking once a second over the same store.
      const working = await whileTheDaemonTicks(world.stateDir, world.configFile, env, () => timePages(server.url));
      const whole = memoryOf(server.pid);
      const memoryMet = whole.peakMiB < WEB_TARGET_MIB;
      const workingMet = PAGES.every((path) => percentile(working.timings.get(path)!, 0.99) < WEB_TARGET_P99_MS);
      const workingRow = (path: string) => {
        const samples = working.timings.get(path)!;
        return `  ${`GET ${path}`.padEnd(18)}median ${ms(percentile(samples, 0.5))}   p99 ${ms(percentile(samples, 0.99))}`;
      };
      console.log([
        `web: the dashboard (\`robot-army serve\` on ${isDeno() ? "deno" : "node"}, a process of its own) over ${PASS_ITEMS} work items, ` +
          `${PASS_LIVE} active with open sessions; store made in ${ms(world.seedingMs).trim()}`,
        `  (${WEB_REQUESTS} sequential requests of each page after ${WEB_WARMUPS} warm-ups, in turn, timed to the body's last byte)`,
        ...PAGES.map((path) => row(path, path === "/active" ? `  (${rows} session rows${rows === PASS_LIVE ? "" : `, not ${PASS_LIVE}`}, ${rows - unknown} registries read${unknown ? `, ${unknown} unknown` : ""})` : "")),
        ...INFORMATION.map((path) => row(path, "  (information)")),
        `  server memory: peak ${mib(memory.peakMiB)} (VmHWM), ${mib(memory.nowMiB)} at the end (VmRSS)`,
        `  target: p99 under ${WEB_TARGET_P99_MS} ms for ${PAGES.join(" and ")}: ${p99Met ? "target met" : "target missed"}`,
        `  while the daemon ticks once a second (${working.ticks} ticks over the same store while these were timed; its last: "${working.last}"):`,
        ...PAGES.map(workingRow),
        `  target: p99 under ${WEB_TARGET_P99_MS} ms for ${PAGES.join(" and ")} while the daemon works: ${workingMet ? "target met" : "target missed"}`,
        `  server memory over the whole run: peak ${mib(whole.peakMiB)} (VmHWM), ${mib(whole.nowMiB)} at the end (VmRSS)`,
        `  target: the server under ${WEB_TARGET_MIB} MiB over the whole run: ${memoryMet ? "target met" : "target missed"}`,
      ].join("\n"));
    } finally {
      await server.stop();
    }
  } finally {
    world.close();
  }
}

/**
 * Each open session's worker keeps its journal, as a real one does: an open episode in its
 * worktree, idle or busy in turn, so `/active` reads 200 registries, not 200 missing files.
 */
async function writeEpisodes(world: BenchWorld): Promise<void> {
  const at = new Date(Date.parse(NOW) - 10 * 60_000);
  for (const [n, session] of openSessions(world.store).entries()) {
    mkdirSync(session.worktree, { recursive: true });
    const journal = journalAt(session.worktree);
    await startEpisode(journal, { key: session.episode_key, clientPid: process.pid, now: at });
    await setStatus(journal, { key: session.episode_key, status: n % 2 ? "busy" : "idle", now: at });
  }
}

/** Each page's timings: warm-ups first, then `WEB_REQUESTS` of each, in turn, so drift in the machine's load hits every page alike. */
async function timePages(base: string): Promise<Map<string, number[]>> {
  const timings = new Map<string, number[]>();
  for (const path of [...PAGES, ...INFORMATION]) {
    for (let n = 0; n < WEB_WARMUPS; n++) await get(base, path);
    timings.set(path, []);
  }
  for (let n = 0; n < WEB_REQUESTS; n++) {
    for (const [path, samples] of timings) samples.push(await get(base, path));
  }
  return timings;
}

/**
 * Runs `measure` while a daemon ticks once a second on the state dir (its config's
 * `[daemon]` given `tick_seconds = 1`, put back after), from its first tick on; with the
 * ticks it made meanwhile.
 */
async function whileTheDaemonTicks<T>(stateDir: string, configFile: string, env: Record<string, string | undefined>, measure: () => Promise<T>): Promise<{ timings: T; ticks: number; last: string }> {
  const config = readFileSync(configFile, "utf8");
  writeFileSync(configFile, config.replace("[daemon]\n", "[daemon]\ntick_seconds = 1\n"));
  const daemon = startDaemon([], env, stateDir, join(stateDir, "bench-daemon.log"));
  try {
    const first = await waitForTick(stateDir, daemon, 0);
    const timings = await measure();
    const ticks = (readHeartbeat(stateDir)?.tick ?? first) - first;
    const said = readFileSync(join(stateDir, "bench-daemon.log"), "utf8").split("\n").filter((line) => /^tick \d+:/.test(line));
    return { timings, ticks, last: said.at(-1) ?? "(no tick summary)" };
  } finally {
    await daemon.stop();
    writeFileSync(configFile, config);
  }
}

/** The daemon's tick once it is past `after`, read from its heartbeat; fails if it ends first or takes a minute. */
async function waitForTick(stateDir: string, daemon: DaemonProcess, after: number): Promise<number> {
  let ended = false;
  void daemon.exited.then(() => ended = true);
  for (const deadline = Date.now() + 60_000; Date.now() < deadline && !ended;) {
    const tick = readHeartbeat(stateDir)?.tick ?? 0;
    if (tick > after) return tick;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`The daemon ${ended ? "ended" : "did not tick within a minute"}; see ${join(stateDir, "bench-daemon.log")}`);
}

/** One GET, timed from the request to the body's last byte, in milliseconds; anything but 200 fails the benchmark. */
async function get(base: string, path: string): Promise<number> {
  const start = performance.now();
  const response = await fetch(base + path);
  const body = await response.arrayBuffer();
  const wall = performance.now() - start;
  if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${new TextDecoder().decode(body).slice(0, 200)}`);
  return wall;
}

/** A process's peak and present resident memory, in MiB, from /proc/<pid>/status. */
function memoryOf(pid: number): { peakMiB: number; nowMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => {
    const found = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status);
    if (!found) throw new Error(`/proc/${pid}/status has no ${field}`);
    return Number(found[1]) / 1024;
  };
  return { peakMiB: kib("VmHWM"), nowMiB: kib("VmRSS") };
}

function ms(value: number): string {
  return `${value.toFixed(1).padStart(7)} ms`;
}

function mib(value: number): string {
  return `${value.toFixed(1)} MiB`;
}
