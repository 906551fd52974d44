/**
 * `npm run bench -- soak-hosts [--kills N] [--seed S]`: the rehearsal's lifecycle on two
 * machines at once. One sandbox forge with demo/widgets and six labelled issues; two hosts,
 * alpha and beta, each with its own clone, config (`[daemon] host`, a 30 s `[claims] lease`
 * so heartbeats come every 10 s) and state, each running `robot-army run` at live with the
 * demo worker and two sessions; the owner merging every pull request. Either daemon,
 * chosen by a seeded random source, is SIGKILLed at random moments and started again on its
 * own state, N times (default 20); a dispatch a kill cut short is resumed as the owner would
 * (scripts/dev/bench-soak.ts `resumeWhatACutLeft`).
 *
 * Once every issue is done on both hosts and every worktree reclaimed, it stops both daemons
 * and checks (lib/testing/soak-checks.ts `checkHostsEnd`): every issue dispatched exactly
 * once (one dispatch comment, one host's sessions), none lost (done on both hosts), every
 * worker retired and worktree reclaimed, no claim left on GitHub, no intent unreported.
 * It prints, for each host, the requests it spent on claims and heartbeats (every
 * reference and commit request, told apart by the user agent that names the host), per
 * hour at the soak's lease, and what that comes to at the default 10-minute lease.
 */
import { join } from "node:path";
import { mkdirSync, readFileSync } from "node:fs";
import { cloneRepository } from "../../lib/boundaries/git.ts";
import { loadConfig } from "../../lib/config.ts";
import { cleanupProgress, rehearsalProgress, waitForTheEnd } from "../../lib/daemon/rehearsal-end.ts";
import { keptSession } from "../../lib/ending/keeps.ts";
import { seedForge } from "../../lib/forge/seed.ts";
import { startForge } from "../../lib/forge/server.ts";
import type { ForgeStats } from "../../lib/forge/traffic.ts";
import { playTheOwner } from "../../lib/forge/rehearsal-owner.ts";
import { isDeno } from "../../lib/runtime.ts";
import { queryAudit } from "../../lib/store/audit.ts";
import { openStore } from "../../lib/store/open.ts";
import type { Store } from "../../lib/store/open.ts";
import { makeTempDir, removeTempDir } from "../../lib/testing/fixtures.ts";
import { checkHostsEnd, unreportedIntents } from "../../lib/testing/soak-checks.ts";
import type { SoakHost } from "../../lib/testing/soak-checks.ts";
import { seededRandom, startDaemon, waitUntilNoneNaming } from "../../lib/testing/soak.ts";
import type { CliAnswer, DaemonProcess } from "../../lib/testing/soak.ts";
import { sleep } from "../../lib/testing/wait.ts";
import { endSessions } from "../../lib/testing/workers.ts";
import { onboard, writeRehearsalConfig } from "../start.ts";
import { killGaps, resumeWhatACutLeft, soakEnv, tally } from "./bench-soak.ts";

/** Kills when `--kills` is not given. */
export const HOSTS_SOAK_KILLS = 20;

/** The soak's lease: short, so that heartbeats and the claims' checks come often within a run of minutes. */
const LEASE = "30s";

/** How a soak of two hosts is run. */
export interface HostsSoakOptions {
  kills: number;
  seed: number;
  /** Labelled issues (default 6). */
  issues?: number;
  /** The kills are spread over about this long (default 40 s, within the two-host rehearsal's length). */
  spreadMs?: number;
  /** Gives up waiting for the end after this long (default: the spread and four minutes). */
  limitMs?: number;
  say?: (line: string) => void;
}

/** What one host spent on claims and heartbeats. */
export interface HostSpend {
  host: string;
  /** Requests on references and commits (claims and heartbeats alike), by route. */
  requests: number;
  byRoute: Record<string, number>;
  beats: number;
  claimWrites: number;
}

/** What a soak of two hosts found. */
export interface HostsSoakResult {
  seed: number;
  kills: number;
  ms: number;
  figures: string[];
  broken: string[];
  spend: HostSpend[];
}

interface Host extends SoakHost {
  env: Record<string, string | undefined>;
  clone: string;
  store: Store;
  daemon: DaemonProcess;
  log: string;
}

/** Runs one soak of two hosts and checks its end; it throws only when the soak could not be set up. */
export async function runHostsSoak(options: HostsSoakOptions): Promise<HostsSoakResult> {
  const say = options.say ?? (() => {});
  const started = Date.now();
  const result: HostsSoakResult = { seed: options.seed, kills: 0, ms: 0, figures: [], broken: [], spend: [] };
  const dir = makeTempDir("robot-army-soak-hosts-");
  const seeded = await seedForge(join(dir, "forge"), { issues: options.issues ?? 6 });
  const forge = await startForge({ dir: join(dir, "forge") });
  const repo = seeded.repository.full_name;
  const issues = seeded.issues.labelled;
  const owner = seeded.users.find((u) => u.trusted)!;
  const token = readFileSync(owner.token_file, "utf8").trim();
  const hosts: Host[] = [];
  for (const name of ["alpha", "beta"]) {
    const home = join(dir, name);
    mkdirSync(home, { recursive: true });
    const clone = join(home, "widgets");
    await cloneRepository(home, seeded.repository.clone_url, clone);
    const configFile = writeRehearsalConfig(home, forge.url, owner.token_file, owner.login, clone, undefined, { tickSeconds: 1, launcher: "process", host: name, lease: LEASE });
    const stateDir = join(home, "state");
    await onboard(await loadConfig({ path: configFile }), () => {}, stateDir);
    const env = soakEnv(home, configFile);
    const log = join(home, "daemon.log");
    const daemon = startDaemon(["--config", configFile, "--effect-level", "live"], env, clone, log);
    hosts.push({ host: name, stateDir, worktreeRoot: join(home, "worktrees"), env, clone, store: await openStore(stateDir), daemon, log });
  }
  const play = playTheOwner({ apiBase: forge.url, token, repo, write: () => {} });
  say(`soak of two hosts in ${dir}: seed ${options.seed}, ${options.kills} kills, ${issues.length} issues; ${hosts.map((h) => `${h.host} pid ${h.daemon.pid}`).join(", ")}`);
  let stopping = false;
  const resumers = hosts.map((h) => resumeWhatACutLeft(h.store, repo, h.env, h.clone, () => stopping));
  const everyStore = <P extends { finished: boolean; waiting: string[] }>(check: (h: Host) => P) => () => {
    const each = hosts.map((h) => ({ h, progress: check(h) }));
    return { finished: each.every((e) => e.progress.finished), waiting: each.flatMap((e) => e.progress.waiting.map((w) => `${e.h.host}: ${w}`)) };
  };
  try {
    const random = seededRandom(options.seed);
    const killing = (async () => {
      for (const gap of killGaps(random, options.kills, options.spreadMs ?? 40_000)) {
        await sleep(gap);
        if (stopping) return;
        const host = hosts[Math.floor(random() * hosts.length)];
        await host.daemon.kill();
        result.kills++;
        say(`kill ${result.kills}: ${host.host}'s daemon pid ${host.daemon.pid} SIGKILLed`);
        host.daemon = startDaemon(["--config", join(dir, host.host, "config.toml"), "--effect-level", "live"], host.env, host.clone, host.log);
      }
    })();
    const limitMs = options.limitMs ?? (options.spreadMs ?? 40_000) + 240_000;
    const done = await waitForTheEnd({
      check: everyStore((h) => {
        const progress = rehearsalProgress(h.store, repo, issues, keptSession);
        const reclaimed = cleanupProgress(h.store, progress);
        return { finished: progress.finished && reclaimed.finished, waiting: [...progress.issues.flatMap((i) => i.waiting), ...reclaimed.waiting] };
      }),
      limitMs, stopped: () => false,
    });
    if (done.how !== "finished") throw new HostsSoakGaveUp(`not finished after ${limitMs / 1000}s: ${done.progress?.waiting.join("; ") ?? "a store could not be read"}`);
    stopping = true;
    await killing;
    const settled = await waitForTheEnd({
      check: everyStore((h) => {
        const left = unreportedIntents(h.store);
        return { finished: left.length === 0, waiting: left.map((i) => `${i.kind} ${i.actionId} (record ${i.id})`) };
      }),
      limitMs: 120_000, stopped: () => false,
    });
    if (settled.how !== "finished") throw new HostsSoakGaveUp(`intents still neither settled nor reported after 120 s: ${settled.progress?.waiting.join("; ")}`);
    // The claims of done items are released by the next passes: waited for before the daemons stop.
    const released = await waitForTheEnd({
      check: everyStore((h) => {
        const held = h.store.statement("SELECT repo, issue FROM issue_claims WHERE mine = 1 AND released_at IS NULL").all() as Array<{ repo: string; issue: number }>;
        return { finished: held.length === 0, waiting: held.map((c) => `the claim of ${c.repo}#${c.issue} is still held`) };
      }),
      limitMs: 60_000, stopped: () => false,
    });
    if (released.how !== "finished") throw new HostsSoakGaveUp(`claims not released after 60 s: ${released.progress?.waiting.join("; ")}`);
  } catch (error) {
    if (!(error instanceof HostsSoakGaveUp)) throw error;
    result.broken.push(`the soak gave up: ${error.message}; the daemons' output is in ${hosts.map((h) => h.log).join(" and ")}`);
  } finally {
    stopping = true;
    const resumed = await Promise.all(resumers);
    const ended = await Promise.all(hosts.map((h) => h.daemon.stop()));
    await play.stop();
    const seconds = (Date.now() - started) / 1000;
    const stats = (await (await fetch(`${forge.url}/_forge/stats`)).json()) as ForgeStats;
    for (const h of hosts) {
      result.spend.push(spendOf(h, stats));
      h.store.close();
    }
    const tried: CliAnswer[] = resumed.flatMap((r) => r.tried);
    result.figures.push(`kills survived: ${result.kills} of ${options.kills} (seed ${options.seed}); the last daemons stopped by SIGTERM ended ${ended.map((e) => e.code ?? e.signal).join(" and ")}`);
    result.figures.push(`owner's commands for items cut dispatches left interrupted or failed: ${tried.length} (${tally(tried)})`);
    result.broken.push(...resumed.flatMap((r) => r.problems));
    for (const [i, e] of ended.entries()) if (e.code !== 0) result.broken.push(`${hosts[i].host}'s last daemon, stopped by SIGTERM, ended ${e.code ?? e.signal}; its output is in ${hosts[i].log}`);
    const verdict = await checkHostsEnd({ hosts, forgeUrl: forge.url, token, repo, issues });
    result.figures.push(...verdict.figures);
    result.broken.push(...verdict.broken);
    for (const spend of result.spend) result.figures.push(describeSpend(spend, seconds));
    const left = await waitUntilNoneNaming(dir, 10_000);
    result.figures.push(`processes left behind: ${left.length}`);
    for (const p of left) result.broken.push(`process ${p.pid} was left behind: ${p.command}`);
    for (const h of hosts) await endSessions(join(h.stateDir, "sessions")).catch(() => {});
    await forge.close();
    result.ms = Date.now() - started;
    if (result.broken.length === 0) removeTempDir(dir);
    else say(`the soak's files stay in ${dir}`);
  }
  return result;
}

/** The host's requests on references and commits, as the forge counted them by its user agent, and its beats and claim writes, from its audit log. */
function spendOf(host: Host, stats: ForgeStats): HostSpend {
  const byRoute: Record<string, number> = {};
  for (const [agent, counts] of Object.entries(stats.by_agent)) {
    if (!agent.startsWith(`robot-army (host ${host.host}) `)) continue;
    for (const [route, n] of Object.entries(counts.by_route)) if (route.includes("/git/")) byRoute[route] = (byRoute[route] ?? 0) + n;
  }
  const outcomes = (kind: string) => queryAudit(host.store, { kind }).filter((r) => r.phase === "outcome" && r.body.ok === true).length;
  return {
    host: host.host, byRoute, requests: Object.values(byRoute).reduce((a, b) => a + b, 0),
    beats: outcomes("host.heartbeat"), claimWrites: outcomes("claim.create") + outcomes("claim.release"),
  };
}

/**
 * One host's spend in words: what it sent on references and commits, per hour at the soak's
 * lease; and the heartbeats' share at the default 10-minute lease, where a beat comes every
 * 3m20s and costs at most four requests (the hosts listed, a commit, the move, the claims
 * listed), whatever the number of items. Claims cost what they cost here at any lease.
 */
export function describeSpend(spend: HostSpend, seconds: number): string {
  const perHour = (n: number) => Math.round((n * 3600) / seconds);
  const routes = Object.entries(spend.byRoute).sort().map(([route, n]) => `${route.replace("/repos/{owner}/{repo}/git/", "")} ${n}`).join(", ");
  return `${spend.host}: ${spend.requests} requests on claims and heartbeats in ${seconds.toFixed(0)} s, ${perHour(spend.requests)} an hour at a ${LEASE} lease ` +
    `(${spend.beats} heartbeats, ${spend.claimWrites} claims made, moved or released; ${routes}); ` +
    `at the default 10m lease its heartbeats take at most ${(3600 / 200) * 4} requests an hour per repository`;
}

/** The soak gave up waiting for its end: a broken invariant, not a failure to run. */
class HostsSoakGaveUp extends Error {}

/** The bench's entry: one soak of two hosts, its figures and every invariant broken; 0, or 1 when one broke. */
export async function benchHostsSoak(options: { kills?: number; seed?: number }): Promise<number> {
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const kills = options.kills ?? HOSTS_SOAK_KILLS;
  console.log(`soak-hosts: the rehearsal on two hosts, either daemon SIGKILLed ${kills} times at random moments, seed ${seed} (replay: npm run bench -- soak-hosts --kills ${kills} --seed ${seed})`);
  const result = await runHostsSoak({ kills, seed, say: (line) => console.log(`  ${line}`) });
  console.log([
    `soak-hosts: ${(result.ms / 1000).toFixed(1)} s on ${isDeno() ? "deno" : "node"}`,
    ...result.figures.map((f) => `  ${f}`),
    result.broken.length ? `  BROKEN (${result.broken.length}):` : "  every invariant holds",
    ...result.broken.map((b) => `    ${b}`),
  ].join("\n"));
  return result.broken.length ? 1 : 0;
}
