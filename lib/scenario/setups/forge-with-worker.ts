/**
 * Setup `forge-with-worker`: `forge-with-clone` with a headless worker in the config
 * (`[worker] launcher = "process"`, the worker `sh -c 'echo working; sleep 30'`, one session per repository), so a
 * scenario can dispatch for real. Every worker session still running when the scenario
 * ends is stopped (by its recorded pid and start time) before the forge goes.
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { listRecords } from "../../sessions/records.ts";
import { sessionState } from "../../sessions/state.ts";
import { stopSession } from "../../sessions/stop.ts";
import { setup as forgeWithClone } from "./forge-with-clone.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** The worker a scenario dispatches: its program and arguments, and how it is launched (default `process`). */
export interface WorkerCommand {
  binary: string;
  args: string[];
  /** Lines added to the `[worker]` table, e.g. `launcher = "tmux"`. */
  launcher?: string[];
  /** `worker.max_sessions` (default 1: one session per repository). */
  maxSessions?: number;
}

/** Thirty seconds of "working": long enough for any scenario, stopped at its end. */
export const SLEEPING_WORKER: WorkerCommand = { binary: "sh", args: ["-c", "echo working; sleep 30"] };

/** The forge, the clone, and a config whose worker runs headless for 30 seconds. */
export function setup(ctx: SetupContext): Promise<SetupResult> {
  return withWorker(ctx, SLEEPING_WORKER);
}

/** `forge-with-clone` whose config runs `worker` headless, one session per repository; running workers are stopped at the end. */
export async function withWorker(ctx: SetupContext, worker: WorkerCommand, forge: { defaultBranch?: string } = {}): Promise<SetupResult> {
  const base = await forgeWithClone(ctx, forge);
  appendFileSync(base.vars!.CONFIG, [
    "[worker]",
    ...(worker.launcher ?? ['launcher = "process"']),
    `binary = ${JSON.stringify(worker.binary)}`,
    `args = ${JSON.stringify(worker.args)}`,
    `max_sessions = ${worker.maxSessions ?? 1}`,
    "",
  ].join("\n"));
  const root = sessionRootOf(ctx);
  return {
    ...base,
    cleanup: async () => {
      for (const record of listRecords(root)) {
        if (sessionState(root, record) === "running") await stopSession(root, record, { graceMs: 2_000 }).catch(() => {});
      }
      await base.cleanup?.();
    },
  };
}

/** Where the scenario's steps keep their session records. */
export function sessionRootOf(ctx: SetupContext): string {
  return ctx.env.RA_SESSION_ROOT ?? join(ctx.env.RA_STATE_DIR, "sessions");
}

/** Runs setup steps on a made setup, stopping what it started when one fails. */
export async function thenRun(made: SetupResult, steps: () => Promise<void>): Promise<SetupResult> {
  try {
    await steps();
    return made;
  } catch (error) {
    await made.cleanup?.();
    throw error;
  }
}
