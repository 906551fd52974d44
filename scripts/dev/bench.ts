/**
 * `npm run bench [-- <name>] [--runs N]`: prints benchmark figures; it never fails the
 * suite. With no name it runs every benchmark (`cli`, `poll`, `store`, `pass`, `web`).
 *
 * `cli`: the start of a command, started as `npx robot-army` starts it (bin/robot-army.mjs,
 * a new process each run, with Node's compile cache as any machine that has run robot-army
 * once has it), against `node -e 0` on the same Node, each beside its target (CLI_TARGETS):
 * `log --limit 1` on a state dir with a few audit records (1.5x), `status` with no config
 * file (1.8x), `--help` (1.5x), the very first start with an empty compile cache (3x), and
 * `log` on Deno against `deno eval 0` (2x). The `.ts` router started directly and an empty
 * `.ts` file follow for information. Beside each wall time, where Linux's /proc says it, the
 * mean CPU time of a run and its ratio: the steadier figure on a busy machine.
 *
 * `poll`: one intake pass over 5 repositories of 200 labelled issues each on the sandbox
 * forge (in process, at the plan level), cold (an empty store: every page is read and
 * 1000 items made) and warm (nothing changed since), with the requests and 304 answers
 * the forge counted; the target is one request per repository, all answered 304.
 *
 * `store`: a store grown old, 200,000 audit records (about 50 MB) with 100 effects a crash
 * left without an outcome: how long an open takes as every command opens it (no page
 * check), as the daemon and doctor open it (every page read), and the unfinished-effect
 * sweep's query of intents without an outcome: the whole log, as a daemon's first tick reads
 * it, and since a cursor, as every tick after it does (the 100 read again, still waited for).
 *
 * `pass`: one daemon tick over 10,000 work items, 200 with live sessions, with nothing to
 * do and with 200 retirement candidates (scripts/dev/bench-pass.ts).
 *
 * `web`: the dashboard, `robot-army serve` as a process of its own, over the pass benchmark's
 * store: median and p99 of 200 requests each of `/active` and `/` (and `/api/active` for
 * information), and the server's peak memory, then the pages again while the daemon ticks once
 * a second over the same store; the target is p99 under 50 ms and under 100 MiB
 * (scripts/dev/bench-web.ts).
 *
 * `soak`: the rehearsal with its daemon SIGKILLed at random moments (`--kills N`, default 50,
 * `--seed S` to replay one) and restarted, while the CLI and the dashboard are used; it
 * prints each invariant's figure and any broken, and what became of each dispatch a kill cut
 * short (scripts/dev/bench-soak.ts). `--runs N` runs N soaks in a row, stopping at the first
 * that broke an invariant. Not run when no name is given: it takes minutes.
 *
 * `soak-hosts`: the rehearsal on two hosts against one forge, either daemon SIGKILLed at
 * random moments (`--kills N`, default 20): every issue dispatched exactly once, none lost,
 * and the requests each host spent per hour on claims and heartbeats
 * (scripts/dev/bench-soak-hosts.ts). Not run when no name is given either.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { CommandDef } from "../../lib/cli.ts";
import { integerOption, parse, runMain } from "../../lib/cli.ts";
import { UsageError } from "../../lib/errors.ts";
import { makeTempDir, removeTempDir } from "../../lib/testing/fixtures.ts";
import { appendAudit, intentsWithoutOutcome, lastAuditId } from "../../lib/store/audit.ts";
import { openStore } from "../../lib/store/open.ts";
import { benchPass } from "./bench-pass.ts";
import { benchSoak } from "./bench-soak.ts";
import { benchHostsSoak } from "./bench-soak-hosts.ts";
import { benchWeb } from "./bench-web.ts";

export const command: CommandDef = {
  name: "bench",
  summary: "Print benchmark figures (start-up cost of the CLI, requests of a poll)",
  usage: "bench [cli|poll|store|pass|web|soak|soak-hosts] [--runs N] [--warmups N] [--kills N] [--seed S]",
  options: {
    runs: { type: "string", value: "N", description: "Timed runs of each command (default 15); soak: soaks in a row, seeds S, S+1, ... (default 1)" },
    warmups: { type: "string", value: "N", description: "Untimed runs first (default 2)" },
    kills: { type: "string", value: "N", description: "soak: how many times the daemon is SIGKILLed (default 50; soak-hosts: either daemon, 20)" },
    seed: { type: "string", value: "S", description: "soak, soak-hosts: the seed of its random moments (default: a new one, printed)" },
  },
  positionals: { max: 1 },
};

/** The start-up targets: each command's start at most this many times the bare runtime's (`node -e 0`, `deno eval 0`). */
export const CLI_TARGETS = { log: 1.5, status: 1.8, help: 1.5, firstStart: 3, deno: 2 };

const BENCHMARKS: Record<string, (runs: Runs) => Promise<void>> = {
  cli: benchCli, poll: benchPoll, store: benchStore, pass: benchPass, web: benchWeb,
  soak: async ({ kills, seed, soakRuns }) => {
    if (await benchSoak({ kills, seed, runs: soakRuns })) process.exitCode = 1;
  },
  "soak-hosts": async ({ kills, seed }) => {
    if (await benchHostsSoak({ kills, seed })) process.exitCode = 1;
  },
};

/** The benchmarks run when none is named: all but the soaks, which take minutes. */
const BY_DEFAULT = ["cli", "poll", "store", "pass", "web"];

interface Runs {
  runs: number;
  warmups: number;
  kills?: number;
  seed?: number;
  /** soak: how many soaks in a row (`--runs`, default 1). */
  soakRuns?: number;
}

const root = fileURLToPath(new URL("../..", import.meta.url));

export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const runs = {
    runs: integerOption(args, "runs", 1) ?? 15, warmups: integerOption(args, "warmups", 0) ?? 2,
    kills: integerOption(args, "kills", 0), seed: integerOption(args, "seed", 0), soakRuns: integerOption(args, "runs", 1),
  };
  const names = args.positionals.length ? args.positionals : BY_DEFAULT;
  for (const name of names) {
    const bench = Object.hasOwn(BENCHMARKS, name) ? BENCHMARKS[name] : undefined;
    if (!bench) throw new UsageError(`Unknown benchmark "${name}"; there are: ${Object.keys(BENCHMARKS).join(", ")}`);
    await bench(runs);
  }
  return 0;
}

/** One command to time: what to call it, its argv, its extra environment. */
interface Case {
  label: string;
  argv: string[];
  env?: Record<string, string>;
  /** Printed after the figure: what this case shows. */
  note?: string;
  /** Extra environment made anew for each run (a fresh, empty cache). */
  fresh?: () => Record<string, string>;
}

async function benchCli({ runs, warmups }: Runs): Promise<void> {
  const dir = makeTempDir("robot-army-bench-");
  try {
    const stateDir = join(dir, "state");
    await seedAuditLog(stateDir);
    const emptyTs = join(dir, "empty.ts");
    writeFileSync(emptyTs, "export {};\n");
    const node = nodeBinary();
    const deno = realpathSync(join(root, "node_modules", ".bin", "deno"));
    const bin = join(root, "bin", "robot-army.mjs");
    const router = join(root, "scripts", "robot-army.ts");
    const denoRun = [deno, "run", "-A", "--quiet", "--config", join(root, "deno.json"), router];
    const log = ["log", "--limit", "1"];
    const cache = (name: string) => ({ NODE_COMPILE_CACHE: join(dir, name) });
    let firstStarts = 0;

    const baseline: Case = { label: "node -e 0", argv: [node, "-e", "0"] };
    const subject: Case = { label: "robot-army log --limit 1", argv: [node, bin, ...log], env: cache("compile-cache") };
    const status: Case = { label: "robot-army status", argv: [node, bin, "status"], env: cache("compile-cache"), note: "no config file: every default" };
    const help: Case = { label: "robot-army --help", argv: [node, bin, "--help"], env: cache("compile-cache"), note: "the router alone" };
    const firstStart: Case = {
      label: "first start (empty compile cache)",
      argv: [node, bin, ...log],
      env: {},
      fresh: () => cache(`first-start-${firstStarts++}`),
      note: "once per machine and robot-army version",
    };
    const explain: Case[] = [
      { label: "  node scripts/robot-army.ts log", argv: [node, router, ...log], note: "the .ts router started directly: no compile cache" },
      { label: "  node <empty .ts file>", argv: [node, emptyTs], note: "loading Node's type stripper, paid by any .ts entry point" },
    ];
    const denoBaseline: Case = { label: "deno eval 0", argv: [deno, "eval", "0"] };
    const denoSubject: Case = { label: "robot-army log --limit 1 on deno", argv: [...denoRun, ...log] };

    // The headline figures are plain starts: no compile cache, config or options from outside.
    const env: NodeJS.ProcessEnv = { ...process.env, RA_STATE_DIR: stateDir, XDG_CONFIG_HOME: join(dir, "config") };
    delete env.RA_CONFIG;
    delete env.NODE_COMPILE_CACHE;
    delete env.NODE_OPTIONS;
    checkLogOutput(subject, { ...env, ...subject.env });
    checkLogOutput(denoSubject, env);
    const { wall: medians, cpu } = timeInterleaved([baseline, subject, status, help, firstStart, ...explain, denoBaseline, denoSubject], env, runs, warmups);

    const nodeVersion = run([node, "--version"], env).trim();
    const denoVersion = run([deno, "--version"], env).split(" (")[0].trim();
    const width = 42;
    // The CPU time's ratio beside the wall time's, for information: the targets are read on the wall time.
    const cpuOf = (c: Case, against?: Case) => cpu ? `  cpu ${ms(cpu.get(c)!).trim()}${against ? ` ${times(cpu.get(c)! / cpu.get(against)!)}` : ""}` : "";
    const row = (c: Case, against?: Case, tail = "") =>
      `  ${c.label.padEnd(width)}${ms(medians.get(c)!)}${against ? `  ${times(medians.get(c)! / medians.get(against)!)}` : ""}${cpuOf(c, against)}${tail}`;
    const targeted = (c: Case, against: Case, target: number) => {
      const ratio = medians.get(c)! / medians.get(against)!;
      return row(c, against, `  target at most ${target}x: ${ratio <= target ? "met" : "NOT MET"}${c.note ? ` (${c.note})` : ""}`);
    };
    const lines = [
      `cli: the start of a command against the bare runtime's (\`npx robot-army\`, a new process each run)`,
      `  (node ${nodeVersion}, ${denoVersion}; median of ${runs} runs after ${warmups} warm-ups, interleaved${cpu ? "; cpu: the mean CPU time of a run, its children's included" : ""})`,
      row(baseline),
      targeted(subject, baseline, CLI_TARGETS.log),
      targeted(status, baseline, CLI_TARGETS.status),
      targeted(help, baseline, CLI_TARGETS.help),
      targeted(firstStart, baseline, CLI_TARGETS.firstStart),
      "  for information:",
      ...explain.map((c) => row(c, baseline, c.note ? `  ${c.note}` : "")),
      row(denoBaseline),
      targeted(denoSubject, denoBaseline, CLI_TARGETS.deno),
    ];
    console.log(lines.join("\n"));
  } finally {
    removeTempDir(dir);
  }
}

/** The poll benchmark's forge: this many repositories with this many labelled issues each. */
export const POLL_REPOS = 5;
export const POLL_ISSUES = 200;

/** How many repositories the idle-poll cost is measured over. */
const IDLE_REPOS = [1, 5, 20] as const;

async function benchPoll({ runs }: Runs): Promise<void> {
  // The cold poll's target (issue 28): at most this many requests and milliseconds for the POLL_REPOS x POLL_ISSUES new issues.
  const COLD_POLL_REQUESTS = 1100;
  const COLD_POLL_MS = 2000;
  const bench = await pollBench(POLL_REPOS, POLL_ISSUES);
  try {
    // The first poll reads each repository's own list whole; the next reads the one list once (every repository has
    // been read on its own by then); from there on nothing changed costs one request.
    const cold = await bench.pass();
    const joining = await bench.pass();
    const warm = [];
    for (let run = 0; run < runs; run++) warm.push(await bench.pass());
    const warmMedian = { ...warm[0], wall: median(warm.map((w) => w.wall)), cpu: median(warm.map((w) => w.cpu)) };
    const met = warm.every((w) => w.requests === 1 && w.notModified === 1 && w.made === 0);
    const coldMet = cold.requests <= COLD_POLL_REQUESTS && cold.wall <= COLD_POLL_MS && cold.made === POLL_REPOS * POLL_ISSUES;
    const row = (label: string, p: { wall: number; cpu: number; requests: number; notModified: number; made: number }) =>
      `  ${label.padEnd(12)}${String(p.requests).padStart(4)} requests ${String(p.notModified).padStart(4)} answered 304 ${String(p.made).padStart(6)} items made ${ms(p.wall)} (${ms(p.cpu).trim()} of CPU)`;
    console.log([
      `poll: ${POLL_REPOS} repositories of ${POLL_ISSUES} labelled issues each on the sandbox forge (in process, plan level; counts from /_forge/stats)`,
      row("cold poll", cold),
      row("one list", joining) + "  (its first read, after each repository's own)",
      row("warm poll", warmMedian) + `  (median of ${runs})`,
      `  target: a cold poll of ${POLL_REPOS * POLL_ISSUES} new issues takes at most ${COLD_POLL_REQUESTS} requests and ${COLD_POLL_MS / 1000} s: ${coldMet ? "met" : "NOT MET"}`,
      `  target: a warm poll is one request in all (GET /user/issues), answered 304: ${met ? "met" : "NOT MET"}`,
    ].join("\n"));
  } finally {
    await bench.close();
  }
  // An idle poll's cost does not hang on how many issues there are: a few each is enough.
  const lines = [`poll: requests per idle poll (the author is the token's own user: one GET /user/issues; otherwise one list per repository)`];
  for (const count of IDLE_REPOS) {
    const idle = await pollBench(count, 3);
    try {
      await idle.pass();
      await idle.pass();
      const one = await idle.pass();
      await idle.pass("apart");
      const apart = await idle.pass("apart");
      lines.push(`  ${String(count).padStart(2)} ${count === 1 ? "repository:  " : "repositories:"} ${one.requests} request${one.requests === 1 ? "" : "s"} (${one.notModified} answered 304); read apart: ${apart.requests} (${apart.notModified} answered 304)`);
    } finally {
      await idle.close();
    }
  }
  console.log(lines.join("\n"));
}

/** A forge of `count` repositories with `issues` labelled issues each, onboarded in a store, and one poll of them all at a time (read as one, or each repository apart). */
async function pollBench(count: number, issues: number) {
  const [{ seedForge }, { startForge }, { connectGitHub }, { wireEffects }, { pollRepositories, pollRepository }, { recordApproval }, { defaultConfig }, { fingerprintOf }] = await Promise.all([
    import("../../lib/forge/seed.ts"), import("../../lib/forge/server.ts"), import("../../lib/boundaries/github.ts"), import("../../lib/effects.ts"),
    import("../../lib/intake/poll.ts"), import("../../lib/repos/records.ts"), import("../../lib/config.ts"), import("../../lib/repos/fingerprint.ts"),
  ]);
  const dir = makeTempDir("robot-army-bench-");
  const forgeDir = join(dir, "forge");
  const names = Array.from({ length: count }, (_, i) => `bench/repo-${i + 1}`);
  let tokenFile = "";
  for (const repo of names) tokenFile = (await seedForge(forgeDir, { repo, issues, now: () => new Date("2026-01-15T10:00:00Z") })).users[0].token_file;
  const forge = await startForge({ dir: forgeDir });
  const store = await openStore(join(dir, "state"));
  const base = await defaultConfig();
  const repos = Object.fromEntries(names.map((name) => [name, { path: join(dir, name), base_branch: "main", max_sessions: 1, priority: 0 }]));
  const config = { ...base, github: { ...base.github, api_base: forge.url, token_file: tokenFile, author: "owner" }, repos };
  const github = await connectGitHub(config, store);
  for (const name of names) recordApproval(store, name, repos[name].path, fingerprintOf(await github.getRepository(name), repos[name].path));
  const paths = Object.fromEntries(names.map((name) => [name, repos[name].path]));
  const deps = { store, reader: github, effects: wireEffects("plan", { github: github.writer }), rules: { author: "owner", label: "robot-army" }, host: "bench", paths };
  return {
    async pass(how: "one" | "apart" = "one") {
      await fetch(`${forge.url}/_forge/reset-stats`, { method: "POST" });
      const start = performance.now();
      const cpuBefore = process.cpuUsage();
      const results = how === "one" ? await pollRepositories(deps, names) : [];
      if (how === "apart") for (const name of names) results.push(await pollRepository(deps, name));
      const wall = performance.now() - start;
      // The process's CPU time (the forge's answers included: it runs in this process), which a busy machine slows less than the wall clock.
      const used = process.cpuUsage(cpuBefore);
      const cpu = (used.user + used.system) / 1000;
      const stats = (await (await fetch(`${forge.url}/_forge/stats`)).json()) as { total: number; not_modified: number };
      const failed = results.find((r) => r.error || r.deferred_until);
      if (failed) throw new Error(`poll of ${failed.repo} failed: ${failed.error ?? `deferred until ${failed.deferred_until}`}`);
      return { wall, cpu, requests: stats.total, notModified: stats.not_modified, made: results.reduce((n, r) => n + r.new, 0) };
    },
    async close() {
      store.close();
      await forge.close();
      removeTempDir(dir);
    },
  };
}

async function benchStore({ runs }: Runs): Promise<void> {
  const dir = makeTempDir("robot-army-bench-");
  try {
    const stateDir = join(dir, "state");
    const seeded = await openStore(stateDir);
    const started = performance.now();
    seeded.transaction(() => {
      for (let i = 0; i < 200_000; i++) {
        const phase = i % 2000 === 0 ? "intent" : "fact";
        appendAudit(seeded, {
          kind: phase === "intent" ? "github.comment" : "state.work_item", phase, actionId: phase === "intent" ? `bench-${i}` : undefined,
          repo: "bench/repo", item: i % 500, body: { from: "ready", to: "dispatching", reason: "a slot is free" },
        });
      }
    });
    seeded.close();
    const size = statSync(join(stateDir, "robot-army.db")).size;
    process.stdout.write(`store: 200000 audit records, ${(size / 1e6).toFixed(1)} MB, written in ${ms(performance.now() - started).trim()}\n`);
    const timed = async (what: string, fn: () => Promise<void> | void) => {
      const values: number[] = [];
      for (let run = 0; run < Math.min(runs, 7); run++) {
        const t0 = performance.now();
        await fn();
        values.push(performance.now() - t0);
      }
      process.stdout.write(`store: ${what.padEnd(44)} ${ms(median(values))} (median of ${values.length})\n`);
    };
    await timed("open, as every command opens it", async () => (await openStore(stateDir)).close());
    await timed("open with every page read (daemon, doctor)", async () => (await openStore(stateDir, { checkPages: true })).close());
    const store = await openStore(stateDir);
    try {
      let found = 0;
      await timed("intents without an outcome (first tick)", () => {
        found = intentsWithoutOutcome(store).length;
      });
      process.stdout.write(`store: the sweep's query found ${found} intents without an outcome\n`);
      const cursor = { after: lastAuditId(store), again: intentsWithoutOutcome(store).map((intent) => intent.id) };
      await timed("the same since the last tick (its cursor)", () => void intentsWithoutOutcome(store, cursor));
    } finally {
      store.close();
    }
  } finally {
    removeTempDir(dir);
  }
}

/** A state dir whose audit log has a few records, as after a short session. */
async function seedAuditLog(stateDir: string): Promise<void> {
  const store = await openStore(stateDir);
  try {
    for (let item = 1; item <= 5; item++) {
      appendAudit(store, { kind: "state.work_item", repo: "bench/repo", item, body: { from: "discovered", to: "ready" } });
    }
  } finally {
    store.close();
  }
}

/**
 * Each case's median wall time over `runs` rounds (after `warmups`), the cases taking turns so
 * drift in the machine's load hits them alike, and
 * its mean CPU time (user and system, its children's included), where the system can say it:
 * wall time moves with whatever else the machine does; CPU time much less.
 */
function timeInterleaved(cases: Case[], env: NodeJS.ProcessEnv, runs: number, warmups: number): { wall: Map<Case, number>; cpu: Map<Case, number> | undefined } {
  const samples = new Map<Case, number[]>(cases.map((c) => [c, []]));
  const cpuTotals = new Map<Case, number>(cases.map((c) => [c, 0]));
  let cpuKnown = childrenCpuMs() !== undefined;
  for (let round = 0; round < warmups + runs; round++) {
    for (const c of cases) {
      const before = childrenCpuMs();
      const start = performance.now();
      run(c.argv, { ...env, ...c.env, ...c.fresh?.() });
      if (round < warmups) continue;
      samples.get(c)!.push(performance.now() - start);
      const after = childrenCpuMs();
      if (before === undefined || after === undefined) cpuKnown = false;
      else cpuTotals.set(c, cpuTotals.get(c)! + after - before);
    }
  }
  return {
    wall: new Map(cases.map((c) => [c, median(samples.get(c)!)])),
    cpu: cpuKnown ? new Map(cases.map((c) => [c, cpuTotals.get(c)! / runs])) : undefined,
  };
}

/**
 * The CPU time, in ms, of this process's children that have ended and been waited for (Linux's
 * /proc/self/stat, in ticks of 1/100 s: a mean over many runs is fine-grained enough); undefined
 * where there is no such file.
 */
function childrenCpuMs(): number | undefined {
  let stat: string;
  try {
    stat = readFileSync("/proc/self/stat", "utf8");
  } catch {
    return undefined;
  }
  // After the process's name, in parentheses: its state is field 3, cutime and cstime fields 16 and 17.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[13]) + Number(fields[14]);
  return Number.isFinite(ticks) ? ticks * 10 : undefined;
}

function checkLogOutput(c: Case, env: NodeJS.ProcessEnv): void {
  const out = run(c.argv, env);
  if (!out.includes("state.work_item")) throw new Error(`${c.label} printed no record: ${JSON.stringify(out)}`);
}

function run(argv: string[], env: NodeJS.ProcessEnv): string {
  const result = spawnSync(argv[0], argv.slice(1), { env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  if (result.status !== 0) throw new Error(`${argv.join(" ")} exited ${result.status ?? result.signal}: ${result.stderr}`);
  return result.stdout;
}

/** The Node 24 binary: this one when Node runs the bench, else the project's devDependency. */
function nodeBinary(): string {
  if (!("Deno" in globalThis)) return process.execPath;
  return realpathSync(join(root, "node_modules", ".bin", "node"));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function ms(value: number): string {
  return `${value.toFixed(1).padStart(7)} ms`;
}

function times(ratio: number): string {
  return `${ratio.toFixed(2)}x`;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
