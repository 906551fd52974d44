/**
 * The daemon's loop: a tick every `daemon.tick_seconds` until SIGTERM or SIGINT. A signal
 * never cuts a step short: it is noted, the running step finishes, the tick ends there
 * and the loop returns, so the caller releases the lock and exits 0. Worker sessions are
 * not the daemon's children (their holders are detached), so they go on running.
 *
 * Each tick ends with its summary line (`tick N: dispatched N, failed N, waiting N; ...`).
 * `--once` always prints it; a long-running daemon prints it only when the tick dispatched,
 * saw a dispatch fail or a step fail, or its counts differ from the last one printed, so an
 * idle daemon stays quiet.
 */
import type { Config } from "../config.ts";
import type { Report } from "../events.ts";
import { applyReload } from "./config-reload.ts";
import type { ConfigWatch } from "./config-reload.ts";
import { initialState, runTick, tickSummary } from "./tick.ts";
import type { DaemonState, TickDeps } from "./tick.ts";
import { markStopped } from "./heartbeat.ts";
import { isoSeconds, now } from "../clock.ts";

/** A stop asked for by a signal (or a test), and a sleep it cuts short. */
export interface StopSwitch {
  /** Ends the sleep now without asking for a stop: the next pass starts at once (SIGHUP). */
  wake(): void;
  /** The signal that asked for the stop, or null. */
  readonly reason: string | null;
  /** Asks for the stop. */
  stop(reason: string): void;
  /** Sleeps `ms`, or less when a stop is asked for meanwhile. */
  sleep(ms: number): Promise<void>;
  /** Removes the signal handlers. */
  dispose(): void;
}

/**
 * A stop switch; with `signals`, SIGTERM and SIGINT throw it; a `wakeSignals` signal (SIGHUP)
 * starts the next pass at once: it ends the sleep, or, arriving while a pass runs, the sleep
 * after it, so a signal sent mid-pass is never lost.
 */
export function stopSwitch(signals: readonly NodeJS.Signals[] = [], wakeSignals: readonly NodeJS.Signals[] = []): StopSwitch {
  let reason: string | null = null;
  let wake: (() => void) | null = null;
  let woken = false;
  const stop = (why: string) => {
    reason ??= why;
    wake?.();
  };
  const nudge = () => {
    if (wake) wake();
    else woken = true;
  };
  const handlers = [
    ...signals.map((signal) => [signal, () => stop(signal)] as const),
    ...wakeSignals.map((signal) => [signal, nudge] as const),
  ];
  for (const [signal, handler] of handlers) process.on(signal, handler);
  return {
    get reason() {
      return reason;
    },
    stop,
    wake: nudge,
    sleep: (ms) => new Promise<void>((resolve) => {
      if (reason !== null || woken) {
        woken = false;
        return resolve();
      }
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = null;
        resolve();
      }
      wake = done;
    }),
    dispose: () => {
      for (const [signal, handler] of handlers) process.off(signal, handler);
    },
  };
}

/** How the loop runs. */
export interface LoopOptions {
  once: boolean;
  tickSeconds: number;
  stop: StopSwitch;
  /** Carried over from a previous run (the heartbeat's last poll), else fresh. */
  state?: DaemonState;
  /** The config file, read again before each pass and applied when it changed and is valid (lib/daemon/config-reload.ts). */
  watch?: ConfigWatch;
  /** What the daemon wired from the config at its start and can wire again from a new one: the launcher. */
  rewire?: (config: Config) => Partial<Omit<TickDeps, "stopRequested">>;
}

/**
 * Ticks until stopped (or once); returns 1 when `--once` had a failed step, else 0. A
 * dispatch that failed is not a failed step: it is counted in the summary's `failed`.
 */
export async function runLoop(deps: Omit<TickDeps, "stopRequested">, options: LoopOptions): Promise<number> {
  const state = options.state ?? initialState();
  let tickMs = options.tickSeconds * 1000;
  const report: Report = deps.report;
  let current = deps;
  let lastSaid: string | null = null;
  for (;;) {
    if (options.watch) {
      const config = await applyReload(current, options.watch);
      if (config !== current.config) {
        if (config.daemon.tick_seconds !== current.config.daemon.tick_seconds) tickMs = config.daemon.tick_seconds * 1000;
        current = { ...current, config, ...options.rewire?.(config) };
      }
      current = { ...current, configInUse: options.watch.inUse() };
    }
    const result = await runTick({ ...current, stopRequested: () => options.stop.reason !== null }, state, (at) => options.once ? null : new Date(at.getTime() + tickMs));
    const summary = tickSummary(result);
    // What the line says, but for the tick's number: a repeat of the last one printed is left out.
    const said = summary.line.replace(/^tick \d+/, "");
    const eventful = result.dispatch.active + result.dispatch.would_dispatch + result.dispatch.failed + result.failed.length > 0;
    if (options.once || eventful || said !== lastSaid) {
      report(summary);
      lastSaid = said;
    }
    if (options.once) return result.failed.length > 0 ? 1 : 0;
    if (options.stop.reason === null) await options.stop.sleep(tickMs);
    if (options.stop.reason !== null) {
      report({ event: "stopped", line: `stopping: ${options.stop.reason} received; worker sessions keep running`, signal: options.stop.reason });
      // Said in the heartbeat, so health reads a daemon stopped on purpose as stopped, not as one that died.
      markStopped(current.stateDir, options.stop.reason, isoSeconds(now()));
      return 0;
    }
  }
}
