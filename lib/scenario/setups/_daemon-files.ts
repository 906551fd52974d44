/**
 * For the health setups: a daemon's lock and heartbeat written by hand into the scenario's
 * state dir, at times counted back from the scenario's clock (`RA_NOW`), held by a real
 * process that runs until the scenario ends (stopped by its pid and start time) or by one
 * that has already exited.
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { isoSeconds, now } from "../../clock.ts";
import { writeHeartbeat } from "../../daemon/heartbeat.ts";
import { lockPath } from "../../daemon/lock.ts";
import { identify, liveness } from "../../processes.ts";
import type { ProcessIdentity } from "../../processes.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** A process standing in for a daemon: it only waits. `stop` ends it, proven by pid and start time. */
export interface StandIn {
  who: ProcessIdentity;
  stop(): Promise<void>;
}

/** Starts a process that runs (sleeping) until stopped, as a daemon that holds the lock would. */
export function startStandIn(): StandIn {
  const child = spawn("sleep", ["300"], { stdio: "ignore" });
  const who = identify(child.pid!);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  if (liveness(who) !== "running") throw new Error(`The stand-in daemon (pid ${who.pid}) is not running`);
  return {
    who,
    stop: async () => {
      if (liveness(who) === "running") child.kill("SIGKILL");
      await exited;
    },
  };
}

/** The identity of a process that ran and has exited (and been reaped): a daemon that died. */
export async function exitedStandIn(): Promise<ProcessIdentity> {
  const standIn = startStandIn();
  await standIn.stop();
  if (liveness(standIn.who) !== "exited") throw new Error(`The stand-in daemon (pid ${standIn.who.pid}) has not exited`);
  return standIn.who;
}

/** A time `ms` before the scenario's clock. */
export function beforeNow(ctx: SetupContext, ms: number): string {
  return isoSeconds(new Date(now(ctx.env).getTime() - ms));
}

/** Writes `<state dir>/daemon.lock` as the daemon would, naming `who` and when it took the lock. */
export function writeLockOf(ctx: SetupContext, who: ProcessIdentity, at: string): void {
  mkdirSync(ctx.env.RA_STATE_DIR, { recursive: true, mode: 0o700 });
  writeFileSync(lockPath(ctx.env.RA_STATE_DIR), JSON.stringify({ ...who, at }) + "\n", { mode: 0o600 });
}

/** Writes `<state dir>/heartbeat.json` as the daemon's tick `tick` would have at `at`. */
export function writeBeatOf(ctx: SetupContext, pid: number, at: string, tick = 12, stopped?: { at: string; reason: string }): void {
  writeHeartbeat(ctx.env.RA_STATE_DIR, { pid, at, tick, next_at: null, last_poll_at: null, ...(stopped ? { stopped } : {}) });
}

/** Where the steps run: an empty folder, as `empty-dir` gives. */
export function inWorkDir(ctx: SetupContext, cleanup?: () => Promise<void>): SetupResult {
  const work = `${ctx.dir}/work`;
  mkdirSync(work, { recursive: true });
  return { cwd: work, vars: { WORK: work }, cleanup };
}
