/**
 * Workers launched for real in a tmux server of the test's own (`-S <dir>/tmux.sock`), as the
 * tmux launcher launches them for a store: each in its window of the session `ra-workers`,
 * marked with its item and the store, running in a managed session whose record is in the
 * test's session root. The server is killed at the end, by that socket only, and the sessions'
 * processes stopped. For the tests of what reaches a worker's terminal (send, the dashboard's box).
 */
import { join } from "node:path";
import { mkdirSync } from "node:fs";
import { launcherForTerminal } from "../boundaries/launchers/select.ts";
import { TmuxLauncher } from "../boundaries/launchers/tmux.ts";
import type { Launched, Launcher, Terminal } from "../boundaries/launchers/types.ts";
import { runCommand } from "../run-command.ts";
import { listRecords } from "../sessions/records.ts";
import { sessionState } from "../sessions/state.ts";
import { stopSession } from "../sessions/stop.ts";
import { withTempDir } from "./fixtures.ts";

/** What a test is given. */
export interface TmuxWorkers {
  /** The test's own folder (the worker's working directory is `<dir>/work`). */
  dir: string;
  /** Where the sessions' records are. */
  sessionRoot: string;
  /** The environment the launches and the terminal reads use. */
  env: Record<string, string | undefined>;
  /** Launches `argv` as item `item`'s worker of the store at `store`, named `name`. */
  launch(item: number, name: string, argv: string[], store: string): Promise<Launched>;
  /** A launcher reaching a recorded terminal server in this environment (what a send is given). */
  terminalLauncher(terminal: Terminal): Launcher;
  /** Runs tmux on the test's server; its stdout, trimmed. */
  tmux(...args: string[]): Promise<string>;
}

/** Runs `fn` with a tmux server of its own, ended afterwards with every session it launched. */
export async function withTmuxWorkers(fn: (w: TmuxWorkers) => Promise<void>): Promise<void> {
  await withTempDir(async (dir) => {
    const sessionRoot = join(dir, "sessions");
    const work = join(dir, "work");
    mkdirSync(work, { recursive: true });
    const socket = join(dir, "tmux.sock");
    const env = { ...process.env, TMUX: undefined, TMUX_TMPDIR: dir, RA_SESSION_ROOT: sessionRoot, RA_STATE_DIR: join(dir, "state") };
    const launcher = new TmuxLauncher({ env, session: "ra-workers", socketPath: socket });
    const w: TmuxWorkers = {
      dir, sessionRoot, env,
      launch: (item, name, argv, store) => launcher.launch({ item, name, cwd: work, argv, tags: { ra_store: store } }),
      terminalLauncher: (terminal) => launcherForTerminal(terminal, { env }),
      async tmux(...args) {
        const result = await runCommand(["tmux", "-S", socket, ...args], env);
        if (result.code !== 0) throw new Error(`tmux ${args.join(" ")}: ${result.stderr.trim()}`);
        return result.stdout.trim();
      },
    };
    try {
      await fn(w);
    } finally {
      for (const record of listRecords(sessionRoot)) {
        if (sessionState(sessionRoot, record) === "running") await stopSession(sessionRoot, record, { graceMs: 2_000 }).catch(() => {});
      }
      await runCommand(["tmux", "-S", socket, "kill-server"], env);
    }
  });
}
