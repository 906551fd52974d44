/**
 * The headless launcher, for servers and CI: the worker runs in a detached managed session
 * (`session run -d`) with no terminal. Its marker is the session's name; it is found by
 * the session tag `ra_item`.
 */
import { listRecords, sessionRoot } from "../../sessions/records.ts";
import type { SessionRecord } from "../../sessions/records.ts";
import { sessionState } from "../../sessions/state.ts";
import type { SessionState } from "../../sessions/state.ts";
import { DEFAULT_LAUNCH_TIMEOUT_MS, assertNameFree, failureLine, sessionEnv, sessionRunArgv } from "./session-run.ts";
import { runCommand } from "../../run-command.ts";
import type { Env, LauncherBaseOptions } from "./session-run.ts";
import { LaunchError } from "./types.ts";
import type { Launched, Launcher, LaunchPlace, LaunchSpec, TabRef, WindowRef, WorkerPath } from "./types.ts";

/** Options of the process launcher. */
export type ProcessLauncherOptions = LauncherBaseOptions;

/** Runs workers headless in detached managed sessions. */
export class ProcessLauncher implements Launcher {
  readonly name = "process" as const;
  #env: Env;
  /** How long a launch waits for its session to be on record and started. */
  readonly timeoutMs: number;

  constructor(options: ProcessLauncherOptions = {}) {
    this.#env = options.env ?? process.env;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_LAUNCH_TIMEOUT_MS;
  }

  /** Starts `session run -d`, which returns once the worker is confirmed started. */
  async launch(spec: LaunchSpec): Promise<Launched> {
    assertNameFree(this.name, sessionRoot(this.#env), spec);
    const argv = sessionRunArgv(spec, { detach: true });
    const result = await runCommand(argv, { ...this.#env, ...sessionEnv(this.#env) }, { timeoutMs: this.timeoutMs });
    if (result.code === 124) throw new LaunchError(this.name, spec, `session run did not confirm the start within ${this.timeoutMs / 1000}s`);
    if (result.code !== 0) throw new LaunchError(this.name, spec, failureLine(result.stderr) || `session run exited with ${result.code}`);
    // "started <name> <id> (pid N)": the session may have ended and been reaped already, so its id comes from here.
    const match = /^started (\S+) ([0-9a-f-]{36}) \(pid \d+\)$/m.exec(result.stdout);
    if (!match) throw new LaunchError(this.name, spec, `session run answered ${JSON.stringify(result.stdout.trim())}`);
    return { launcher: this.name, marker: match[1], sessionName: match[1], sessionId: match[2], window: null, terminal: { launcher: this.name } };
  }

  /** Its marker is the session's name; it has no terminal. */
  placeOf(spec: Pick<LaunchSpec, "item" | "name">): LaunchPlace {
    return { launcher: this.name, marker: spec.name, terminal: { launcher: this.name } };
  }

  /** The item's running session, else its latest on record; "unknown" when the records cannot be read. */
  async find(item: number): Promise<WindowRef | null | "unknown"> {
    const sessions = this.#sessionsOf(item);
    if (sessions === "unknown") return "unknown";
    const pick = sessions.find((s) => s.state === "running") ?? sessions.find((s) => s.state === "starting" || s.state === "unknown") ?? sessions.at(-1);
    if (!pick) return null;
    const running = pick.state === "running" ? true : pick.state === "exited" || pick.state === "vanished" ? false : null;
    return { launcher: this.name, id: pick.record.name, marker: pick.record.name, running };
  }

  /** A headless worker has no tab. */
  async tabs(_item: number): Promise<TabRef[]> {
    return [];
  }

  /** A headless worker has no tab. */
  async markedTabs(): Promise<TabRef[]> {
    return [];
  }

  /** There is no tab to close. */
  async closeTab(_ref: TabRef): Promise<"gone"> {
    return "gone";
  }

  /** A headless worker has no terminal to type into. */
  async sendText(_ref: TabRef, _text: string, _holder: number): Promise<"gone"> {
    return "gone";
  }

  /** A headless session has no terminal to attach to (`robot-army session peek <name>` shows its output). */
  async attachCommand(_item: number): Promise<string[] | null> {
    return null;
  }

  /** A headless worker inherits robot-army's own environment, PATH and all. */
  workerEnv(): Env {
    return this.#env;
  }

  async workerPath(): Promise<WorkerPath> {
    return { path: this.#env.PATH ?? "" };
  }

  #sessionsOf(item: number): Array<{ record: SessionRecord; state: SessionState }> | "unknown" {
    const root = sessionRoot(this.#env);
    try {
      return listRecords(root)
        .filter((record) => record.tags.ra_item === String(item))
        .map((record) => ({ record, state: sessionState(root, record) }));
    } catch {
      return "unknown";
    }
  }
}
