/**
 * `npm run bench -- soak [--kills N] [--seed S]`: the whole rehearsal `npm start` plays
 * (a sandbox forge with demo/widgets and three labelled issues, a clone, the daemon at live
 * with the demo worker, the owner merging each pull request and keeping one item before its
 * merge, cleanup on close, every notification to a loopback webhook, the dashboard serving),
 * but with its daemon as a process of its own (`robot-army run`), SIGKILLed by its pid at
 * random moments and started again on the same state dir and forge, N times (default 50);
 * meanwhile an owner loops over the CLI (status, show, log, keep, unkeep, pause, unpause,
 * each a process) and a reader loops over the dashboard's JSON. The moments come from a
 * seeded random source: the seed is printed, and `--seed` replays a failing one.
 *
 * A dispatch a kill cut short before any worker of it started goes back to the queue by itself (three times in a
 * row, then the item fails); when it failed, or a worker may have started, the owner resumes (or retries) the item
 * as robot-army tells them to (a worker already launched is adopted by the daemon itself).
 *
 * Once every issue is finished (lib/daemon/rehearsal-end.ts) it stops the kept worker as
 * the rehearsal does, waits for every worktree's cleanup decision and for the last kill,
 * stops the daemon, the dashboard and the loops, and checks (lib/testing/soak-checks.ts):
 * every issue done, every worker retired or kept, every worktree reclaimed or recorded, no
 * comment or notification twice, no intent without an outcome unreported, each CLI write
 * audited once, integrity_check ok, no lock error or unparsable JSON reached a user, and no
 * process left behind naming the soak's folder. The bench prints the figures and never
 * fails; `runSoak` answers whether an invariant broke, which the test asserts.
 */
import { join } from "node:path";
import { existsSync, readFileSync } from "node:fs";
import { cloneRepository } from "../../lib/boundaries/git.ts";
import { loadConfig } from "../../lib/config.ts";
import { cleanupProgress, rehearsalProgress, waitForTheEnd } from "../../lib/daemon/rehearsal-end.ts";
import { keptSession } from "../../lib/ending/keeps.ts";
import { seedForge } from "../../lib/forge/seed.ts";
import { startForge } from "../../lib/forge/server.ts";
import { playTheOwner } from "../../lib/forge/rehearsal-owner.ts";
import { isDeno } from "../../lib/runtime.ts";
import { listRecords } from "../../lib/sessions/records.ts";
import { stopSession } from "../../lib/sessions/stop.ts";
import { openStore } from "../../lib/store/open.ts";
import { listItems } from "../../lib/work-items/queries.ts";
import { startDashboard } from "../../lib/testing/dashboard.ts";
import { makeTempDir, removeTempDir } from "../../lib/testing/fixtures.ts";
import { startNotifyReceivers } from "../../lib/testing/notify-receivers.ts";
import { checkSoakEnd, cutDispatches, describeCuts, unreportedIntents } from "../../lib/testing/soak-checks.ts";
import type { CutDispatches } from "../../lib/testing/soak-checks.ts";
import { LOCK_ERROR, cliProblem, loopOverCli, percentile, readDashboard, runCli, seededRandom, startDaemon, waitUntilNoneNaming } from "../../lib/testing/soak.ts";
import type { CliAnswer, CliFigures, DaemonProcess } from "../../lib/testing/soak.ts";
import type { Store } from "../../lib/store/open.ts";
import { sleep } from "../../lib/testing/wait.ts";
import { endSessions } from "../../lib/testing/workers.ts";
import { keepBeforeMerge, onboard, writeRehearsalConfig } from "../start.ts";

/** Kills when `--kills` is not given. */
export const SOAK_KILLS = 50;

/** How a soak is run. */
export interface SoakOptions {
  kills: number;
  seed: number;
  /** The kills are spread over about this long (default 60 s, about a rehearsal's length); no gap is shorter than 0.3 s. */
  spreadMs?: number;
  /** Gives up waiting for the end after this long (default: the spread and three minutes, twice a rehearsal's length). */
  limitMs?: number;
  /** How many owners loop over the CLI at once (default 1); the concurrency test runs two, racing each other's writes. */
  cliLoops?: number;
  /** Where progress lines go (default: nowhere). */
  say?: (line: string) => void;
}

/** What a soak found. */
export interface SoakResult {
  seed: number;
  kills: number;
  ms: number;
  figures: string[];
  broken: string[];
  /** The dashboard's JSON reads: how many, and their median and p99 in milliseconds. */
  web: { requests: number; p50Ms: number; p99Ms: number };
  /** What became of the dispatches the kills cut short, from the audit log. */
  cuts: CutDispatches;
}

/** The gaps, in milliseconds, between one daemon start and its kill: `kills` of them, uniform in [300, 2 * spread / kills]. */
export function killGaps(random: () => number, kills: number, spreadMs: number): number[] {
  const most = Math.max(1_000, (2 * spreadMs) / Math.max(1, kills));
  return Array.from({ length: kills }, () => Math.round(300 + random() * (most - 300)));
}

/** Runs one soak and checks its end; it throws only when the soak could not be set up. */
export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const say = options.say ?? (() => {});
  const started = Date.now();
  const result: SoakResult = { seed: options.seed, kills: 0, ms: 0, figures: [], broken: [], web: { requests: 0, p50Ms: NaN, p99Ms: NaN }, cuts: { requeued: 0, failed: 0, interrupted: 0, adopted: 0 } };
  const dir = makeTempDir("robot-army-soak-");
  const stateDir = join(dir, "state");
  const sessionRoot = join(stateDir, "sessions");
  const seeded = await seedForge(join(dir, "forge"));
  const forge = await startForge({ dir: join(dir, "forge") });
  const receivers = await startNotifyReceivers(join(dir, "receivers"));
  const repo = seeded.repository.full_name;
  const issues = seeded.issues.labelled;
  const owner = seeded.users.find((u) => u.trusted)!;
  const token = readFileSync(owner.token_file, "utf8").trim();
  const clone = join(dir, "widgets");
  await cloneRepository(dir, seeded.repository.clone_url, clone);
  const configFile = writeRehearsalConfig(dir, forge.url, owner.token_file, owner.login, clone, receivers.webhookUrl, { tickSeconds: 1, launcher: "process" });
  const config = await loadConfig({ path: configFile });
  await onboard(config, () => {}, stateDir);
  const env = soakEnv(dir, configFile);
  const store = await openStore(stateDir);
  const dashboard = await startDashboard({ env, cwd: clone });
  const play = playTheOwner({ apiBase: forge.url, token, repo, write: () => {}, beforeMerge: keepBeforeMerge(store, config, repo, issues[1]) });
  const itemsOf = (keptToo: boolean) => listItems(store, { repo }).filter((i) => keptToo || i.issue !== issues[1]).map((i) => i.id);
  const daemonArgs = ["--config", configFile, "--effect-level", "live"];
  const log = join(dir, "daemon.log");
  let daemon: DaemonProcess = startDaemon(daemonArgs, env, clone, log);
  const clis = Array.from({ length: options.cliLoops ?? 1 }, () => loopOverCli({ env, cwd: clone, items: () => itemsOf(false) }));
  const reader = readDashboard(dashboard.url, () => itemsOf(true));
  say(`soak in ${dir}: seed ${options.seed}, ${options.kills} kills, daemon pid ${daemon.pid}, dashboard ${dashboard.url}`);
  const keptSessions: string[] = [];
  let stopping = false;
  const resumer = resumeWhatACutLeft(store, repo, env, clone, () => stopping);
  try {
    const killing = (async () => {
      for (const gap of killGaps(seededRandom(options.seed), options.kills, options.spreadMs ?? 60_000)) {
        await sleep(gap);
        if (stopping) return;
        await daemon.kill();
        result.kills++;
        say(`kill ${result.kills}: daemon pid ${daemon.pid} SIGKILLed ${gap} ms after its start`);
        daemon = startDaemon(daemonArgs, env, clone, log);
      }
    })();
    const limitMs = options.limitMs ?? (options.spreadMs ?? 60_000) + 180_000;
    const finished = await waitForTheEnd({ check: () => rehearsalProgress(store, repo, issues, keptSession), limitMs, stopped: () => false });
    if (finished.how !== "finished") throw new SoakGaveUp(`not finished after ${limitMs / 1000}s: ${finished.progress ? finished.progress.issues.flatMap((i) => i.waiting).join("; ") : "the store could not be read"}`);
    for (const session of finished.progress!.kept) {
      keptSessions.push(session.id);
      const record = listRecords(sessionRoot).find((r) => r.name === session.name);
      say(`every issue finished; the kept worker ${session.name} is stopped now, as the rehearsal stops it`);
      if (record) await stopSession(sessionRoot, record).catch(() => {});
    }
    const reclaimed = await waitForTheEnd({
      check: () => {
        const progress = cleanupProgress(store, rehearsalProgress(store, repo, issues, keptSession));
        return { ...progress, finished: progress.finished && result.kills === options.kills };
      },
      limitMs: Math.max(0, limitMs - (Date.now() - started)), stopped: () => false,
    });
    if (reclaimed.how !== "finished") throw new SoakGaveUp(`not reclaimed: ${reclaimed.progress?.waiting.join("; ") ?? "the store could not be read"} (${result.kills} of ${options.kills} kills)`);
    await killing;
    // An effect the last kills cut short may still be within its kind's settle window (a comment, 60 s): the
    // daemon running now settles or reports it once that has passed, and the end is checked after.
    const settled = await waitForTheEnd({
      check: () => {
        const left = unreportedIntents(store);
        return { finished: left.length === 0, waiting: left.map((i) => `${i.kind} ${i.actionId} (record ${i.id})`) };
      },
      limitMs: 120_000, stopped: () => false,
    });
    if (settled.how !== "finished") throw new SoakGaveUp(`intents still neither settled nor reported after 120 s: ${settled.progress?.waiting.join("; ")}`);
  } catch (error) {
    if (!(error instanceof SoakGaveUp)) throw error;
    result.broken.push(`the soak gave up: ${error.message}; the daemon's output is in ${log}`);
  } finally {
    stopping = true;
    const resumed = await resumer;
    const [webFigures, ...each] = await Promise.all([reader.stop(), ...clis.map((cli) => cli.stop())]);
    const cliFigures = mergeCliFigures(each);
    result.web = { requests: webFigures.requests, p50Ms: percentile(webFigures.ms, 0.5), p99Ms: percentile(webFigures.ms, 0.99) };
    const ended = await daemon.stop();
    await dashboard.stop();
    await play.stop();
    result.cuts = cutDispatches(store);
    store.close();
    result.figures.push(`kills survived: ${result.kills} of ${options.kills} (seed ${options.seed}); the last daemon stopped by SIGTERM ended ${ended.code ?? ended.signal}`);
    result.figures.push(`CLI: ${clis.length} at once, ${cliFigures.commands} commands, ${cliFigures.json} JSON answers parsed, exits ${JSON.stringify(cliFigures.codes)}, ${cliFigures.problems.length} problems`);
    result.figures.push(`owner's commands for items cut dispatches left interrupted or failed: ${resumed.tried.length} (${tally(resumed.tried)})`);
    result.broken.push(...resumed.problems);
    result.figures.push(`dashboard: ${webFigures.requests} JSON reads, p50 ${percentile(webFigures.ms, 0.5).toFixed(1)} ms, p99 ${percentile(webFigures.ms, 0.99).toFixed(1)} ms, ${webFigures.problems.length} problems`);
    result.broken.push(...cliFigures.problems, ...webFigures.problems);
    // What `run` promises of a SIGTERM is a stop between steps with its lock released, then exit 0, on either runtime.
    if (ended.code !== 0) result.broken.push(`the last daemon, stopped by SIGTERM, ended ${ended.code ?? ended.signal}; its output is in ${log}`);
    if (existsSync(join(stateDir, "daemon.lock"))) result.broken.push(`the last daemon, stopped by SIGTERM, left its lock ${join(stateDir, "daemon.lock")}`);
    // The daemon's output is the owner's view of `run`: no lock error may reach it either.
    const said = readFileSync(log, "utf8").split("\n");
    for (const line of said.filter((l) => LOCK_ERROR.test(l))) result.broken.push(`a lock error reached the daemon's output: ${line.slice(0, 300)}`);
    const count = (pattern: RegExp) => said.filter((l) => pattern.test(l)).length;
    result.figures.push(`daemon: ${count(/^tick \d+/)} tick summaries, ${count(/steps? failed: /)} with a step failed`);
    if (!said.join("\n").trimEnd().split("\n").at(-2)?.startsWith("stopping: SIGTERM received")) {
      result.broken.push(`the last daemon did not say it was stopping on SIGTERM; its output is in ${log}`);
    }
    const verdict = await checkSoakEnd({
      stateDir, worktreeRoot: join(dir, "worktrees"), forgeUrl: forge.url, token, repo, issues, keptSessions,
      webhook: receivers.received().webhook, writes: cliFigures.writes,
    });
    result.figures.push(...verdict.figures);
    result.broken.push(...verdict.broken);
    // Everything the soak started has stopped: whatever still names its folder was left behind.
    const left = await waitUntilNoneNaming(dir, 10_000);
    result.figures.push(`processes left behind: ${left.length}`);
    for (const p of left) result.broken.push(`process ${p.pid} was left behind: ${p.command}`);
    await endSessions(sessionRoot).catch(() => {});
    await receivers.close();
    await forge.close();
    result.ms = Date.now() - started;
    if (result.broken.length === 0) removeTempDir(dir);
    else say(`the soak's files stay in ${dir}`);
  }
  return result;
}

/**
 * The owner doing what robot-army asks of them when kills cut a dispatch short: the item is
 * interrupted ("its dispatch was cut short", a worker may have started and none is adopted),
 * or failed (cut short before any worker started more times in a row than it goes back to the
 * queue by itself), and `robot-army resume <id>` takes it on, or, when resume answers that
 * the item has no worktree and names `robot-army retry <id>`, retry does. Looks twice a
 * second until `stopped`; a command that fails is a problem, one refused (exit 3: paused by
 * the other owner loop, say) is asked again while the item is still interrupted.
 */
export async function resumeWhatACutLeft(store: Store, repo: string, env: Record<string, string | undefined>, cwd: string, stopped: () => boolean): Promise<{ tried: CliAnswer[]; problems: string[] }> {
  const tried: CliAnswer[] = [];
  const problems: string[] = [];
  // Resume at the daemon's effect level: the soak's config leaves it at plan, where resume refuses (exit 3) for good.
  // Retry only puts the item back in the queue, at any level, and takes no --effect-level.
  const run = async (argv: string[]) => {
    const answer = await runCli(argv[0] === "resume" ? [...argv, "--effect-level", "live"] : argv, env, cwd);
    tried.push(answer);
    const problem = cliProblem(answer);
    if (problem) problems.push(problem);
    return answer;
  };
  while (!stopped()) {
    // Interrupted (a worker may have started), or failed after its dispatch was cut short before any worker started, too many times in a row.
    for (const item of listItems(store, { repo, states: ["interrupted", "failed"] })) {
      if (!item.reason?.startsWith("its dispatch was cut short")) continue;
      const resumed = await run(["resume", String(item.id)]);
      if (resumed.code === 3 && (resumed.stderr + resumed.stdout).includes(`robot-army retry ${item.id}`)) await run(["retry", String(item.id)]);
    }
    await sleep(500);
  }
  return { tried, problems };
}

/** How many of each command, and how each ended: `resume exit 3 x2, retry exit 0 x1`. */
export function tally(answers: CliAnswer[]): string {
  const counts = new Map<string, number>();
  for (const a of answers) counts.set(`${a.argv[0]} ${a.argv[1]} exit ${a.code}`, (counts.get(`${a.argv[0]} ${a.argv[1]} exit ${a.code}`) ?? 0) + 1);
  return [...counts].map(([what, n]) => `${what} x${n}`).join(", ") || "none needed";
}

/** The figures of several CLI loops as one: counts added, problems joined. */
function mergeCliFigures(each: CliFigures[]): CliFigures {
  const merged: CliFigures = { commands: 0, json: 0, codes: {}, writes: {}, problems: [] };
  const add = (into: Record<string, number>, from: Record<string, number>) => {
    for (const [key, n] of Object.entries(from)) into[key] = (into[key] ?? 0) + n;
  };
  for (const figures of each) {
    merged.commands += figures.commands;
    merged.json += figures.json;
    add(merged.codes, figures.codes);
    add(merged.writes, figures.writes);
    merged.problems.push(...figures.problems);
  }
  return merged;
}

/** The soak gave up waiting for the rehearsal's end: a broken invariant, not a failure to run. */
class SoakGaveUp extends Error {}

/** The environment of everything the soak starts: its own HOME, state dir, session root and config, and no tmux. */
export function soakEnv(dir: string, configFile: string): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith("RA_") || key === "TMUX") delete env[key];
  return {
    ...env, HOME: join(dir, "home"), XDG_CONFIG_HOME: join(dir, "home", ".config"), XDG_STATE_HOME: join(dir, "home", ".state"), NO_COLOR: "1",
    RA_STATE_DIR: join(dir, "state"), RA_SESSION_ROOT: join(dir, "state", "sessions"), RA_CONFIG: configFile,
    ...(isDeno() ? {} : { NODE_COMPILE_CACHE: join(dir, "compile-cache") }),
  };
}

/**
 * The bench's entry: runs `runs` soaks in a row (seeds `seed`, `seed + 1`, ...), printing each
 * one's figures and every invariant broken, and stops at the first that broke one; then the
 * runs that held, and what became of every dispatch the kills cut short. Returns 0, or 1 when
 * an invariant broke.
 */
export async function benchSoak(options: { kills?: number; seed?: number; runs?: number }): Promise<number> {
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const kills = options.kills ?? SOAK_KILLS;
  const runs = options.runs ?? 1;
  const totals: CutDispatches = { requeued: 0, failed: 0, interrupted: 0, adopted: 0 };
  let held = 0;
  for (let run = 0; run < runs; run++) {
    const at = seed + run;
    console.log(`soak${runs > 1 ? ` ${run + 1} of ${runs}` : ""}: the rehearsal with its daemon SIGKILLed ${kills} times at random moments, seed ${at} (replay: npm run bench -- soak --kills ${kills} --seed ${at})`);
    const result = await runSoak({ kills, seed: at, say: (line) => console.log(`  ${line}`) });
    console.log([
      `soak: ${(result.ms / 1000).toFixed(1)} s on ${isDeno() ? "deno" : "node"}`,
      ...result.figures.map((f) => `  ${f}`),
      result.broken.length ? `  BROKEN (${result.broken.length}):` : "  every invariant holds",
      ...result.broken.map((b) => `    ${b}`),
    ].join("\n"));
    for (const key of Object.keys(totals) as Array<keyof CutDispatches>) totals[key] += result.cuts[key];
    if (result.broken.length) break;
    held++;
  }
  if (runs > 1) {
    console.log(`soak: ${held} of ${runs} runs in a row held every invariant (seeds ${seed}-${seed + runs - 1}, ${kills} kills each); dispatches cut short: ${describeCuts(totals)}`);
  }
  return held === runs ? 0 : 1;
}
