/**
 * Setup `vanished-session`: an empty folder (`<dir>/work`) and one detached managed
 * session, `lost1`, whose holder has been SIGKILLed, so no exit was ever recorded. Its
 * command (`sleep 4`) lives on a few seconds after its holder and then ends by itself, so a
 * later gc can prove it gone.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { liveness } from "../../processes.ts";
import type { SetupContext, SetupResult } from "./index.ts";
import { setup as emptyDir } from "./empty-dir.ts";
import { mustRun } from "./episode-repo.ts";

/** The session's name; `${SESSION}` names it in the steps. */
const NAME = "lost1";

/** Starts the session through the real command, then SIGKILLs its holder by its recorded pid. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await emptyDir(ctx);
  const started = await mustRun(ctx, ["session", "run", "-d", "--name", NAME, "--", "sleep", "4"], { cwd: made.cwd });
  const id = /\b([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b/.exec(started)?.[1];
  if (!id) throw new Error(`session run -d printed no session id: ${JSON.stringify(started)}`);
  const recordPath = join(ctx.env.RA_STATE_DIR, "sessions", `${id}.json`);
  const record = JSON.parse(readFileSync(recordPath, "utf8")) as { holderPid: number | null; holderStartedAt: string | null };
  const holder = { pid: record.holderPid ?? 0, started_at: record.holderStartedAt };
  // Only the recorded holder, proven by pid plus start time, is signalled (never pid 0 or 1).
  if (!Number.isInteger(holder.pid) || holder.pid <= 1 || liveness(holder) !== "running") {
    throw new Error(`The holder recorded in ${recordPath} (pid ${holder.pid}) is not running`);
  }
  process.kill(holder.pid, "SIGKILL");
  await holderGone(holder);
  return { cwd: made.cwd, vars: { ...made.vars, SESSION: NAME } };
}

/** Waits until the killed holder is proven gone (a zombie counts: it records nothing more). */
async function holderGone(holder: { pid: number; started_at: string | null }, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (liveness(holder) === "running") {
    if (Date.now() > deadline) throw new Error(`The holder pid ${holder.pid} still runs ${timeoutMs / 1000}s after SIGKILL`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
