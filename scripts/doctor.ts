/**
 * `robot-army doctor`: checks what robot-army needs before it can work, one line each,
 * `ok` or `FAIL` with what to do: the config loads, the token file is private, git and
 * tmux are there, the worker program can be started, the state dir is writable and private, GitHub (or the forge) answers to the token,
 * the author is set, the free space, which notification channels are configured and which agent variables are set. Exit 4 when a check fails.
 *
 * It changes nothing: no state dir or database is created, and GitHub is only read.
 */
import { accessSync, constants, existsSync, statSync, statfsSync, unlinkSync, writeFileSync } from "node:fs";
import { homedir, hostname } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { CommandDef, Write } from "../lib/cli.ts";
import { JSON_OPTION, asJson, parse, runMain, stringOption, writeStdout } from "../lib/cli.ts";
import type { GitHubReader } from "../lib/boundaries/github-types.ts";
import { gitVersion } from "../lib/boundaries/git.ts";
import { configuredChannelNames } from "../lib/boundaries/notifier/channels.ts";
import { connectGitHub, readToken } from "../lib/boundaries/github.ts";
import type { Config } from "../lib/config.ts";
import { CONFIG_OPTION, configPath, defaultConfig, loadConfig, readConfigText } from "../lib/config.ts";
import { checkHealth } from "../lib/daemon/health.ts";
import { readHeartbeat } from "../lib/daemon/heartbeat.ts";
import { parseDuration } from "../lib/duration.ts";
import { sha256Hex } from "../lib/sha256.ts";
import { findWorkerProgram } from "../lib/dispatch/worker-program.ts";
import { INTERACTIVE_PROFILES, launcherMisfit } from "../lib/dispatch/launcher-fit.ts";
import { noRegistryLine } from "../lib/worker-profiles.ts";
import { describeTrust, trustStoreFor, trusts } from "../lib/dispatch/agent-trust.ts";
import { describeSilent, silentWorkers } from "../lib/work-items/silent-workers.ts";
import { sessionRoot } from "../lib/sessions/records.ts";
import { worktreeRoot } from "../lib/work-items/worktree-root.ts";
import { checkRepos } from "../lib/reports/repo-checks.ts";
import { listRepoRecords } from "../lib/repos/records.ts";
import { listAnomalies } from "../lib/store/anomalies.ts";
import { withExistingStore } from "../lib/store/open.ts";
import { CheckFailedError } from "../lib/errors.ts";
import { stateDirPath } from "../lib/state-dir.ts";

export const command: CommandDef = {
  name: "doctor",
  summary: "Check that robot-army has what it needs: config, token, git, tmux, worker, state dir, disk, GitHub, repositories, channels",
  usage: "doctor [--config FILE] [--json]",
  description: `\
Runs each check and prints one line for it: ok, FAIL with what to do, or skip when a
check it depends on failed or the answer cannot be told from here.
  config     the config file loads (warn when there is none: every path looked at is named,
             and all settings have their defaults); with a
             daemon running, whether it runs the file as it is, will take it at its next
             pass, or refused it (FAIL, with its reason: it runs the last good config)
  token      the token file is readable by you only (mode 0600), or token_env is set
  git        git runs (its version)
  tmux       tmux runs, when worker.launcher is tmux (its version)
  worker     worker.binary can be started: found on the PATH the launcher gives it (for
             tmux, the PATH the tmux server gives its windows); an interactive agent
             (profile claude or codex) needs a terminal: the tmux or kitty launcher
  state dir  the state dir is writable (or can be created) and nobody else can read it
  disk       free space where worktrees are made and in the state dir: warn under 5 GiB,
             with the figure (a full disk stops git, the store and the workers alike)
  github     github.api_base answers to the token, and says whose it is
  repos      each configured repository: its path is a clone of it (origin checked against
             what GitHub says), what the token's account may do there as GitHub answers
             (read its issues and comment, else FAIL; push and open pull requests, else
             warn), and it is onboarded (warn until it is: nothing is dispatched to it)
  author     github.author is set: without it no issue is ever taken
  trust      with Claude Code as the worker: whether Claude Code has been told to trust
             each repository's clone (its answer holds for every worktree of it); not
             trusted, every worker stops at "Is this a project you trust?" before any hook
             runs, until you attach and answer: "robot-army trust owner/name" records your yes
  workers    no worker is waiting before its first hook: its agent has not reported
             starting 90 s after its start (the trust question, a login), with what its
             pane shows and the attach command
  anomalies  no anomaly is open (an effect a crash cut short, a damaged spool file):
             "robot-army anomalies" lists them, "anomalies ack <id>" acknowledges one
  channels   which notification channels are configured ([health] webhook_url,
             [pushover]) and which events they are told; none is fine: nothing is sent
             (the credential files are checked when the config loads, never read here)
  agent env  the variables in this environment that change how Claude Code or Codex
             behave (ANTHROPIC_*, CLAUDE_CODE_*, OPENAI_*, CODEX_*), by name only: a
             daemon started from here passes them to every worker
A warn is worth a look and fails nothing. Nothing is changed. Exit 4 when any check fails.
`,
  options: {
    config: CONFIG_OPTION,
    json: JSON_OPTION,
  },
  examples: ["robot-army doctor", "robot-army doctor --config ./robot-army.toml --json"],
};

/** One check's verdict; `detail` says what was found and, on failure, what to do. */
export interface CheckResult {
  check: string;
  status: "ok" | "warn" | "FAIL" | "skip";
  detail: string;
}

/** What `doctor` reads; tests pass their own environment and probes. */
export interface DoctorDeps {
  /** `--config`, when given. */
  configFlag?: string;
  env: Record<string, string | undefined>;
  /** Connects to GitHub without a store (doctor leaves nothing behind). */
  connect: (config: Config) => Promise<Pick<GitHubReader, "whoami" | "getRepository">>;
  /** What `<tool> -V` says, or undefined when it cannot be run. */
  tmuxVersion: () => Promise<string | undefined>;
  write: Write;
}

/** Parses argv, gives the checks the real environment and probes, and runs them. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  return await run({ json: args.values.json === true }, {
    configFlag: stringOption(args, "config"),
    env: process.env,
    connect: (config) => connectGitHub(config, null, { maxAttempts: 2, timeoutMs: 10_000 }),
    tmuxVersion,
    write: writeStdout,
  });
}

/** Runs every check, prints them, and throws `CheckFailedError` (exit 4) when one failed. */
export async function run(opts: { json: boolean }, deps: DoctorDeps): Promise<number> {
  const results = await runChecks(deps);
  const failed = results.filter((r) => r.status === "FAIL");
  if (opts.json) {
    deps.write(asJson({ ok: failed.length === 0, checks: results }));
  } else {
    const width = Math.max(...results.map((r) => r.check.length)) + 2;
    deps.write(results.map((r) => `${r.status.padEnd(6)}${r.check.padEnd(width)}${r.detail}\n`).join(""));
    if (failed.length === 0) deps.write(`all ${results.length} checks passed\n`);
  }
  if (failed.length) {
    throw new CheckFailedError(`${failed.length} of ${results.length} checks failed: ${failed.map((r) => r.check).join(", ")}`);
  }
  return 0;
}

/** Every check, in order; one that needs a failed one is skipped. */
export async function runChecks(deps: DoctorDeps): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  const add = (check: string, status: CheckResult["status"], detail: string) => results.push({ check, status, detail });
  const { path } = configPath(deps.configFlag, deps.env);
  let config: Config | undefined;
  try {
    config = await loadConfig({ path: deps.configFlag, env: deps.env });
    const running = await daemonConfig(config, deps);
    const missing = existsSync(path) ? undefined : noConfigFile(path, deps.env);
    const detail = missing ?? path;
    add("config", running?.refused ? "FAIL" : missing ? "warn" : "ok", running ? `${detail}; ${running.line}` : detail);
  } catch (error) {
    // A file the daemon refused says so here too: the daemon runs on, with the config it applied before.
    const running = await daemonConfig(await defaultConfig(), deps).catch(() => undefined);
    add("config", "FAIL", `${message(error)}; fix the file ("robot-army example-config" prints every key)${running ? `; ${running.line}` : ""}`);
  }
  const token = config ? checkToken(config, deps.env) : { status: "skip" as const, detail: "needs the config" };
  add("token", token.status, token.detail);
  const git = await gitVersion();
  add("git", git ? "ok" : "FAIL", git ?? 'git does not run: install git and make sure it is on PATH');
  add("tmux", ...(await checkTmux(config, deps)));
  if (config) add("worker", ...(await checkWorker(config, deps)));
  else add("worker", "skip", "needs the config");
  add("state dir", ...checkStateDir(stateDirPath(deps.env)));
  if (config) add("disk", ...checkDisk([["worktrees", worktreeRoot(config, stateDirPath(deps.env))], ["state dir", stateDirPath(deps.env)]]));
  else add("disk", "skip", "needs the config");
  const github: [CheckResult["status"], string] = config && token.status === "ok"
    ? await checkGitHub(config, deps)
    : ["skip", config ? "needs a usable token" : "needs the config"];
  add("github", ...github);
  if (config) add("repos", ...(await repoVerdict(config, deps, github[0] === "ok")));
  else add("repos", "skip", "needs the config");
  if (!config) add("author", "skip", "needs the config");
  else if (config.github.author) add("author", "ok", `issues opened by ${config.github.author} are taken`);
  else add("author", "FAIL", 'github.author is not set, so no issue is ever taken: set [github] author = "<your GitHub login>"');
  if (config) add("trust", ...checkTrust(config, deps.env));
  else add("trust", "skip", "needs the config");
  if (config) add("workers", ...(await checkSilentWorkers(config, deps.env)));
  else add("workers", "skip", "needs the config");
  add("anomalies", ...(await checkAnomalies(stateDirPath(deps.env))));
  if (config) add("channels", "ok", describeChannels(config));
  else add("channels", "skip", "needs the config");
  add("agent env", "ok", describeAgentEnv(deps.env));
  return results;
}

/** Every configured repository's clone, onboarding and the token's rights in it (lib/reports/repo-checks.ts), as one line. */
async function repoVerdict(config: Config, deps: DoctorDeps, githubAnswers: boolean): Promise<[CheckResult["status"], string]> {
  if (Object.keys(config.repos).length === 0) return ["ok", 'none configured: add a [repos."owner/name"] table with the path of its clone'];
  try {
    const records = await withExistingStore(stateDirPath(deps.env), async (store) => store ? listRepoRecords(store) : []);
    const checks = await checkRepos(config, records, githubAnswers ? await deps.connect(config) : null);
    const status = checks.some((c) => c.status === "FAIL") ? "FAIL" : checks.some((c) => c.status === "warn") ? "warn" : "ok";
    return [status, checks.map((c) => c.detail).join("; ")];
  } catch (error) {
    return ["FAIL", `the repositories cannot be checked: ${message(error)}`];
  }
}

/**
 * No config file where robot-army looks: every path it looked at, a file at the usual place
 * that is not read (XDG_CONFIG_HOME points elsewhere), and what writes one. Every setting
 * has its default then, so no repository is worked on.
 */
function noConfigFile(path: string, env: DoctorDeps["env"]): string {
  const usual = join(env.HOME || homedir(), ".config", "robot-army", "config.toml");
  const looked = [path];
  let unread = "";
  if (env.XDG_CONFIG_HOME && resolve(usual) !== resolve(path)) {
    looked.push(`not ${usual} (XDG_CONFIG_HOME is ${env.XDG_CONFIG_HOME})`);
    if (existsSync(usual)) unread = `; ${usual} exists but is not read while XDG_CONFIG_HOME is set: move it, or pass --config ${usual}`;
  }
  return `no config file: looked at ${looked.join(", ")}${unread}; every setting has its default, so no repository is worked on ` +
    `("robot-army example-config --output ${path}" writes one to fill in)`;
}

/** Under this much free space the disk check warns. */
export const DISK_WARN_BYTES = 5 * 1024 ** 3;

/**
 * Free space for each place (the nearest folder of it that exists), as the filesystem gives
 * it to an unprivileged user: warn when any is under `warnBytes`, with every figure.
 */
export function checkDisk(places: Array<[string, string]>, warnBytes = DISK_WARN_BYTES): ["ok" | "warn", string] {
  const figures: string[] = [];
  let low = false;
  for (const [what, path] of places) {
    let existing = path;
    while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
    try {
      const fs = statfsSync(existing);
      const free = fs.bavail * fs.bsize;
      if (free < warnBytes) low = true;
      figures.push(`${what} ${path}: ${gib(free)} free${free < warnBytes ? ` (under ${gib(warnBytes)}: make room before workers fill it)` : ""}`);
    } catch (error) {
      low = true;
      figures.push(`${what} ${path}: free space cannot be read (${message(error)})`);
    }
  }
  return [low ? "warn" : "ok", figures.join("; ")];
}

function gib(bytes: number): string {
  return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
}

/** The names that change how Claude Code or Codex behave. */
const AGENT_ENV = /^(ANTHROPIC_|CLAUDE_CODE_|OPENAI_|CODEX_)/;

/** The agent variables set in `env`, by name only (a value may be a key). */
export function describeAgentEnv(env: Record<string, string | undefined>): string {
  const names = Object.keys(env).filter((name) => AGENT_ENV.test(name) && env[name] !== undefined).sort();
  if (names.length === 0) return "none of ANTHROPIC_*, CLAUDE_CODE_*, OPENAI_*, CODEX_* is set";
  return `set here, and passed to every worker a daemon started from here starts: ${names.join(", ")}`;
}

/**
 * What the running daemon runs against what the file holds, from its heartbeat (the file it
 * watches, the SHA-256 of the text it applied, a refused text's reason); undefined when no
 * daemon is running or it does not say. `refused` when it refused the file's text as it is now.
 */
async function daemonConfig(config: Config, deps: DoctorDeps): Promise<{ line: string; refused: boolean } | undefined> {
  const stateDir = stateDirPath(deps.env);
  const health = checkHealth(stateDir, parseDuration(config.health.max_age, "health.max_age"));
  const running = health.verdict === "ok" ? readHeartbeat(stateDir)?.config : undefined;
  if (!running) return undefined;
  const daemon = `the running daemon (pid ${health.pid})`;
  const { path, text } = readConfigText(deps.configFlag, deps.env);
  if (running.path !== path) return { line: `${daemon} runs ${running.path}, not this file`, refused: false };
  const hash = sha256Hex(text);
  if (hash === running.sha256) return { line: `${daemon} runs it as it is (applied ${running.applied_at})`, refused: false };
  if (running.refused?.sha256 === hash) {
    return { line: `${daemon} refused it as it is now and runs what it applied ${running.applied_at}: ${running.refused.reason}`, refused: true };
  }
  return { line: `it changed since ${daemon} applied it (${running.applied_at}): the daemon takes it at its next pass, or at once after "kill -HUP ${health.pid}"`, refused: false };
}

/** The token's source: a file nobody else can read (DESIGN rule 5), or a variable that is set; read as the GitHub boundary reads it. */
function checkToken(config: Config, env: DoctorDeps["env"]): { status: "ok" | "FAIL"; detail: string } {
  let token: string | null;
  try {
    token = readToken(config.github, env);
  } catch (error) {
    return { status: "FAIL", detail: message(error) };
  }
  if (token === null) return { status: "FAIL", detail: "no token: set github.token_file to a file holding your token (mode 0600), or github.token_env" };
  const file = config.github.token_file;
  if (!file) return { status: "ok", detail: `from the environment variable ${config.github.token_env}` };
  return { status: "ok", detail: `${file} (mode 0${(statSync(file).mode & 0o777).toString(8).padStart(3, "0")})` };
}

async function checkTmux(config: Config | undefined, deps: DoctorDeps): Promise<["ok" | "FAIL", string]> {
  if (config && config.worker.launcher !== "tmux") return ["ok", `not needed: worker.launcher is ${config.worker.launcher}`];
  const version = await deps.tmuxVersion();
  if (version) return ["ok", version];
  // An interactive agent needs a terminal, so the headless launcher is no way out for it.
  if (config && INTERACTIVE_PROFILES.includes(config.worker.profile)) return ["FAIL", `tmux does not run: install tmux, or set [worker] launcher = "kitty" (worker profile ${config.worker.profile} needs a terminal)`];
  return ["FAIL", 'tmux does not run: install tmux, or set [worker] launcher = "process"'];
}

/** The worker program, looked up where its launcher would start it (a missing one would fail every issue). */
async function checkWorker(config: Config, deps: DoctorDeps): Promise<[CheckResult["status"], string]> {
  // Every start would be refused at the gate for it, so it is the first thing to mend.
  const misfit = launcherMisfit(config.worker);
  if (misfit) return ["FAIL", misfit];
  const program = await findWorkerProgram(config, { env: deps.env });
  // A generic worker is not a failure; it is only never taken for idle, so never retired: say so.
  const unobservable = noRegistryLine(config.worker.profile);
  if ("found" in program) return ["ok", `${program.found}${unobservable === null ? "" : `; ${unobservable}`}`];
  if ("missing" in program) return ["FAIL", `${program.missing}: install it there, or set [worker] binary to its absolute path`];
  return ["skip", program.unknown];
}

/**
 * Writable means a file can be made in it; a missing dir is fine when its nearest existing
 * parent is writable. Private means group and others have no access: the store and the
 * session output logs hold issue text, reasons and whatever a worker printed.
 */
function checkStateDir(dir: string): ["ok" | "FAIL", string] {
  if (existsSync(dir)) {
    const probe = join(dir, `.doctor-${process.pid}`);
    try {
      writeFileSync(probe, "", { mode: 0o600 });
      unlinkSync(probe);
      const mode = statSync(dir).mode & 0o777;
      if (mode & 0o077) {
        return ["FAIL", `${dir} has mode 0${mode.toString(8)}, so others can read the store and the sessions' output: chmod 700 "${dir}"`];
      }
      return ["ok", `${dir} (writable)`];
    } catch (error) {
      return ["FAIL", `cannot write in ${dir} (${(error as NodeJS.ErrnoException).code ?? message(error)}): make it yours and writable, or set RA_STATE_DIR`];
    }
  }
  let parent = dirname(dir);
  while (!existsSync(parent) && dirname(parent) !== parent) parent = dirname(parent);
  try {
    accessSync(parent, constants.W_OK | constants.X_OK);
    return ["ok", `${dir} (not there yet; made on first use)`];
  } catch {
    return ["FAIL", `${dir} does not exist and ${parent} is not writable: create it, or set RA_STATE_DIR`];
  }
}

/**
 * The configured channels, named without reading a credential file: the webhook by its
 * URL's host (or the file holding the URL), Pushover by name; and the events told.
 */
function describeChannels(config: Config): string {
  const channels = configuredChannelNames(config).map((name) => {
    if (name !== "webhook") return name;
    const url = config.health.webhook_url;
    return url !== undefined ? `webhook (${new URL(url).host})` : `webhook (its URL in ${config.health.webhook_url_file})`;
  });
  if (channels.length === 0) return "none configured: nothing is sent ([health] webhook_url, [pushover] token_file and user_key_file)";
  const events = config.notifications.events.length ? config.notifications.events.join(", ") : "no events (only health --notify alerts)";
  return `${channels.join(", ")}; told of ${events}`;
}

/**
 * The worker agent's folder trust for each repository's clone (Claude Code's or Codex's):
 * every worker starts in a new worktree, which the agent trusts only when its clone is trusted,
 * and one that is not stops at the question before any hook, where robot-army cannot see it.
 */
function checkTrust(config: Config, env: DoctorDeps["env"]): [CheckResult["status"], string] {
  let store: ReturnType<typeof trustStoreFor>;
  try {
    store = trustStoreFor(config.worker.profile, env);
  } catch (error) {
    return ["skip", message(error)];
  }
  if (!store) return ["ok", `not needed: worker profile ${config.worker.profile}`];
  const repos = Object.entries(config.repos);
  if (repos.length === 0) return ["ok", "no repository configured"];
  const answers = repos.map(([repo, { path }]) => ({ repo, path, answer: trusts(store, path) }));
  const open = answers.filter((a) => a.answer.trusted !== true);
  if (open.length === 0) return ["ok", `${store.name} trusts the clone of ${answers.map((a) => a.repo).join(", ")} (${store.file}): their worktrees open without the folder-trust question`];
  return ["FAIL", open.map((a) => describeTrust(a.repo, a.path, a.answer, store)).join("; ")];
}

/** Workers whose agent has not reported starting: the owner must look (lib/work-items/silent-workers.ts). */
async function checkSilentWorkers(config: Config, env: DoctorDeps["env"]): Promise<[CheckResult["status"], string]> {
  try {
    const silent = await withExistingStore(stateDirPath(env), async (store) =>
      store ? await silentWorkers({ store, config, host: hostname(), sessionRoot: sessionRoot(env) }) : []);
    if (silent.length === 0) return ["ok", "none waiting before its first hook"];
    return ["FAIL", silent.map(describeSilent).join("; ")];
  } catch (error) {
    return ["FAIL", `the store cannot be read: ${message(error)}`];
  }
}

/** Open anomalies are a finding: something the owner has not yet looked at. */
async function checkAnomalies(stateDir: string): Promise<[CheckResult["status"], string]> {
  try {
    // Doctor reads every page of the store: damage is found here, not by whichever command meets it first.
    const open = await withExistingStore(stateDir, (store) => (store ? listAnomalies(store, { open: true }) : []), { checkPages: true });
    if (open.length === 0) return ["ok", "none open"];
    const kinds = [...new Set(open.map((a) => a.kind))].join(", ");
    return ["FAIL", `${open.length} open (${kinds}): "robot-army anomalies" says what to check, "robot-army anomalies ack <id>" once you have looked`];
  } catch (error) {
    return ["FAIL", `the store cannot be read: ${message(error)}`];
  }
}

async function checkGitHub(config: Config, deps: DoctorDeps): Promise<["ok" | "FAIL", string]> {
  try {
    const login = await (await deps.connect(config)).whoami();
    const note = config.github.author && login && login.toLowerCase() !== config.github.author.toLowerCase()
      ? ` (not the author, ${config.github.author}: comments will be signed ${login})`
      : "";
    return ["ok", `answers; the token is ${login}'s${note}`];
  } catch (error) {
    return ["FAIL", `${config.github.api_base}: ${message(error)}; check github.api_base, the network and the token`];
  }
}

async function tmuxVersion(): Promise<string | undefined> {
  try {
    const { $ } = await import("dax-sh");
    const result = await $`tmux -V`.quiet().noThrow();
    return result.code === 0 ? result.stdout.trim() : undefined;
  } catch {
    return undefined; // not on PATH at all
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
