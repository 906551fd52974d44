/**
 * The running daemon takes a changed config.toml without a restart. At the start of every
 * pass (and at once on SIGHUP, which wakes the loop) the file is read again; when its text
 * differs from the one applied, it is validated whole, as at start:
 *
 * - valid: it is applied for this pass on (repositories, caps, channels, the worker and its
 *   launcher, the tick's interval), the pass's log says what changed, key by key, and the
 *   `config.applied` audit fact keeps the list. What the daemon wired once at its start (the
 *   effect level, the GitHub connection) is named as taking effect at the next restart. A new
 *   repository still needs `onboard` before anything is dispatched for it (the gate's rule).
 * - not valid: nothing of it is applied; the daemon keeps the last good config and carries
 *   on, and says why in one line naming the file and the line: in its log, as the
 *   `config_refused` anomaly (which `status` counts and a notification carries), and as the
 *   `config.refused` audit fact. The anomaly is retracted once a good config is applied, or
 *   the file holds the applied text again.
 *
 * What the daemon runs is in its heartbeat (`config`: the file, the SHA-256 of the text
 * applied, and a refused text's reason), which `doctor` compares with the file.
 */
import { readFileSync } from "node:fs";
import { isoSeconds, now } from "../clock.ts";
import { configFromText } from "../config.ts";
import type { Config } from "../config.ts";
import { LEVEL_KEY } from "../effects.ts";
import type { Report } from "../events.ts";
import { appendAudit } from "../store/audit.ts";
import { listAnomalies, raiseAnomaly, retractAnomaly } from "../store/anomalies.ts";
import type { Store } from "../store/open.ts";
import { sha256Hex } from "../sha256.ts";

type Env = Record<string, string | undefined>;

/** The config a daemon runs, as its heartbeat records it. */
export interface ConfigInUse {
  path: string;
  /** SHA-256 of the text applied, hex. */
  sha256: string;
  /** When that text was applied: the daemon's start, or the pass that took it. */
  applied_at: string;
  /** The file's newer text that was not applied, and why; null when none is waiting. */
  refused: { sha256: string; reason: string; at: string } | null;
}

/** What a look at the file found. */
export type Reload =
  | { kind: "unchanged" }
  /** The file holds the applied text again after a refused one: the refusal is over. */
  | { kind: "restored" }
  | { kind: "applied"; config: Config; changes: string[]; atRestart: string[] }
  | { kind: "refused"; reason: string };

/** Keys the daemon wires once at its start (the level, the GitHub connection): a change to one is applied at its next restart. */
const AT_RESTART = [LEVEL_KEY, "github.api_base", "github.token_file", "github.token_env"];

/** Watches the config file a daemon started from. */
export class ConfigWatch {
  readonly path: string;
  #env: Env;
  #applied: { text: string; sha256: string; at: string };
  #refused: { text: string; sha256: string; reason: string; at: string } | null = null;

  private constructor(path: string, env: Env, applied: { text: string; sha256: string; at: string }) {
    this.path = path;
    this.#env = env;
    this.#applied = applied;
  }

  /** A watch of `path`, whose `text` the daemon started with. */
  static async start(path: string, text: string, env: Env = process.env): Promise<ConfigWatch> {
    return new ConfigWatch(path, env, { text, sha256: sha256Hex(text), at: isoSeconds(now()) });
  }

  /** What the daemon runs now, for its heartbeat. */
  inUse(): ConfigInUse {
    const refused = this.#refused && { sha256: this.#refused.sha256, reason: this.#refused.reason, at: this.#refused.at };
    return { path: this.path, sha256: this.#applied.sha256, applied_at: this.#applied.at, refused };
  }

  /** Reads the file again and says what to do with it; `current` is the config applied now. */
  async check(current: Config): Promise<Reload> {
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return this.#refuse(`\u0000${code}`, `Cannot read config "${this.path}": ${code === "ENOENT" ? "no such file" : (error as Error).message}`);
    }
    if (text === this.#applied.text) {
      if (!this.#refused) return { kind: "unchanged" };
      this.#refused = null;
      return { kind: "restored" };
    }
    if (this.#refused?.text === text) return { kind: "unchanged" };
    let config: Config;
    try {
      config = await configFromText(text, this.path, this.#env);
    } catch (error) {
      return this.#refuse(text, (error as Error).message);
    }
    this.#applied = { text, sha256: sha256Hex(text), at: isoSeconds(now()) };
    this.#refused = null;
    const { changes, atRestart } = configChanges(current, config);
    return { kind: "applied", config, changes, atRestart };
  }

  async #refuse(text: string, reason: string): Promise<Reload> {
    if (this.#refused?.text === text) return { kind: "unchanged" };
    this.#refused = { text, sha256: sha256Hex(text), reason, at: isoSeconds(now()) };
    return { kind: "refused", reason };
  }
}

/**
 * What differs between two configs, one line per key (`daemon.max_concurrent_sessions: 2 -> 3`,
 * `repos."demo/gadgets": added`), and which of those keys wait for a restart.
 */
export function configChanges(before: Config, after: Config): { changes: string[]; atRestart: string[] } {
  const changes: string[] = [];
  const atRestart: string[] = [];
  const walk = (a: unknown, b: unknown, path: string[]) => {
    if (isTable(a) && isTable(b)) {
      for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) walk(a[key], b[key], [...path, key]);
      return;
    }
    if (JSON.stringify(a) === JSON.stringify(b)) return;
    const name = keyName(path);
    if (a === undefined) changes.push(`${name}: added`);
    else if (b === undefined) changes.push(`${name}: removed`);
    else changes.push(`${name}: ${JSON.stringify(a)} -> ${JSON.stringify(b)}`);
    if (AT_RESTART.includes(path.join("."))) atRestart.push(name);
  };
  walk(before, after, []);
  return { changes, atRestart };
}

function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A key as TOML writes it: `daemon.tick_seconds`, `repos."demo/widgets".max_sessions`. */
function keyName(path: string[]): string {
  return path.map((part) => (/^[A-Za-z0-9_-]+$/.test(part) ? part : JSON.stringify(part))).join(".");
}

/** What the loop gives `applyReload`: the pass's store and report, and the config it runs. */
export interface ReloadDeps {
  store: Store;
  report: Report;
  config: Config;
}

/**
 * Looks at the file and acts on what it finds: reports and audits an applied config (and
 * returns it), or reports, audits and raises the anomaly for a refused one (and returns the
 * config in use). Never throws for what the file holds.
 */
export async function applyReload(deps: ReloadDeps, watch: ConfigWatch): Promise<Config> {
  const reload = await watch.check(deps.config);
  const { store, report } = deps;
  if (reload.kind === "unchanged") return deps.config;
  if (reload.kind === "restored") {
    retractRefusal(store, watch.path);
    report({ event: "config", line: `config ${watch.path} holds the applied config again; nothing changed`, path: watch.path });
    return deps.config;
  }
  if (reload.kind === "refused") {
    const detail = `config not applied, the daemon runs the last good one: ${reload.reason}`;
    const open = listAnomalies(store, { unresolved: true, kind: "config_refused" }).find((a) => a.action_id === watch.path);
    if (open && open.detail !== detail) retractAnomaly(store, open.id);
    raiseAnomaly(store, { kind: "config_refused", actionId: watch.path, detail });
    appendAudit(store, { kind: "config.refused", body: { path: watch.path, reason: reload.reason } });
    report({ event: "config", line: detail, path: watch.path, applied: false, reason: reload.reason });
    return deps.config;
  }
  retractRefusal(store, watch.path);
  const { changes, atRestart } = reload;
  appendAudit(store, { kind: "config.applied", body: { path: watch.path, sha256: watch.inUse().sha256, changes, at_restart: atRestart } });
  const said = changes.length ? changes.join("; ") : "nothing that changes what it does";
  const later = atRestart.length ? `; at the next restart only: ${atRestart.join(", ")}` : "";
  report({ event: "config", line: `config applied from ${watch.path}: ${said}${later}`, path: watch.path, applied: true, changes, at_restart: atRestart });
  return reload.config;
}

function retractRefusal(store: Store, path: string): void {
  for (const anomaly of listAnomalies(store, { unresolved: true, kind: "config_refused" })) {
    if (anomaly.action_id === path) retractAnomaly(store, anomaly.id);
  }
}
