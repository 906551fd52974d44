/**
 * Setup `stopped-sessions`: an empty folder (`<dir>/work`) and two detached managed
 * sessions stopped from outside by a signal to their holders, as a service manager or
 * someone at a shell would: `victim` (`sh -c 'echo working; sleep 30'`) sent SIGTERM, and
 * `worker42`, a worker for item 42 (tag `ra_item=42`, `sleep 30`), sent SIGINT. Each
 * holder passes the signal on to its command, records the exit and ends.
 * `${VICTIM_EVENTS}` is victim's event log; `${WORKER_EXIT}` is where worker42's exit record is spooled.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { liveness } from "../../processes.ts";
import type { SetupContext, SetupResult } from "./index.ts";
import { setup as emptyDir } from "./empty-dir.ts";
import { mustRun } from "./episode-repo.ts";

/** The sessions and the signal each holder is sent. */
const STOPS = [
  { name: "victim", signal: "SIGTERM", argv: ["sh", "-c", "echo working; sleep 30"], tags: [] as string[] },
  { name: "worker42", signal: "SIGINT", argv: ["sleep", "30"], tags: ["--tag", "ra_item=42"] },
] as const;

/** Starts each session through the real command, then signals its holder by its recorded pid and start time. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await emptyDir(ctx);
  const ids: string[] = [];
  for (const stop of STOPS) {
    const started = await mustRun(ctx, ["session", "run", "-d", "--name", stop.name, ...stop.tags, "--", ...stop.argv], { cwd: made.cwd });
    const id = /\b([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b/.exec(started)?.[1];
    if (!id) throw new Error(`session run -d printed no session id: ${JSON.stringify(started)}`);
    const recordPath = join(ctx.env.RA_STATE_DIR, "sessions", `${id}.json`);
    const record = JSON.parse(readFileSync(recordPath, "utf8")) as { holderPid: number | null; holderStartedAt: string | null };
    const holder = { pid: record.holderPid ?? 0, started_at: record.holderStartedAt };
    // Only the recorded holder, proven by pid plus start time, is signalled (never pid 0 or 1).
    if (!Number.isInteger(holder.pid) || holder.pid <= 1 || liveness(holder) !== "running") {
      throw new Error(`The holder recorded in ${recordPath} (pid ${holder.pid}) is not running`);
    }
    process.kill(holder.pid, stop.signal);
    await holderGone(holder);
    ids.push(id);
  }
  const [victim, worker] = ids;
  return {
    ...made,
    vars: {
      ...made.vars,
      VICTIM_EVENTS: join(ctx.env.RA_STATE_DIR, "sessions", `${victim}.events.jsonl`),
      WORKER_EXIT: join(ctx.env.RA_STATE_DIR, "spool", `${worker}.1.json`),
    },
  };
}

/** Waits until the holder has recorded the exit and ended. */
async function holderGone(holder: { pid: number; started_at: string | null }, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (liveness(holder) === "running") {
    if (Date.now() > deadline) throw new Error(`The holder pid ${holder.pid} still runs ${timeoutMs / 1000}s after it was told to stop`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
