/**
 * Setup `stopped-sessions`: an empty folder (`<dir>/work`) and two detached managed
 * sessions stopped from outside by a signal to their holders, as a service manager or
 * someone at a shell would: `victim` (`sh -c 'echo working; sleep 30'`) sent SIGTERM, and
 * `worker42`, a worker for item 42 (tag `ra_item=42`, `sleep 30`), sent SIGINT. Each
 * holder passes the signal on to its command, records the exit and ends.
 * `${VICTIM_EVENTS}` is victim's event log; `${WORKER_EXIT}` is where worker42's exit record is spooled.
 */
import { join } from "node:path";
import type { SetupContext, SetupResult } from "../setup.ts";
import { setup as emptyDir } from "./empty-dir.ts";
import { startThenSignalHolder } from "./_signal-holder.ts";

/** The sessions and the signal each holder is sent. */
const STOPS = [
  { name: "victim", signal: "SIGTERM", argv: ["sh", "-c", "echo working; sleep 30"], tags: [] as string[] },
  { name: "worker42", signal: "SIGINT", argv: ["sleep", "30"], tags: ["--tag", "ra_item=42"] },
] as const;

/** Starts each session through the real command, then signals its holder (by its recorded pid and start time). */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await emptyDir(ctx);
  const ids: string[] = [];
  for (const stop of STOPS) ids.push(await startThenSignalHolder(ctx, made.cwd, stop, stop.signal));
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
