/**
 * Whether a daemon runs for a state dir and what its last tick said, for `status`: the
 * lock names the daemon (judged by pid and start time, never by name), the heartbeat says
 * when it last ticked, and the newest `reconcile.pass` record whether dispatch was withheld.
 */
import { liveness } from "../processes.ts";
import { queryAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { readHeartbeat } from "./heartbeat.ts";
import { lockPath, readLock } from "./lock.ts";

/** What `status` says of the daemon. */
export interface DaemonStatus {
  /** running: the lock's daemon runs; stopped: no lock, or its daemon is proven gone; unknown: the lock cannot be checked; never: no daemon ever ticked here. */
  state: "running" | "stopped" | "unknown" | "never";
  pid: number | null;
  tick: number | null;
  last_tick_at: string | null;
  next_tick_at: string | null;
  /** Why the last tick started nothing, when it withheld dispatch. */
  withheld: string | null;
}

/** Reads the lock, the heartbeat and the last pass; changes nothing. */
export function daemonStatus(stateDir: string, store: Store | undefined): DaemonStatus {
  const lock = readLock(lockPath(stateDir));
  const beat = readHeartbeat(stateDir);
  const [pass] = store ? queryAudit(store, { kind: "reconcile.pass", limit: 1 }) : [];
  const withheld = (pass?.body.dispatch as { withheld?: string | null } | undefined)?.withheld ?? null;
  let state: DaemonStatus["state"];
  if (lock === "gone") state = beat ? "stopped" : "never";
  else if (lock === "unreadable") state = "unknown";
  else state = ({ running: "running", exited: "stopped", unknown: "unknown" } as const)[liveness(lock)];
  return {
    state,
    pid: typeof lock === "object" ? lock.pid : beat?.pid ?? null,
    tick: beat?.tick ?? null,
    last_tick_at: beat?.at ?? null,
    next_tick_at: state === "running" ? beat?.next_at ?? null : null,
    withheld,
  };
}

/** The status lines: the daemon, then what held dispatch back at its last tick. */
export function daemonLines(status: DaemonStatus): string[] {
  const last = status.last_tick_at ? `, last tick ${status.tick} at ${status.last_tick_at}` : "";
  const lines = [
    {
      running: `daemon: running (pid ${status.pid})${last}${status.next_tick_at ? `, next at ${status.next_tick_at}` : ""}`,
      stopped: `daemon: not running${status.pid !== null ? ` (last was pid ${status.pid}${last})` : ""}`,
      unknown: `daemon: cannot be checked (the lock names pid ${status.pid ?? "?"})${last}`,
      never: "daemon: never run with this state dir",
    }[status.state],
  ];
  if (status.withheld) lines.push(`dispatch: withheld at the last tick: ${status.withheld}`);
  return lines;
}
