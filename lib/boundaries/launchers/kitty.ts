/**
 * The kitty launcher: a tab per worker through kitty's remote control
 * (`kitty @ launch --type=tab --hold`), running `robot-army session run` in the
 * foreground; the window's user variable `ra_item=<id>` is its marker, with `ra_store=<store
 * path>` beside it (item ids start at 1 in every store). `--hold` keeps a tab whose command
 * failed at once readable. Matches are anchored (`^<id>$`): kitty reads them as regular
 * expressions, and item 7 must not match item 17. `closeTab` closes a window by `id:` AND both
 * markers in one match, so neither a window that took a reused id nor another store's window
 * is ever closed; it closes the marked window only, never the other windows the owner split
 * into its tab.
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

/** Options of the kitty launcher. */
export interface KittyLauncherOptions extends LauncherBaseOptions {
  /** The kitty program (default `kitty`). */
  binary?: string;
  /** The kitty to control (`kitty @ --to ADDRESS`); default: `$KITTY_LISTEN_ON`, else the kitty this runs in. */
  to?: string;
}

/** What `kitty @ ls` says of a window, as far as finding a marker needs. */
interface KittyWindow {
  id: number;
  user_vars?: Record<string, string>;
}

/** `kitty @ ls`: OS windows, their tabs, the tabs' windows. */
type KittyLs = Array<{ tabs?: Array<{ windows?: KittyWindow[] }> }>;

/** Runs workers in kitty tabs, each window carrying the user variable `ra_item=<id>`. */
export class KittyLauncher implements Launcher {
  readonly name = "kitty" as const;
  #binary: string;
  #to: string | undefined;
  #env: Env;
  /** How long a launch waits for its session to be on record and started. */
  readonly timeoutMs: number;

  constructor(options: KittyLauncherOptions = {}) {
    this.#binary = options.binary ?? "kitty";
    this.#to = options.to;
    this.#env = options.env ?? process.env;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_LAUNCH_TIMEOUT_MS;
  }

  /** Opens the worker's tab and waits until its session is on record and started. */
  async launch(spec: LaunchSpec): Promise<Launched> {
    const watch = watchLaunch(this.name, this.#env, spec);
    const vars = Object.entries(sessionEnv(this.#env)).flatMap(([key, value]) => ["--env", `${key}=${value}`]);
    const store = spec.tags[STORE_TAG];
    const markers = ["--var", `ra_item=${spec.item}`, ...(store === undefined ? [] : ["--var", `ra_store=${store}`])];
    // A kitty gives its tabs its own environment: the worker's is this process's (lib/sessions/launch-env.ts).
    const envFile = writeLaunchEnv(this.#env);
    try {
      const result = await this.#kitty([
        "launch", "--type=tab", "--hold", "--tab-title", spec.name, ...markers, "--cwd", resolve(spec.cwd), ...vars,
        "--", ...sessionRunArgv(spec, { detach: false, envFile }),
      ]);
      if (result.code !== 0) throw new LaunchError(this.name, spec, `kitty @ launch failed: ${failureLine(result.stderr) || `exit ${result.code}`}`);
      const window = /^\d+$/m.exec(result.stdout)?.[0] ?? null;
      const { terminal } = this.placeOf(spec);
      try {
        return launched(this.name, markerOf(spec.item), await watch.wait({ timeoutMs: this.timeoutMs }), window, terminal);
      } catch (error) {
        if (error instanceof LaunchError && window) error.message += ` (kitty window ${window})`;
        throw error;
      }
    } finally {
      rmSync(envFile, { force: true });
    }
  }

  /** Its tab is marked `ra_item=<id>` on the kitty it was told to use (or the one robot-army runs in). */
  placeOf(spec: Pick<LaunchSpec, "item" | "name">): LaunchPlace {
    return { launcher: this.name, marker: markerOf(spec.item), terminal: { launcher: this.name, to: this.#to ?? this.#env.KITTY_LISTEN_ON ?? null } };
  }

  /** The item's newest window; null when kitty lists none with its marker, "unknown" when kitty cannot be asked. */
  async find(item: number): Promise<WindowRef | null | "unknown"> {
    const windows = await this.#windows();
    if (windows === "unknown") return "unknown";
    const mine = windows.filter((w) => w.user_vars?.ra_item === String(item)).sort((a, b) => b.id - a.id);
    if (!mine.length) return null;
    // With --hold a tab stays after its command ended; kitty's listing does not say which.
    return { launcher: this.name, id: String(mine[0].id), marker: markerOf(item), running: null };
  }

  /** Every window whose `ra_item` is exactly the item, oldest first. */
  async tabs(item: number): Promise<TabRef[] | "unknown"> {
    const marked = await this.markedTabs();
    return marked === "unknown" ? marked : marked.filter((tab) => tab.item === item);
  }

  /** Every window carrying an `ra_item` marker, from one `kitty @ ls`. */
  async markedTabs(): Promise<TabRef[] | "unknown"> {
    const windows = await this.#windows();
    if (windows === "unknown") return "unknown";
    return windows
      .filter((w) => /^[1-9]\d*$/.test(w.user_vars?.ra_item ?? ""))
      .sort((a, b) => a.id - b.id)
      .map((w) => {
        const item = Number(w.user_vars!.ra_item);
        return { launcher: this.name, id: String(w.id), marker: markerOf(item), running: null, item, store: w.user_vars!.ra_store || null };
      });
  }

  /**
   * `kitty @ close-window` matching the window's id and both its markers together: "gone" when
   * no window matches all three. The store is checked in that same match (its path escaped
   * for kitty's regular expressions), not from a listing before it, so nothing can change
   * in between. A window listed without a store is never closed: it may be another robot-army's.
   */
  async closeTab(ref: TabRef): Promise<"closed" | "gone"> {
    if (!/^\d+$/.test(ref.id)) throw new TypeError(`kitty window id "${ref.id}" is not a number`);
    if (ref.store === null) throw new TypeError(`kitty window ${ref.id} carries no ra_store, so whose it is cannot be told: it is not closed`);
    const result = await this.#kitty(["close-window", "--match", `id:${ref.id} and ${matchOf(ref.item)} and var:ra_store=^${regexLiteral(ref.store)}$`]);
    if (result.code === 0) return "closed";
    if (/No matching windows/i.test(result.stderr)) return "gone";
    throw new Error(`kitty @ close-window failed: ${failureLine(result.stderr) || `exit ${result.code}`}`);
  }

  /**
   * `kitty @ send-text --stdin` into the window matching its id, its process (the worker's
   * session holder, pid `holder`: a window whose worker ended, held open by --hold, no longer
   * matches) and both its markers together (the text on stdin, which kitty sends as it is: its
   * argv form would read escapes), then a carriage return a moment later, matched the same way:
   * "gone" when no window matches.
   */
  async sendText(ref: TabRef, text: string, holder: number): Promise<"sent" | "gone"> {
    if (!/^\d+$/.test(ref.id)) throw new TypeError(`kitty window id "${ref.id}" is not a number`);
    if (ref.store === null) throw new TypeError(`kitty window ${ref.id} carries no ra_store, so whose it is cannot be told: nothing is typed into it`);
    if (!Number.isSafeInteger(holder) || holder <= 1) throw new TypeError(`pid ${holder} is no session holder's`);
    const match = ["--match", `id:${ref.id} and pid:${holder} and ${matchOf(ref.item)} and var:ra_store=^${regexLiteral(ref.store)}$`];
    const typed = await this.#kitty(["send-text", ...match, "--stdin"], text);
    if (typed.code !== 0) {
      if (/No matching windows/i.test(typed.stderr)) return "gone";
      throw new Error(`kitty @ send-text failed: ${failureLine(typed.stderr) || `exit ${typed.code}`}`);
    }
    await new Promise((done) => setTimeout(done, ENTER_AFTER_MS));
    const enter = await this.#kitty(["send-text", ...match, "--stdin"], "\r");
    if (enter.code !== 0) throw new Error(`kitty typed into window ${ref.id} but did not press Enter: ${failureLine(enter.stderr) || `exit ${enter.code}`}`);
    return "sent";
  }

  /** `kitty @ focus-tab` on the item's tab. */
  async attachCommand(item: number): Promise<string[] | null> {
    const ref = await this.find(item);
    if (ref === null || ref === "unknown") return null;
    return [this.#binary, "@", ...this.#toArgs(), "focus-tab", "--match", matchOf(item)];
  }

  /** A kitty tab gets the environment of the kitty it opens in, which kitty's remote control does not tell. */
  workerEnv(): Env {
    return this.#env;
  }

  async workerPath(): Promise<WorkerPath> {
    return { unknown: "a kitty tab has the PATH of the kitty it opens in, which cannot be read from here" };
  }

  async #windows(): Promise<KittyWindow[] | "unknown"> {
    const result = await this.#kitty(["ls"]);
    if (result.code !== 0) return "unknown";
    try {
      const listing = JSON.parse(result.stdout) as KittyLs;
      return listing.flatMap((os) => os.tabs ?? []).flatMap((tab) => tab.windows ?? []);
    } catch {
      return "unknown";
    }
  }

  #kitty(args: string[], stdin?: string): Promise<CommandResult> {
    return runCommand([this.#binary, "@", ...this.#toArgs(), ...args], this.#env, { timeoutMs: 10_000, stdin });
  }

  #toArgs(): string[] {
    return this.#to === undefined ? [] : ["--to", this.#to];
  }
}

/** The marker a kitty launch writes. */
function markerOf(item: number): string {
  return `ra_item=${item}`;
}

/** The tabs with a window whose `ra_item` is exactly the item. */
function matchOf(item: number): string {
  return `var:ra_item=^${item}$`;
}

/**
 * Text matched literally by kitty's regular expressions, inside one term of a `--match`
 * expression: every ASCII character but letters, digits, `_` and `/` becomes `\xHH`, and any
 * other whitespace `\uHHHH`, so no regex syntax, no space (which ends a term), no quote or
 * parenthesis (match syntax) and no `=` (which splits `var:` into key and value) is left in it.
 */
function regexLiteral(text: string): string {
  const hex = (c: string, width: number) => c.charCodeAt(0).toString(16).padStart(width, "0");
  return text.replace(/[\x00-\x7f]|\s/g, (c) => /[A-Za-z0-9_/]/.test(c) ? c : c <= "\x7f" ? `\\x${hex(c, 2)}` : `\\u${hex(c, 4)}`);
}
