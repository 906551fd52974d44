/**
 * The tmux launcher: one window per worker in the tmux session `worker.tmux_session`
 * (created detached when missing), running `robot-army session run` in the foreground so
 * the worker has the terminal. The window option `@ra_item=<id>` is its marker, with
 * `@ra_store=<store path>` beside it (item ids start at 1 in every store, so the item alone
 * does not say whose window it is), and `remain-on-exit on` keeps a window whose command
 * failed at once readable. All are set in the same tmux command sequence that opens the
 * window, before its command can end.
 *
 * Its places are found again by those markers, never by a window's number: `tabs` lists every
 * window of the workers' session whose `@ra_item` is exactly the item, and `closeTab` kills a
 * window by its id only while it still carries both markers it was listed with (one tmux
 * `if-shell -F`, so no window that took the id meanwhile, and no other store's, is ever closed).
 *
 * tmux splits its argv into commands at arguments ending in `;`, and expands `#{...}` in
 * `-c` and `-n`: every argument is escaped for that, so no value is ever read as tmux syntax.
 */
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { writeLaunchEnv } from "../../sessions/launch-env.ts";
import { STORE_TAG } from "../../sessions/worker-tags.ts";
import { DEFAULT_LAUNCH_TIMEOUT_MS, ENTER_AFTER_MS, failureLine, launched, sessionEnv, sessionRunArgv, watchLaunch } from "./session-run.ts";
import { runCommand } from "../../run-command.ts";
import type { Env, LauncherBaseOptions } from "./session-run.ts";
import type { CommandResult } from "../../run-command.ts";
import { LaunchError } from "./types.ts";
import type { Launched, Launcher, LaunchPlace, LaunchSpec, TabRef, WindowRef, WorkerPath } from "./types.ts";

/** Options of the tmux launcher. */
export interface TmuxLauncherOptions extends LauncherBaseOptions {
  /** The tmux session that holds the workers' windows (`worker.tmux_session`). */
  session: string;
  /** A tmux socket name (`tmux -L <name>`, a server of its own); default: tmux's own choice. */
  socket?: string;
  /** The socket's path (`tmux -S <path>`), as a session row recorded it; wins over `socket`. */
  socketPath?: string;
  /** The tmux program (default `tmux`). */
  binary?: string;
}

/** One window of the workers' tmux session, as `list-windows` describes it. */
interface WindowRow {
  id: string;
  index: number;
  /** Whether its active pane's command has ended (what `find` reports of the worker's pane). */
  dead: boolean;
  /** Whether any of its panes still runs a command (an owner's split beside an ended worker does). */
  live: boolean;
  marker: string;
  /** Its `@ra_store` ("" when unset). */
  store: string;
}

const SESSION_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const WINDOW_ID = /^@\d+$/;
const NO_WINDOW = /can't find window/;
/** What a tmux client says when the server it reached ended under it (its last window was just killed). */
const SERVER_ENDING = /server exited unexpectedly|lost server/;
const NO_SESSION = /can't find session|no server running|error connecting to .*\((No such file or directory|Connection refused)\)/;
/** The store's path comes last: a path may hold spaces, a window id, index, flags and item id do not. */
const ROW_FORMAT = "#{window_id} #{window_index} #{pane_dead} #{P:#{?pane_dead,,1}} #{@ra_item} #{@ra_store}";
/** What tells one tmux server from another: a socket can be reused by a new server, a pid with its start time cannot. */
const SERVER_FORMAT = "#{pid} #{start_time}";

/** Whether a tmux session name is one target only: no ":" or "." (target syntax), no "#" (format syntax). */
export function isTmuxSessionName(name: string): boolean {
  return SESSION_NAME.test(name);
}

/** Runs workers in windows of a tmux session, each marked `@ra_item=<id>`. */
export class TmuxLauncher implements Launcher {
  readonly name = "tmux" as const;
  #session: string;
  #socket: string | undefined;
  #socketPath: string | undefined;
  #binary: string;
  #env: Env;
  /** How long a launch waits for its session to be on record and started. */
  readonly timeoutMs: number;

  constructor(options: TmuxLauncherOptions) {
    if (!isTmuxSessionName(options.session)) {
      throw new TypeError(`tmux session name "${options.session}" must be letters, digits, "_" or "-" (at most 64)`);
    }
    this.#session = options.session;
    this.#socket = options.socket;
    this.#socketPath = options.socketPath;
    this.#binary = options.binary ?? "tmux";
    this.#env = options.env ?? process.env;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_LAUNCH_TIMEOUT_MS;
  }

  /** Opens the worker's window and waits until its session is on record and started. */
  async launch(spec: LaunchSpec): Promise<Launched> {
    const watch = watchLaunch(this.name, this.#env, spec);
    // A server already running would give the window its own environment: the worker's is this process's (lib/sessions/launch-env.ts).
    const envFile = writeLaunchEnv(this.#env);
    try {
      const { window, socketPath } = await this.#openWindow(spec, sessionRunArgv(spec, { detach: false, envFile }));
      try {
        const session = await watch.wait({ timeoutMs: this.timeoutMs, ended: () => this.#paneEnded(window) });
        const terminal = { ...this.placeOf(spec).terminal, socket_path: socketPath };
        return launched(this.name, markerOf(spec.item), session, window, terminal);
      } catch (error) {
        if (error instanceof LaunchError) error.message += ` (tmux window ${window})`;
        throw error;
      }
    } finally {
      // The holder took it as it started; a launch that never got that far leaves nothing behind either.
      rmSync(envFile, { force: true });
    }
  }

  /** Its window is marked `@ra_item=<id>` in the configured session; the socket's path is known only as configured. */
  placeOf(spec: Pick<LaunchSpec, "item" | "name">): LaunchPlace & { terminal: { launcher: "tmux" } } {
    return {
      launcher: this.name, marker: markerOf(spec.item),
      terminal: { launcher: this.name, socket: this.#socket ?? null, socket_path: this.#socketPath ?? null, session: this.#session },
    };
  }

  /** The item's window: a live one first, else the newest; null when the session or server is gone. */
  async find(item: number): Promise<WindowRef | null | "unknown"> {
    const rows = await this.#windows();
    if (!Array.isArray(rows)) return "unknown";
    const mine = rows.filter((row) => row.marker === String(item)).sort((a, b) => windowNumber(b.id) - windowNumber(a.id));
    const pick = mine.find((row) => !row.dead) ?? mine[0];
    if (!pick) return null;
    return { launcher: this.name, id: pick.id, marker: markerOf(item), running: !pick.dead };
  }

  /** Every window of the workers' session marked with exactly this item, oldest first. */
  async tabs(item: number): Promise<TabRef[] | "unknown"> {
    const marked = await this.markedTabs();
    return marked === "unknown" ? marked : marked.filter((tab) => tab.item === item);
  }

  /** Every window of the workers' session carrying a marker, in one `list-windows`; running when any of its panes runs a command. */
  async markedTabs(): Promise<TabRef[] | "unknown"> {
    const rows = await this.#windows();
    if (!Array.isArray(rows)) return "unknown";
    return rows
      .filter((row) => /^[1-9]\d*$/.test(row.marker))
      .sort((a, b) => windowNumber(a.id) - windowNumber(b.id))
      .map((row) => ({ launcher: this.name, id: row.id, marker: markerOf(Number(row.marker)), running: row.live, item: Number(row.marker), store: row.store || null }));
  }

  /**
   * Kills the window by its id, only while its `@ra_item` and `@ra_store` still name the item
   * and store it was listed with. A window listed without a store is never closed: it may be
   * another robot-army's.
   */
  async closeTab(ref: TabRef): Promise<"closed" | "gone"> {
    if (!WINDOW_ID.test(ref.id)) throw new TypeError(`tmux window id "${ref.id}" is not of the form @N`);
    if (ref.store === null) throw new TypeError(`tmux window ${ref.id} carries no @ra_store, so whose it is cannot be told: it is not closed`);
    const listed = `${ref.item} ${ref.store}`;
    const before = await this.#markersOf(ref.id);
    if (before !== listed) return "gone";
    // One tmux command: both markers are checked and the window killed with nothing in between.
    const guard = `#{&&:#{==:#{@ra_item},${ref.item}},#{==:#{@ra_store},${formatArgument(ref.store)}}}`;
    const result = await this.#tmux([["if-shell", "-F", "-t", ref.id, guard, `kill-window -t ${ref.id}`]]);
    const after = await this.#markersAfterKill(ref.id);
    if (after === null) return "closed";
    if (after !== listed) return "gone";
    throw new Error(`tmux did not close window ${ref.id}: ${failureLine(result.stderr) || `tmux exited with ${result.code}`}`);
  }

  /**
   * Types `text` into the worker's pane of the window, then presses Enter: the pane whose process
   * is the session holder `holder` (an owner's split beside it is never typed into), each only
   * while that pane is alive and the window's `@ra_item` and `@ra_store` still name the item and
   * store it was listed with. The text goes in through a buffer of robot-army's own name
   * (`set-buffer`, then `paste-buffer` inside one `if-shell -F` that checks the pane and both
   * markers), so it never passes tmux's command parser and is pasted with nothing between the
   * check and the paste. Enter is pressed `ENTER_AFTER_MS` later, on its own, under the same check.
   */
  async sendText(ref: TabRef, text: string, holder: number): Promise<"sent" | "gone"> {
    if (!WINDOW_ID.test(ref.id)) throw new TypeError(`tmux window id "${ref.id}" is not of the form @N`);
    if (ref.store === null) throw new TypeError(`tmux window ${ref.id} carries no @ra_store, so whose it is cannot be told: nothing is typed into it`);
    if (!Number.isSafeInteger(holder) || holder <= 1) throw new TypeError(`pid ${holder} is no session holder's`);
    if ((await this.#markersOf(ref.id)) !== `${ref.item} ${ref.store}`) return "gone";
    const pane = await this.#workerPane(ref.id, holder);
    if (pane === null) return "gone";
    const markers = `#{&&:#{==:#{@ra_item},${ref.item}},#{==:#{@ra_store},${formatArgument(ref.store)}}}`;
    const guard = `#{&&:#{&&:#{==:#{pane_pid},${holder}},#{==:#{pane_dead},0}},${markers}}`;
    const buffer = `ra-send-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
    const paste = await this.#tmux([["set-buffer", "-b", buffer, "--", text], ["if-shell", "-F", "-t", pane, guard, `paste-buffer -d -b ${buffer} -t ${pane}`]]);
    // The paste deletes its buffer: one still there was not pasted (the markers had changed), and nothing was typed.
    const left = await this.#tmux([["show-buffer", "-b", buffer]]);
    if (left.code === 0) {
      await this.#tmux([["delete-buffer", "-b", buffer]]);
      if (paste.code === 0) return "gone";
    }
    if (paste.code !== 0) throw new Error(`tmux did not type into window ${ref.id}: ${failureLine(paste.stderr) || `tmux exited with ${paste.code}`}`);
    await new Promise((done) => setTimeout(done, ENTER_AFTER_MS));
    const enter = await this.#tmux([["if-shell", "-F", "-t", pane, guard, `send-keys -t ${pane} Enter`]]);
    if (enter.code !== 0) throw new Error(`tmux typed into window ${ref.id} but did not press Enter: ${failureLine(enter.stderr) || `tmux exited with ${enter.code}`}`);
    return "sent";
  }

  /** The id (`%N`) of the window's live pane whose process is `holder`, or null when none is (the worker ended, the window changed). */
  async #workerPane(window: string, holder: number): Promise<string | null> {
    const result = await this.#tmux([["list-panes", "-t", window, "-F", "#{pane_id} #{pane_pid} #{pane_dead}"]]);
    if (result.code !== 0) {
      if (NO_WINDOW.test(result.stderr) || NO_SESSION.test(result.stderr)) return null;
      throw new Error(`tmux cannot list the panes of window ${window}: ${failureLine(result.stderr) || `tmux exited with ${result.code}`}`);
    }
    const row = result.stdout.split("\n").map((line) => line.split(" ")).find(([id, pid, dead]) => /^%\d+$/.test(id) && pid === String(holder) && dead === "0");
    return row ? row[0] : null;
  }

  /**
   * `#markersOf` just after a kill: a server whose last window was killed is ending, and a
   * client that reaches it then hears "server exited unexpectedly", which says nothing yet.
   * It is asked again for up to two seconds, until the server answers or is gone.
   */
  async #markersAfterKill(window: string): Promise<string | null> {
    const deadline = Date.now() + 2000;
    for (;;) {
      try {
        return await this.#markersOf(window);
      } catch (error) {
        if (!SERVER_ENDING.test((error as Error).message) || Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  /**
   * A window's `@ra_item` and `@ra_store` as `<item> <store>` (each "" when unset), null when the
   * window (or its whole server) is gone; throws when tmux cannot be asked.
   */
  async #markersOf(window: string): Promise<string | null> {
    const result = await this.#tmux([["display-message", "-p", "-t", window, "#{window_id} #{@ra_item} #{@ra_store}"]]);
    if (result.code !== 0) {
      if (NO_WINDOW.test(result.stderr) || NO_SESSION.test(result.stderr)) return null;
      throw new Error(`tmux cannot say what window ${window} is: ${failureLine(result.stderr) || `tmux exited with ${result.code}`}`);
    }
    const line = result.stdout.replace(/\n$/, "");
    const space = line.indexOf(" ");
    return line.slice(0, space) === window ? line.slice(space + 1) : null;
  }

  /**
   * `tmux attach-session` to the item's window, or `switch-client` when already inside this
   * tmux server (whose panes tmux refuses to attach from: "sessions should be nested with care").
   * From a pane of another server, attaching opens the window nested there, which tmux allows.
   */
  async attachCommand(item: number): Promise<string[] | null> {
    const ref = await this.find(item);
    if (ref === null || ref === "unknown") return null;
    const verb = (await this.#insideThisServer()) ? "switch-client" : "attach-session";
    return [this.#binary, ...this.#socketArgs(), verb, "-t", `=${this.#session}:${ref.id}`];
  }

  /**
   * The PATH a new window of the workers' session gets: the session's own PATH when it has
   * one, else the server's global one (`show-environment`). With no server running yet, the
   * server a launch starts takes its environment from robot-army's, so that PATH it is.
   */
  workerEnv(): Env {
    return this.#env;
  }

  async workerPath(): Promise<WorkerPath> {
    const session = await this.#tmux([["show-environment", "-t", `=${this.#session}`, "PATH"]]);
    if (session.code === 0) return pathOf(session.stdout);
    const global = await this.#tmux([["show-environment", "-g", "PATH"]]);
    if (global.code === 0) return pathOf(global.stdout);
    if (NO_SESSION.test(global.stderr)) return { path: this.#env.PATH ?? "" };
    return { unknown: `tmux cannot say the PATH its windows get: ${failureLine(global.stderr) || `tmux exited with ${global.code}`}` };
  }

  /**
   * Creates the window (and the session when missing) with its markers and remain-on-exit in
   * one command sequence; its id, and the path of the socket of the server it opened on.
   */
  async #openWindow(spec: LaunchSpec, command: string[]): Promise<{ window: string; socketPath: string | null }> {
    const vars = Object.entries(sessionEnv(this.#env)).flatMap(([key, value]) => ["-e", `${key}=${value}`]);
    const place = ["-n", formatLiteral(spec.name), "-c", formatLiteral(resolve(spec.cwd)), ...vars, "-P", "-F", "#{window_id} #{socket_path}"];
    const store = spec.tags[STORE_TAG];
    let reason = "";
    for (let attempt = 0; attempt < 5; attempt++) {
      const rows = await this.#windows();
      if (!Array.isArray(rows)) throw new LaunchError(this.name, spec, `tmux cannot list the windows of session "${this.#session}": ${rows.unknown}`);
      // The options below must reach this window and no other, whatever hooks the owner's tmux runs: in a new
      // session it is the first window (`^`); in an existing one, the window at the next free index.
      const target = rows.length === 0 ? `=${this.#session}:^` : `=${this.#session}:${Math.max(...rows.map((r) => r.index)) + 1}`;
      const open = rows.length === 0
        ? ["new-session", "-d", "-s", this.#session, ...place, "--", ...command]
        : ["new-window", "-d", "-t", target, ...place, "--", ...command];
      const result = await this.#tmux([
        open,
        ["set-option", "-w", "-t", target, "remain-on-exit", "on"],
        ["set-option", "-w", "-t", target, "@ra_item", String(spec.item)],
        ...(store === undefined ? [] : [["set-option", "-w", "-t", target, "@ra_store", store]]),
      ]);
      const opened = /^(@\d+) ?(.*)$/m.exec(result.stdout);
      const window = opened?.[1];
      if (result.code === 0 && opened) return { window: opened[1], socketPath: opened[2] || null };
      if (window) {
        // Opened but not marked: a window nothing could find again is closed at once.
        await this.#tmux([["kill-window", "-t", window]]);
        throw new LaunchError(this.name, spec, `tmux opened window ${window} but could not mark it: ${failureLine(result.stderr)}`);
      }
      reason = failureLine(result.stderr) || `tmux exited with ${result.code}`;
      // Another launch made the session or took the index meanwhile: look again.
      if (!/duplicate session|index \d+ in use/.test(reason)) break;
    }
    throw new LaunchError(this.name, spec, `tmux could not open a window: ${reason}`);
  }

  /** Why the launched window's command is gone (with robot-army's own message from the pane, when it left one), or undefined while it runs. */
  async #paneEnded(window: string): Promise<string | undefined> {
    const result = await this.#tmux([["display-message", "-p", "-t", window, "#{pane_dead} #{pane_dead_status}"]]);
    if (result.code !== 0) return /can't find window/.test(result.stderr) ? "its tmux window closed before the worker started" : undefined;
    const [dead, status] = result.stdout.trim().split(" ");
    if (dead !== "1") return undefined;
    const pane = await this.#tmux([["capture-pane", "-p", "-J", "-S", "-", "-t", window]]);
    const said = pane.stdout.split("\n").find((line) => line.startsWith("robot-army: "));
    return `its command ended${status ? ` with status ${status}` : ""} before the worker started${said ? `: ${failureLine(said)}` : ""}`;
  }

  /** The windows of the workers' session; empty when the session or the whole server is gone. */
  async #windows(): Promise<WindowRow[] | { unknown: string }> {
    const result = await this.#tmux([["list-windows", "-t", `=${this.#session}`, "-F", ROW_FORMAT]]);
    if (result.code !== 0) {
      if (NO_SESSION.test(result.stderr)) return [];
      return { unknown: failureLine(result.stderr) || `tmux exited with ${result.code}` };
    }
    return result.stdout.split("\n").filter(Boolean).map((line) => {
      const [id, index, dead, live, marker, ...store] = line.split(" ");
      return { id, index: Number(index), dead: dead === "1", live: live !== "", marker: marker ?? "", store: store.join(" ") };
    });
  }

  /** Runs a tmux command sequence on this launcher's server. */
  #tmux(commands: string[][]): Promise<CommandResult> {
    const args = commands.flatMap((command, i) => [...(i ? [";"] : []), ...command.map(literalArgument)]);
    return runCommand([this.#binary, ...this.#socketArgs(), ...args], this.#env, { timeoutMs: 10_000 });
  }

  #socketArgs(): string[] {
    if (this.#socketPath !== undefined) return ["-S", this.#socketPath];
    return this.#socket === undefined ? [] : ["-L", this.#socket];
  }

  /**
   * Whether this process runs in a pane of the server this launcher uses. Told by the
   * server itself (its pid and start time, asked through `$TMUX` and through this
   * launcher's socket), never by the socket's name: without a socket of its own the
   * launcher reaches the server `$TMUX` names, whatever that server is called.
   */
  async #insideThisServer(): Promise<boolean> {
    if (!this.#env.TMUX) return false;
    const [mine, current] = await Promise.all([
      this.#serverIdentity([this.#binary, ...this.#socketArgs()]),
      this.#serverIdentity([this.#binary]),
    ]);
    return mine !== null && mine === current;
  }

  /** `<pid> <start time>` of the server a tmux argv prefix reaches, or null when none answers. */
  async #serverIdentity(tmux: string[]): Promise<string | null> {
    const result = await runCommand([...tmux, "display-message", "-p", SERVER_FORMAT], this.#env, { timeoutMs: 5_000 });
    const answer = result.stdout.trim();
    return result.code === 0 && /^\d+ \d+$/.test(answer) ? answer : null;
  }
}

/** `PATH=...` as show-environment prints it; `-PATH` means it is removed, so a window has none. */
function pathOf(stdout: string): WorkerPath {
  const line = stdout.trim();
  if (line === "-PATH") return { path: "" };
  return line.startsWith("PATH=") ? { path: line.slice("PATH=".length) } : { unknown: `tmux answered ${JSON.stringify(line)} for PATH` };
}

/** The marker a tmux launch writes. */
function markerOf(item: number): string {
  return `@ra_item=${item}`;
}

function windowNumber(id: string): number {
  return Number(id.slice(1));
}

/** tmux ends a command at an argument ending in `;` unless it ends in `\;` (which becomes `;`). */
function literalArgument(arg: string): string {
  return arg.endsWith(";") ? `${arg.slice(0, -1)}\\;` : arg;
}

/** `#` starts a tmux format in `-c` and `-n`; `##` is a literal `#`. */
function formatLiteral(text: string): string {
  return text.replaceAll("#", "##");
}

/** A literal inside a format's `#{==:a,b}`: `##`, `#,` and `#}` are a literal `#`, `,` and `}` there. */
function formatArgument(text: string): string {
  return text.replace(/[#,}]/g, (c) => `#${c}`);
}
