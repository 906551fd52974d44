/**
 * The daemon's heartbeat, `<state dir>/heartbeat.json`, rewritten atomically at the end of
 * each tick: which daemon, when it last ticked, which tick, when the next is due, and when
 * it last polled (so a restarted daemon polls when due, not at once).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../atomic.ts";
import type { ConfigInUse } from "./config-reload.ts";

/** What the heartbeat holds. */
export interface Heartbeat {
  pid: number;
  at: string;
  tick: number;
  next_at: string | null;
  last_poll_at: string | null;
  /** The config file the daemon runs: the SHA-256 of the text applied, and a newer text it refused (lib/daemon/config-reload.ts). */
  config?: ConfigInUse;
  /** Written as the daemon stops on a signal (SIGTERM, SIGINT): it was stopped, it did not die (`health` says `STOPPED`). */
  stopped?: { at: string; reason: string };
}

/** Marks this daemon's last heartbeat as stopped, and why (a signal, the rehearsal's end): only its own (the pid it wrote), never another daemon's. */
export function markStopped(stateDir: string, reason: string, at: string): void {
  const beat = readHeartbeat(stateDir);
  if (!beat || beat.pid !== process.pid) return;
  writeHeartbeat(stateDir, { ...beat, next_at: null, stopped: { at, reason } });
}

/** The heartbeat file of a state dir. */
export function heartbeatPath(stateDir: string): string {
  return join(stateDir, "heartbeat.json");
}

/** Writes the heartbeat atomically, readable by its owner only. */
export function writeHeartbeat(stateDir: string, beat: Heartbeat): void {
  writeFileAtomic(heartbeatPath(stateDir), JSON.stringify(beat, null, 2) + "\n", { private: true });
}

/** The last heartbeat, or undefined when there is none or it cannot be read. */
export function readHeartbeat(stateDir: string): Heartbeat | undefined {
  const beat = readHeartbeatFile(stateDir);
  return typeof beat === "object" ? beat : undefined;
}

/**
 * The last heartbeat, telling "missing" (no file: no daemon ever ticked here) from
 * "unreadable" (a file that cannot be read, is not JSON, or holds no pid and time), which
 * a check from outside must never take for either a live or a dead daemon.
 */
export function readHeartbeatFile(stateDir: string): Heartbeat | "missing" | "unreadable" {
  let text: string;
  try {
    text = readFileSync(heartbeatPath(stateDir), "utf8");
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "missing" : "unreadable";
  }
  try {
    const beat = JSON.parse(text) as Heartbeat;
    if (!beat || typeof beat !== "object" || !Number.isInteger(beat.pid) || typeof beat.at !== "string") return "unreadable";
    return beat;
  } catch {
    return "unreadable";
  }
}
