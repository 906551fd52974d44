/**
 * `robot-army start` (what `npm start` runs): the daemon on your config; with no config at
 * all, a full rehearsal a newcomer can watch: a sandbox forge seeded with a demo
 * repository and labelled issues, a clone of it, and the daemon at `live` against it with
 * the demo worker, printing each thing as it happens. The rehearsal plays the owner
 * (lib/forge/rehearsal-owner.ts): it merges each pull request a worker opens, in turn with a
 * merge commit and squashed, and keeps one item before its merge. Its daemon runs with
 * `[cleanup] on_issue_close = true`. Once every issue is finished
 * (lib/daemon/rehearsal-end.ts) it stops the kept worker, waits until every done item's
 * worktree has a cleanup decision that is not `skipped`, stops the daemon, its workers and
 * the forge and prints a summary read from the store; `--watch` runs on instead. Ctrl-C
 * stops the daemon, the rehearsal's workers and the forge. The dashboard serves the
 * rehearsal's store on loopback while it runs, and its address is printed as it starts.
 */
import { existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, delimiter, join } from "node:path";
import { spawnSync } from "node:child_process";
import { asLines, parse, runMain, stringOption, writeStdout } from "../lib/cli.ts";
import type { CommandDef, Write } from "../lib/cli.ts";
import { UsageError } from "../lib/errors.ts";
import { CONFIG_OPTION, NOTIFICATION_EVENTS, configPath, loadConfig } from "../lib/config.ts";
import type { Config } from "../lib/config.ts";
import { reporter } from "../lib/events.ts";
import type { Report } from "../lib/events.ts";
import { cleanupProgress, issueLines, notFinished, rehearsalProgress, summaryCounts, waitForTheEnd } from "../lib/daemon/rehearsal-end.ts";
import type { CleanupProgress, WaitResult } from "../lib/daemon/rehearsal-end.ts";
import { keptSession, placeKeep } from "../lib/ending/keeps.ts";
import { METHOD_WORDS, OWNER_PREFIX, playTheOwner } from "../lib/forge/rehearsal-owner.ts";
import type { OwnerPlay, SeenPull } from "../lib/forge/rehearsal-owner.ts";
import { stopSwitch } from "../lib/daemon/loop.ts";
import { cloneRepository } from "../lib/boundaries/git.ts";
import { PROJECT_ROOT } from "../lib/runtime.ts";
import { commandText } from "../lib/shell-words.ts";
import { listRecords } from "../lib/sessions/records.ts";
import { sessionState } from "../lib/sessions/state.ts";
import { stopSession } from "../lib/sessions/stop.ts";
import { openStore, withStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { listItems } from "../lib/work-items/queries.ts";
import type { WorkItem } from "../lib/work-items/queries.ts";
import { latestSession, sessionsOf } from "../lib/work-items/sessions.ts";

/** How long the rehearsal waits for every issue to finish before it gives up (the story takes well under a minute). */
export const REHEARSAL_LIMIT_SECONDS = 150;
/** About how long after a pull request opens the rehearsal's owner merges it. */
const OWNER_MERGE_SECONDS = 3;
/** What the rehearsal's owner asks of the first pull request, as a review, before merging it. */
export const REHEARSAL_REVIEW = "Please also say in the note how to try this out.";
/** How long the owner waits for the worker to answer the review before merging as it is. */
const REVIEW_WAIT_SECONDS = 60;
/** The reason the rehearsal gives its daemon's stop switch when it ends the run itself. */
const REHEARSAL_END = "the rehearsal's end";

/** The `start` command. */
export const command: CommandDef = {
  name: "start",
  summary: "Run the daemon on your config; with none, a rehearsal against the sandbox forge",
  usage: "start [--rehearsal] [--watch] [--webhook-url URL] [--config FILE]",
  description:
    "With a config file (--config, else $RA_CONFIG, else $XDG_CONFIG_HOME/robot-army/config.toml, else\n" +
    "~/.config/robot-army/config.toml) it runs the daemon on it, as robot-army run does. With none, it\n" +
    "rehearses: it starts a sandbox forge seeded with demo/widgets and three labelled issues in a new\n" +
    "temporary folder, clones it, and runs the daemon at the live effect level against it with the demo\n" +
    "worker (in tmux: on its server when run inside tmux, else on a tmux server of the rehearsal's own;\n" +
    "headless when tmux is not installed), two sessions at a time. Every step is\n" +
    "printed as it happens. The rehearsal plays the owner, and says so on each line it plays: it reviews\n" +
    "the first pull request, asking for a change, which robot-army types into its worker, and merges it\n" +
    "once the worker has answered with a commit (or after " + REVIEW_WAIT_SECONDS + " seconds); it merges\n" +
    "each pull request a worker opens about " + OWNER_MERGE_SECONDS + " seconds after it opens, in turn with a merge commit and\n" +
    "squashed (deleting a squashed pull request's branch on the forge), and keeps the second issue's\n" +
    "item just before its merge, so that worker stays while the others are retired and the waiting issue\n" +
    "is dispatched. The dashboard (robot-army serve) shows the rehearsal as it goes, on loopback at port\n" +
    "8787 or, when that is taken, any free port; its address is printed as the rehearsal starts.\n" +
    "The daemon runs with [cleanup] on_issue_close = true, so each done item's worktree\n" +
    "and branch are reclaimed once its worker has ended. Once every issue is finished (its item done and\n" +
    "its worker retired or kept, or its item failed or abandoned) it stops the kept worker, waits until\n" +
    "every done item has a cleanup decision (other than skipped), stops the daemon and every worker it\n" +
    "started, prints a summary read from the store (items done, workers retired, kept, anything left\n" +
    "running; then per issue its state, how its pull request was merged and its worktree's cleanup\n" +
    "state) and exits 0. If that has not happened within " + REHEARSAL_LIMIT_SECONDS + " seconds it gives up, naming what is\n" +
    "not finished, and exits 1. With --watch it runs on once every issue is finished, until Ctrl-C.\n" +
    "Ctrl-C stops it all. With --webhook-url (or $RA_WEBHOOK_URL) the rehearsal's daemon tells that\n" +
    "webhook of every event (dispatch, completion, failure, needs_info, anomaly) as a JSON POST, and\n" +
    "prints what each delivery did; npm run receiver starts a loopback receiver that prints them.\n" +
    "With --rehearsal it rehearses even when a config exists: your config and state dir are left alone.",
  options: {
    rehearsal: { type: "boolean", description: "Rehearse on the sandbox forge whatever config exists, in a state of its own (your config and state are not read)" },
    watch: { type: "boolean", description: "Rehearsal: run on after every issue is finished, until Ctrl-C (a daemon on a config always does)" },
    "webhook-url": { type: "string", description: "Rehearsal: POST every notification to this URL as JSON (default: $RA_WEBHOOK_URL; none: nothing is sent)" },
    config: CONFIG_OPTION,
  },
  examples: ["robot-army start", "robot-army start --watch", "robot-army start --rehearsal --watch", "robot-army start --webhook-url http://127.0.0.1:8765/"],
};

/** What `start` was asked for. */
export interface StartOptions {
  config: string | undefined;
  /** Rehearse whatever config exists. */
  rehearsal?: boolean;
  /** The rehearsal runs on after its summary, until Ctrl-C. */
  watch: boolean;
  /** The rehearsal tells this webhook of every event. */
  webhookUrl?: string;
}

/** Parses argv and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const webhookUrl = stringOption(args, "webhook-url") ?? (process.env.RA_WEBHOOK_URL || undefined);
  if (args.values.rehearsal === true && stringOption(args, "config") !== undefined) {
    throw new UsageError("--rehearsal runs on a config of its own: leave out --config");
  }
  return await run({ config: stringOption(args, "config"), rehearsal: args.values.rehearsal === true, watch: args.values.watch === true, webhookUrl }, { write: writeStdout });
}

/**
 * With a config file, runs the daemon on it (as "robot-army run --config FILE", which
 * prints its own events, and runs until stopped, so --watch changes nothing); with none,
 * the rehearsal, whose progress goes to `deps.write`.
 */
export async function run(opts: StartOptions, deps: { write: Write }): Promise<number> {
  const { path, explicit } = configPath(opts.config);
  if (!opts.rehearsal && (explicit || existsSync(path))) {
    if (opts.webhookUrl) throw new UsageError(`--webhook-url (or $RA_WEBHOOK_URL) is for the rehearsal; with a config (${path}), set [health] webhook_url in it, or rehearse with --rehearsal`);
    return (await import("./run.ts")).main(["--config", path]);
  }
  return await rehearse(deps.write, { watch: opts.watch, limitSeconds: REHEARSAL_LIMIT_SECONDS, webhookUrl: opts.webhookUrl });
}

/**
 * The rehearsal: forge, clone, config, the daemon at live, the owner's play on the forge's
 * pull requests, and the wait for every issue to finish; then the summary.
 */
async function rehearse(write: Write, options: { watch: boolean; limitSeconds: number; webhookUrl?: string }): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "robot-army-rehearsal-"));
  // Everything the rehearsal starts keeps its state here, not in the owner's state dir.
  const stateDir = process.env.RA_STATE_DIR = join(dir, "state");
  const root = process.env.RA_SESSION_ROOT = join(dir, "state", "sessions");
  const { seedForge } = await import("../lib/forge/seed.ts");
  const { startForge } = await import("../lib/forge/server.ts");
  write(asLines(`rehearsal in ${dir}: nothing here touches GitHub or your own state`));
  const seeded = await seedForge(join(dir, "forge"));
  const forge = await startForge({ dir: join(dir, "forge") });
  const repo = seeded.repository.full_name;
  const issues = seeded.issues.labelled;
  write(asLines(`sandbox forge at ${forge.url}: ${repo} with labelled issues ${issues.map((n) => `#${n}`).join(", ")}`));
  const stop = stopSwitch(["SIGTERM", "SIGINT"]);
  let owner: OwnerPlay | undefined;
  let privateTmux: string | undefined;
  let dashboard: { close(): Promise<void> } | undefined;
  let store: Store | undefined;
  let end: WaitResult | undefined;
  let reclaimed: CleanupProgress | undefined;
  let code = 1;
  const started = Date.now();
  try {
    const clone = join(dir, "widgets");
    await cloneRepository(dir, seeded.repository.clone_url, clone);
    const token = seeded.users.find((u) => u.trusted)!;
    // Workers in tmux, so review can be typed into them: inside tmux on its server, else on a tmux server of the rehearsal's own.
    const terminal = rehearsalTerminal(dir);
    privateTmux = terminal.tmuxSocket;
    const configFile = writeRehearsalConfig(dir, forge.url, token.token_file, token.login, clone, options.webhookUrl, terminal);
    // What the rehearsal starts reads its config, never the owner's (--rehearsal runs though one exists).
    process.env.RA_CONFIG = configFile;
    const config = await loadConfig({ path: configFile });
    await onboard(config, write);
    const self = commandText([`RA_STATE_DIR=${stateDir}`, robotArmyHere(), "status", "--config", configFile]);
    write(asLines(`config ${configFile}; look around with: ${self}`));
    const opened = store = await openStore(stateDir);
    dashboard = await rehearsalDashboard(config, stateDir, root, write);
    owner = playTheOwner({
      apiBase: forge.url, token: readFileSync(token.token_file, "utf8").trim(), repo, write, mergeAfterMs: OWNER_MERGE_SECONDS * 1000,
      beforeMerge: keepBeforeMerge(opened, config, repo, issues[1]),
      // A headless worker has no prompt to type review into: then the owner merges without one.
      ...(config.worker.launcher === "tmux" ? { review: { body: REHEARSAL_REVIEW, waitMs: REVIEW_WAIT_SECONDS * 1000 } } : {}),
    });
    if (config.worker.launcher !== "tmux") write(asLines(`${OWNER_PREFIX}no review this time: the workers run headless (tmux is not installed), so there is no prompt to type it at`));
    const report = rehearsalReport(reporter(write, false));
    const daemon = await import("./run.ts");
    let daemonEnded = false;
    const daemonRun = daemon.run({ once: false, level: "live" }, { config, report, stop, env: process.env })
      .then((exit) => ({ exit }), (error: unknown) => ({ error }))
      .finally(() => (daemonEnded = true));
    end = await waitForTheEnd({
      check: () => rehearsalProgress(opened, repo, issues, keptSession),
      limitMs: options.watch ? Infinity : options.limitSeconds * 1000,
      stopped: () => stop.reason !== null || daemonEnded,
    });
    if (end.how === "finished" && options.watch) {
      write(asLines(`every issue finished: ${summaryCounts(end.progress!, { stoppedNow: false, leftRunning: [] })}; --watch runs on until Ctrl-C`));
      end = { how: "stopped", progress: end.progress };
    } else if (end.how === "finished") {
      for (const session of end.progress!.kept) {
        const issue = end.progress!.issues.find((i) => i.kept?.id === session.id)!;
        write(asLines(`item ${session.item} (${repo}#${issue.issue}) is done and kept: its worker ${session.name} is still running; the rehearsal stops it now, so its worktree can be reclaimed too`));
        const record = listRecords(root).find((r) => r.name === session.name);
        if (record) await stopSession(root, record).catch(() => {});
      }
      const cleaned = await waitForTheEnd<CleanupProgress>({
        check: () => cleanupProgress(opened, rehearsalProgress(opened, repo, issues, keptSession)),
        limitMs: Math.max(0, options.limitSeconds * 1000 - (Date.now() - started)),
        stopped: () => stop.reason !== null || daemonEnded,
      });
      reclaimed = cleaned.progress;
      if (cleaned.how === "gave-up") {
        write(asLines(`rehearsal gave up after ${options.limitSeconds}s, not reclaimed: ${reclaimed ? reclaimed.waiting.join("; ") : "the store could not be read"}`));
        end = { how: "gave-up", progress: end.progress };
      }
      stop.stop(REHEARSAL_END);
    } else if (end.how === "gave-up") {
      write(asLines(`rehearsal gave up after ${options.limitSeconds}s, not finished: ${end.progress ? notFinished(end.progress) : "the store could not be read"}`));
      stop.stop(REHEARSAL_END);
    }
    const daemonEnd = await daemonRun;
    if ("error" in daemonEnd) throw daemonEnd.error;
    code = end.how === "gave-up" ? 1 : daemonEnd.exit;
  } finally {
    await owner?.stop();
    stop.dispose();
    const perIssue = end?.how === "finished" && store && owner ? issueLines(end.progress!, reclaimed, (item) => mergedBy(owner!, store!, item)) : [];
    await dashboard?.close();
    store?.close();
    for (const record of listRecords(root)) await stopSession(root, record).catch(() => {});
    const left = listRecords(root).filter((r) => STILL_THERE.has(sessionState(root, r))).map((r) => r.name);
    await forge.close();
    // The rehearsal's own tmux server, its windows with it (each worker in them is stopped above).
    if (privateTmux) spawnSync("tmux", ["-L", privateTmux, "kill-server"], { stdio: "ignore", env: { ...process.env, TMUX: "" } });
    if (left.length) code = 1;
    if (end?.how === "finished") {
      write(asLines(`rehearsal finished: ${summaryCounts(end.progress!, { stoppedNow: true, leftRunning: left })}`));
      write(asLines(perIssue.join("\n")));
      write(asLines(`the forge is stopped; the rehearsal's files stay in ${dir}`));
    } else {
      const workers = left.length ? `its workers are stopped but for ${left.join(", ")}, still running` : "its workers and the forge are stopped";
      write(asLines(`rehearsal stopped: ${workers}; its files stay in ${dir}`));
    }
  }
  return code;
}

/**
 * The dashboard on the rehearsal's store, on loopback: at [web] port (8787) when it is free,
 * else on any free port; it says where, and is stopped with the rest.
 */
async function rehearsalDashboard(config: Config, stateDir: string, sessionRoot: string, write: Write): Promise<{ close(): Promise<void> }> {
  const [{ webApp }, { webContext }, { webAccess }, { listen }] = await Promise.all([
    import("../lib/web/app.ts"), import("../lib/web/context.ts"), import("../lib/web/security.ts"), import("../lib/web/serve.ts"),
  ]);
  const ctx = webContext(config, stateDir, sessionRoot);
  const app = webApp(ctx, webAccess(config, "127.0.0.1", 0));
  const listening = await listen(app, "127.0.0.1", config.web.port).catch(() => listen(app, "127.0.0.1", 0));
  write(asLines(`dashboard: ${listening.url} (watch the rehearsal there)`));
  return {
    async close() {
      await listening.close();
      ctx.close();
    },
  };
}

/** Session states that are not proven over: a worker in one is still there (unknown is never gone). */
const STILL_THERE = new Set(["starting", "running", "unknown"]);

/**
 * How to run robot-army from where the rehearsal is watched: `robot-army` when that name on
 * PATH is this checkout's (the README's `npm install -g .` or `npm link`), else this
 * checkout's `bin/robot-army.mjs` by its path, which runs without any installation. The
 * rehearsal is what a newcomer runs before setting anything up, so it cannot assume either.
 */
export function robotArmyHere(env: Record<string, string | undefined> = process.env): string {
  const bin = join(PROJECT_ROOT, "bin", "robot-army.mjs");
  for (const dir of (env.PATH ?? "").split(delimiter).filter(Boolean)) {
    try {
      if (realpathSync(join(dir, "robot-army")) === realpathSync(bin)) return "robot-army";
    } catch {
      // Not there, or not readable: look on.
    }
  }
  return bin;
}

/**
 * Where the rehearsal's workers run: in tmux when run inside it (its server), else in tmux on
 * a server of the rehearsal's own (`tmux -L`, never the owner's) when tmux is installed, else
 * headless. In tmux a worker has a prompt, so the owner's review reaches it.
 */
function rehearsalTerminal(dir: string): Pick<RehearsalPace, "launcher" | "tmuxSocket"> {
  if (process.env.TMUX) return { launcher: "tmux" };
  if (spawnSync("tmux", ["-V"], { stdio: "ignore" }).status !== 0) return { launcher: "process" };
  return { launcher: "tmux", tmuxSocket: `robot-army-rehearsal-${basename(dir).replace(/[^\w-]/g, "")}` };
}

/** What a rehearsal's config may change from the rehearsal's own: the soak (scripts/dev/bench-soak.ts) ticks faster and never uses tmux. */
export interface RehearsalPace {
  tickSeconds?: number;
  launcher?: "process" | "tmux";
  /** `[worker] tmux_socket`: a tmux server of the rehearsal's own (default: none, tmux's own choice). */
  tmuxSocket?: string;
  /** `[daemon] host` (default: none, the machine's hostname). */
  host?: string;
  /** `[claims] lease` (default: none, 10m). */
  lease?: string;
}

/** Writes the rehearsal's config.toml in `dir` (the daemon at live on the forge, the demo worker, cleanup on close); returns its path. */
export function writeRehearsalConfig(dir: string, apiBase: string, tokenFile: string, author: string, clone: string, webhookUrl?: string, pace: RehearsalPace = {}): string {
  const file = join(dir, "config.toml");
  writeFileSync(file, [
    "# The rehearsal's config, written by robot-army start, which runs the daemon on it at the live level.",
    "[daemon]", `tick_seconds = ${pace.tickSeconds ?? 2}`, "poll_seconds = 10", ...(pace.host ? [`host = ${JSON.stringify(pace.host)}`] : []), "",
    ...(pace.lease ? ["[claims]", `lease = ${JSON.stringify(pace.lease)}`, ""] : []),
    "[github]", `api_base = ${JSON.stringify(apiBase)}`, `token_file = ${JSON.stringify(tokenFile)}`, `author = ${JSON.stringify(author)}`, "",
    "[worker]", 'binary = "demo-worker"',
    `launcher = ${JSON.stringify(pace.launcher ?? (process.env.TMUX ? "tmux" : "process"))}`, "max_sessions = 2",
    ...(pace.tmuxSocket ? [`tmux_socket = ${JSON.stringify(pace.tmuxSocket)}`] : []), "",
    "[worktrees]", `root = ${JSON.stringify(join(dir, "worktrees"))}`, "",
    "[cleanup]", "on_issue_close = true", "",
    ...(webhookUrl ? ["[health]", `webhook_url = ${JSON.stringify(webhookUrl)}`, "", "[notifications]", `events = ${JSON.stringify(NOTIFICATION_EVENTS)}`, ""] : []),
    '[repos."demo/widgets"]', `path = ${JSON.stringify(clone)}`, "",
  ].join("\n"));
  return file;
}

/** Onboards demo/widgets into the store of `stateDir` (the rehearsal's, by default), as `robot-army onboard` does. */
export async function onboard(config: Config, write: Write, stateDir: string = process.env.RA_STATE_DIR!): Promise<void> {
  return await withStore(stateDir, async (store) => {
    const { connectGitHub } = await import("../lib/boundaries/github.ts");
    const { onboardRepository } = await import("../lib/repos/onboard.ts");
    await onboardRepository(store, await connectGitHub(config, store), config, "demo/widgets");
    write(asLines("onboarded demo/widgets: its clone's origin is the forge's repository"));
  });
}

/**
 * What the owner does before a merge in the rehearsal: the pull request of `issue` (found
 * by its head branch, the branch of the item's session) has its item kept first, so its
 * worker stays after the merge while the others are retired.
 */
export function keepBeforeMerge(store: Store, config: Config, repo: string, issue: number | undefined): (pull: SeenPull) => string | undefined {
  let tried = false;
  return (pull) => {
    if (tried || issue === undefined) return undefined;
    const item = listItems(store, { repo }).find((i) => latestSession(store, i.id)?.branch === pull.head.ref);
    if (item?.issue !== issue) return undefined;
    tried = true;
    try {
      placeKeep(store, item.id, { worker: config.worker });
    } catch (error) {
      return `could not keep item ${item.id} before merging ${repo}#${pull.number} (${(error as Error).message}); merging it anyway`;
    }
    return `kept item ${item.id} before merging ${repo}#${pull.number}: its worker stays after the merge`;
  };
}

/**
 * How the rehearsal's owner merged the item's pull request (found by its head branch, one of
 * the item's sessions' branches): `merge commit`, or `squash, its branch deleted on the
 * forge`; undefined when the owner merged none of its branches.
 */
function mergedBy(owner: OwnerPlay, store: Store, item: WorkItem): string | undefined {
  const branches = new Set(sessionsOf(store, item.id).map((s) => s.branch));
  for (const merge of owner.merged.values()) {
    if (branches.has(merge.head)) return METHOD_WORDS[merge.method] + (merge.branchDeleted ? ", its branch deleted on the forge" : "");
  }
  return undefined;
}

/** The daemon's report, but for its stop at the rehearsal's end, which says what comes next. */
function rehearsalReport(report: Report): Report {
  return (event) => report(event.event === "stopped" && event.signal === REHEARSAL_END
    ? { ...event, line: "daemon stopped: the rehearsal stops its workers now" }
    : event);
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
