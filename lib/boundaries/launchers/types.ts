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
  /**
   * More session tags (`ra_item` comes from `item` and may not be given here). `ra_store`
   * (the store's path) also marks the window, so the tab sweep knows it for this store's.
   */
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
  /** The terminal server it was opened on, recorded on its session row so its tabs are looked for there later. */
  terminal: Terminal;
}

/** What a launch's row records of where it runs: the launcher, the marker it is found by, its terminal server. */
export type LaunchPlace = Pick<Launched, "launcher" | "marker" | "terminal">;

/**
 * The terminal server a worker was launched on, as its session row records it (JSON): the
 * tab sweep asks that server, never the one the current config names, so a tab is found
 * even after the config changed. tmux: the `-L` socket name (null: tmux's own choice), the
 * socket's path as the server reported it (null when not known), and the tmux session;
 * kitty: the remote-control address (`--to`; null: the kitty robot-army ran in).
 */
export type Terminal =
  | { launcher: "tmux"; socket: string | null; socket_path: string | null; session: string }
  | { launcher: "kitty"; to: string | null }
  | { launcher: "process" };

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

/** One of an item's places, found by its marker: which item, and which store, its markers name. */
export interface TabRef extends WindowRef {
  item: number;
  /**
   * The store the launch marked it with (`@ra_store` / `ra_store`: the store's path), or null
   * on a place launched before stores were marked, whose item id alone does not say whose it is.
   */
  store: string | null;
}

/** Starts workers where the owner can see them, and finds those places again by marker. */
export interface Launcher {
  readonly name: LauncherName;
  /**
   * How long a launch waits for its session before it gives up (`daemon.confirm_timeout`): what a
   * launch cut short waits, at the least, before its session's record is read (lib/store/effect-kinds.ts).
   */
  readonly timeoutMs: number;
  /** Starts the worker; resolves once its session is on record and its command started, else throws `LaunchError`. */
  launch(spec: LaunchSpec): Promise<Launched>;
  /**
   * Where a launch of this spec is found, as far as it is known before the launch (tmux's
   * socket path only as configured): what a worker adopted after its launch was cut short
   * is recorded with (lib/daemon/settle-claims.ts).
   */
  placeOf(spec: Pick<LaunchSpec, "item" | "name">): LaunchPlace;
  /** The place holding the item's worker; null when proven absent, "unknown" when it cannot be looked up. */
  find(item: number): Promise<WindowRef | null | "unknown">;
  /**
   * Every place on this launcher's server whose marker names exactly this item, oldest
   * first; "unknown" when the terminal cannot be asked (never taken for none).
   */
  tabs(item: number): Promise<TabRef[] | "unknown">;
  /** Every marked place on this launcher's server, asked once (the tab sweep picks markers from it). */
  markedTabs(): Promise<TabRef[] | "unknown">;
  /**
   * Closes one place, only while it still carries the item and store markers it was listed
   * with (a reused window id, another store's window, is never closed; one listed with no store
   * is refused): "gone" when it is no longer there with those markers. Throws
   * when the terminal cannot be asked or refuses.
   */
  closeTab(ref: TabRef): Promise<"closed" | "gone">;
  /**
   * Types `text` into the worker's own pane of one place as its owner would at the worker's
   * prompt, then presses Enter: the pane (tmux) or window (kitty) whose process is the worker's
   * session holder, pid `holder` (never a shell the owner split beside it), only while it still
   * runs there and the place still carries the item and store markers it was listed with (never
   * into a reused window id, never into another store's window; one listed with no store is
   * refused): "gone" when it no longer does, and nothing was typed. The text is typed
   * literally: the caller has refused control characters, so no key beyond it is ever sent.
   * Throws when the terminal cannot be asked or refuses.
   */
  sendText(ref: TabRef, text: string, holder: number): Promise<"sent" | "gone">;
  /** The argv that shows the item's worker to the owner (attach, switch, focus); null when there is nothing to show. */
  attachCommand(item: number): Promise<string[] | null>;
  /** The PATH a worker launched now would look its program up on, or why that cannot be told from here. */
  workerPath(): Promise<WorkerPath>;
  /**
   * The environment a worker launched now starts with, robot-army's own variables aside: the
   * daemon's, whichever terminal hosts it (lib/sessions/launch-env.ts). What a profile reads of
   * the agent's own settings (Codex's home) is read where the worker will read it.
   */
  workerEnv(): Record<string, string | undefined>;
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

/**
 * A terminal as a session row stored it (JSON), or null when the row has none or it is not
 * one this code knows (a row from before terminals were recorded).
 */
export function parseTerminal(text: unknown): Terminal | null {
  if (typeof text !== "string") return null;
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (value === null || typeof value !== "object") return null;
  const textOrNull = (v: unknown) => v === null || typeof v === "string";
  switch (value.launcher) {
    case "tmux":
      return typeof value.session === "string" && textOrNull(value.socket) && textOrNull(value.socket_path)
        ? { launcher: "tmux", socket: value.socket as string | null, socket_path: value.socket_path as string | null, session: value.session }
        : null;
    case "kitty":
      return textOrNull(value.to) ? { launcher: "kitty", to: value.to as string | null } : null;
    case "process":
      return { launcher: "process" };
    default:
      return null;
  }
}
