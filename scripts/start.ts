/**
 * `robot-army start` (what `npm start` runs): the daemon on your config; with no config at
 * all, a full rehearsal a newcomer can watch: a sandbox forge seeded with a demo
 * repository and labelled issues, a clone of it, and the daemon at `live` against it with
 * the demo worker, printing each thing as it happens, up to the pull requests the workers
 * open. Ctrl-C stops the daemon, the rehearsal's workers and the forge.
 */
import { existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { asLines, parse, runMain, stringOption, writeStdout } from "../lib/cli.ts";
import type { CommandDef, Write } from "../lib/cli.ts";
import { CONFIG_OPTION, configPath, loadConfig } from "../lib/config.ts";
import { reporter } from "../lib/daemon/events.ts";
import { stopSwitch } from "../lib/daemon/loop.ts";
import { cloneRepository } from "../lib/boundaries/git.ts";
import { PROJECT_ROOT } from "../lib/runtime.ts";
import { commandText } from "../lib/shell-words.ts";
import { listRecords } from "../lib/sessions/records.ts";
import { stopSession } from "../lib/sessions/stop.ts";
import { withStore } from "../lib/store/open.ts";

/** The `start` command. */
export const command: CommandDef = {
  name: "start",
  summary: "Run the daemon on your config; with none, a rehearsal against the sandbox forge",
  usage: "start [--config FILE]",
  description:
    "With a config file (--config, else $RA_CONFIG, else $XDG_CONFIG_HOME/robot-army/config.toml, else\n" +
    "~/.config/robot-army/config.toml) it runs the daemon on it, as robot-army run does. With none, it\n" +
    "rehearses: it starts a sandbox forge seeded with demo/widgets and three labelled issues in a new\n" +
    "temporary folder, clones it, and runs the daemon at the live effect level against it with the demo\n" +
    "worker (the process launcher, or tmux when run inside tmux). Every step is printed as it happens, up\n" +
    "to the pull requests the workers open. Ctrl-C stops it all.",
  options: { config: CONFIG_OPTION },
};

/** Parses argv and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  return await run({ config: stringOption(args, "config") }, { write: writeStdout });
}

/**
 * With a config file, runs the daemon on it (as "robot-army run --config FILE", which
 * prints its own events); with none, the rehearsal, whose progress goes to `deps.write`.
 */
export async function run(opts: { config: string | undefined }, deps: { write: Write }): Promise<number> {
  const { path, explicit } = configPath(opts.config);
  if (explicit || existsSync(path)) return (await import("./run.ts")).main(["--config", path]);
  return await rehearse(deps.write);
}

/** The rehearsal: forge, clone, config, the daemon at live, and a watch on the forge's pull requests. */
async function rehearse(write: Write): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "robot-army-rehearsal-"));
  // Everything the rehearsal starts keeps its state here, not in the owner's state dir.
  process.env.RA_STATE_DIR = join(dir, "state");
  process.env.RA_SESSION_ROOT = join(dir, "state", "sessions");
  const { seedForge } = await import("../lib/forge/seed.ts");
  const { startForge } = await import("../lib/forge/server.ts");
  write(asLines(`rehearsal in ${dir}: nothing here touches GitHub or your own state`));
  const seeded = await seedForge(join(dir, "forge"));
  const forge = await startForge({ dir: join(dir, "forge") });
  write(asLines(`sandbox forge at ${forge.url}: ${seeded.repository.full_name} with labelled issues ${seeded.issues.labelled.map((n) => `#${n}`).join(", ")}`));
  const stop = stopSwitch(["SIGTERM", "SIGINT"]);
  const watch = { timer: undefined as ReturnType<typeof setInterval> | undefined };
  try {
    const clone = join(dir, "widgets");
    await cloneRepository(dir, seeded.repository.clone_url, clone);
    const token = seeded.users.find((u) => u.trusted)!;
    const configFile = writeRehearsalConfig(dir, forge.url, token.token_file, token.login, clone);
    const config = await loadConfig({ path: configFile });
    await onboard(config, write);
    const self = commandText([`RA_STATE_DIR=${process.env.RA_STATE_DIR}`, robotArmyHere(), "status", "--config", configFile]);
    write(asLines(`config ${configFile}; look around with: ${self}`));
    watch.timer = watchPullRequests(forge.url, token.token_file, seeded.repository.full_name, write);
    const daemon = await import("./run.ts");
    return await daemon.run({ once: false, level: "live" }, { config, report: reporter(write, false), stop, env: process.env });
  } finally {
    if (watch.timer) clearInterval(watch.timer);
    stop.dispose();
    const root = process.env.RA_SESSION_ROOT!;
    for (const record of listRecords(root)) await stopSession(root, record).catch(() => {});
    await forge.close();
    write(asLines(`rehearsal stopped: its workers and the forge are stopped; its files stay in ${dir}`));
  }
}

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

function writeRehearsalConfig(dir: string, apiBase: string, tokenFile: string, author: string, clone: string): string {
  const file = join(dir, "config.toml");
  writeFileSync(file, [
    "# The rehearsal's config, written by robot-army start, which runs the daemon on it at the live level.",
    "[daemon]", "tick_seconds = 2", "poll_seconds = 10", "",
    "[github]", `api_base = ${JSON.stringify(apiBase)}`, `token_file = ${JSON.stringify(tokenFile)}`, `author = ${JSON.stringify(author)}`, "",
    "[worker]", 'binary = "demo-worker"',
    `launcher = ${JSON.stringify(process.env.TMUX ? "tmux" : "process")}`, "max_sessions = 2", "",
    "[worktrees]", `root = ${JSON.stringify(join(dir, "worktrees"))}`, "",
    '[repos."demo/widgets"]', `path = ${JSON.stringify(clone)}`, "",
  ].join("\n"));
  return file;
}

async function onboard(config: Awaited<ReturnType<typeof loadConfig>>, write: Write): Promise<void> {
  return await withStore(process.env.RA_STATE_DIR!, async (store) => {
    const { connectGitHub } = await import("../lib/boundaries/github.ts");
    const { onboardRepository } = await import("../lib/repos/onboard.ts");
    await onboardRepository(store, await connectGitHub(config, store), config, "demo/widgets");
    write(asLines("onboarded demo/widgets: its clone's origin is the forge's repository"));
  });
}

/** Prints each pull request the workers open on the forge, as it appears. */
function watchPullRequests(apiBase: string, tokenFile: string, repo: string, write: Write): ReturnType<typeof setInterval> {
  const seen = new Set<number>();
  const token = readFileSync(tokenFile, "utf8").trim();
  return setInterval(async () => {
    try {
      const answer = await fetch(`${apiBase}/repos/${repo}/pulls?state=all`, { headers: { authorization: `token ${token}` } });
      for (const pull of (await answer.json()) as Array<{ number: number; title: string; html_url: string; body: string | null }>) {
        if (seen.has(pull.number)) continue;
        seen.add(pull.number);
        write(asLines(`pull request opened: ${repo}#${pull.number} "${pull.title}" (${(pull.body ?? "").split("\n")[0]})`));
      }
    } catch {
      // The forge is stopping; the next look (if any) tries again.
    }
  }, 2000);
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
