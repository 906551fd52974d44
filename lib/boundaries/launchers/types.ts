/**
 * The launcher boundary: where a worker runs so its owner can see it (a tmux window, a
 * kitty tab, or nowhere for headless servers), and how that place is found again later by
 * the marker the launch wrote (DESIGN rule 6), never by a window's number or name.
 *
 * Every launcher runs the worker inside a managed session:
 * `robot-army session run --name <name> --tag ra_item=<id> ... -- <worker argv>`, so the
 * worker's exit is recorded even while the daemon is down.
 */
import { RobotArmyError } from "../../errors.ts";

/** The launchers there are, as `worker.launcher` names them. */
export type LauncherName = "tmux" | "process" | "kitty";

/** What to start: one worker for one work item. */
export interface LaunchSpec {
  /** The work item's id; becomes the session tag `ra_item` and the window's marker. */
  item: number;
  /** The managed session's name (`ra-<repo>-<issue>`): letters, digits, `.`, `_`, `-`. */
  name: string;
  /**
   * The managed session's id, chosen before the launch (`session run --id`), so the worker's
   * own argv can carry it (Claude Code's `--session-id`); default: `session run` picks one.
   */
  sessionId?: string;
  /** The worktree the worker runs in. */
  cwd: string;
  /** The worker's own argv (binary first). */
  argv: string[];
  /** More session tags (`ra_item` comes from `item` and may not be given here). */
  tags: Record<string, string>;
  /**
   * Variables for the worker, passed as `session run --env K=V`: they are visible in the
   * process list like any argument, so never a secret; secrets and the prompt go by file.
   */
  env?: Record<string, string>;
  /**
   * A file holding the worker's prompt. It never enters argv or the environment: the
   * worker gets its path as `RA_PROMPT_FILE` and reads it itself.
   */
  stdinFile?: string;
}

/** A started worker: which session it is, and the marker its window carries. */
export interface Launched {
  launcher: LauncherName;
  /** What `find` matches: `@ra_item=<id>` (tmux), `ra_item=<id>` (kitty), the session name (process). */
  marker: string;
  sessionName: string;
  /** The managed session's id (its UUID). */
  sessionId: string;
  /** Where it was opened, for reports: the tmux window id (`@3`) or the kitty window id; null when headless. */
  window: string | null;
}

/** A place a worker was launched into, as `find` saw it just now. */
export interface WindowRef {
  launcher: LauncherName;
  /** The tmux window id (`@3`), the kitty window id, or (process) the session's name. */
  id: string;
  marker: string;
  /**
   * Whether the worker's command still runs there: false when the window only shows its
   * output after it ended (remain-on-exit, --hold) or the session ended; null when not known.
   */
  running: boolean | null;
}

/** Starts workers where the owner can see them, and finds those places again by marker. */
export interface Launcher {
  readonly name: LauncherName;
  /** Starts the worker; resolves once its session is on record and its command started, else throws `LaunchError`. */
  launch(spec: LaunchSpec): Promise<Launched>;
  /** The place holding the item's worker; null when proven absent, "unknown" when it cannot be looked up. */
  find(item: number): Promise<WindowRef | null | "unknown">;
  /** The argv that shows the item's worker to the owner (attach, switch, focus); null when there is nothing to show. */
  attachCommand(item: number): Promise<string[] | null>;
  /** The PATH a worker launched now would look its program up on, or why that cannot be told from here. */
  workerPath(): Promise<WorkerPath>;
}

/** A launched worker's PATH (`path`, possibly empty), or why it is not known. */
export type WorkerPath = { path: string } | { unknown: string };

/** A worker could not be launched; the reason is for the item's row and the audit record, never a public comment. */
export class LaunchError extends RobotArmyError {
  launcher: LauncherName;
  item: number;
  sessionName: string;
  constructor(launcher: LauncherName, spec: { item: number; name: string }, reason: string) {
    super(`Cannot launch session "${spec.name}" for work item ${spec.item} (${launcher}): ${reason}`);
    this.name = "LaunchError";
    this.launcher = launcher;
    this.item = spec.item;
    this.sessionName = spec.name;
  }
}
