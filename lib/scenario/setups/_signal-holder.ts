/**
 * For setups that stop a managed session from outside: start it detached through the real
 * command, then signal its holder, proven by its recorded pid plus start time (never pid 0
 * or 1), and wait until that holder has ended.
 */
import { join } from "node:path";
import { liveness } from "../../processes.ts";
import type { ProcessIdentity } from "../../processes.ts";
import { holderIdentity, readRecord } from "../../sessions/records.ts";
import type { SetupContext } from "../setup.ts";
import { mustRun } from "./episode-repo.ts";

/** A session to start: its name, its command, and any `--tag k=v` words. */
export interface HeldCommand {
  name: string;
  argv: readonly string[];
  tags?: readonly string[];
}

/** Starts the session with `session run -d`, sends its holder `signal`, waits for the holder to end; returns the session id. */
export async function startThenSignalHolder(ctx: SetupContext, cwd: string, session: HeldCommand, signal: NodeJS.Signals): Promise<string> {
  const started = await mustRun(ctx, ["session", "run", "-d", "--name", session.name, ...(session.tags ?? []), "--", ...session.argv], { cwd });
  const id = /\b([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b/.exec(started)?.[1];
  if (!id) throw new Error(`session run -d printed no session id: ${JSON.stringify(started)}`);
  const root = join(ctx.env.RA_STATE_DIR, "sessions");
  const recordPath = join(root, `${id}.json`);
  const record = readRecord(root, id);
  // By pid and start id (boot id and start ticks): a start time rebuilt from /proc/stat's boot time can move by a second.
  const holder = record ? { ...holderIdentity(record), pid: record.holderPid ?? 0 } : { pid: 0, started_at: null };
  if (!Number.isInteger(holder.pid) || holder.pid <= 1 || liveness(holder) !== "running") {
    throw new Error(`The holder recorded in ${recordPath} (pid ${holder.pid}) is not running`);
  }
  process.kill(holder.pid, signal);
  await holderGone(holder, signal);
  return id;
}

/** Waits until the holder has ended (a zombie counts: it records nothing more). */
async function holderGone(holder: ProcessIdentity, signal: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (liveness(holder) === "running") {
    if (Date.now() > deadline) throw new Error(`The holder pid ${holder.pid} still runs ${timeoutMs / 1000}s after ${signal}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
