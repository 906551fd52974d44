/**
 * Starting a managed session: a record is created under a unique name, then a holder runs
 * it, either this very process (foreground) or a detached one that outlives the command.
 */
import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { isoSeconds, now } from "../clock.ts";
import { PreconditionError, RobotArmyError, UsageError } from "../errors.ts";
import { ownScript, runtimeArgv } from "../runtime.ts";
import { withLock } from "./lock.ts";
import { appendSessionEvent, listRecords, readRecord, sessionFiles, writeRecord } from "./records.ts";
import type { SessionRecord } from "./records.ts";

/** What `session run` was asked to start. */
export interface SessionSpec {
  /** The session's id, when the caller chose it before the start (a UUID no session on record has); default: a new one. */
  id?: string;
  command: string;
  args: string[];
  name?: string;
  cwd?: string;
  env?: Record<string, string>;
  tags?: Record<string, string>;
  permanent?: boolean;
  ephemeral?: boolean;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Creates the record of a new session; names are unique among sessions on record. */
export async function createSession(root: string, spec: SessionSpec): Promise<SessionRecord> {
  if (spec.permanent && spec.ephemeral) throw new UsageError("--permanent and --ephemeral cannot be used together");
  const cwd = resolve(spec.cwd ?? process.cwd());
  if (!existsSync(cwd) || !statSync(cwd).isDirectory()) throw new PreconditionError(`Working directory "${cwd}" does not exist`);
  if (spec.name !== undefined && !NAME.test(spec.name)) {
    throw new UsageError(`Session name "${spec.name}" must be letters, digits, ".", "_" or "-" (at most 64), starting with a letter or digit`);
  }
  if (spec.id !== undefined && !UUID.test(spec.id)) {
    throw new UsageError(`Session id "${spec.id}" must be a UUID in lower case, such as 3f2a9c4e-1b7d-4e2a-9c1f-0a2b3c4d5e6f`);
  }
  // An id chosen before the start lets the worker carry it (Claude Code's --session-id), so the id on record is the agent's own.
  const id = spec.id ?? globalThis.crypto.randomUUID();
  return await withLock(join(root, ".names.lock"), () => {
    const records = listRecords(root);
    if (spec.id !== undefined && (records.some((r) => r.id === id) || existsSync(sessionFiles(root, id).record))) {
      throw new PreconditionError(`A session with id "${id}" is already on record; an id names one session only`);
    }
    const taken = new Set(records.map((r) => r.name));
    const name = spec.name ?? `${basename(spec.command).replace(/[^A-Za-z0-9._-]/g, "") || "session"}-${id.slice(0, 6)}`;
    if (taken.has(name)) throw new PreconditionError(`A session named "${name}" is already on record; pick another --name or remove it with "robot-army session rm ${name}"`);
    const record: SessionRecord = {
      schema: 1, id, name, command: spec.command, args: spec.args, cwd,
      env: spec.env ?? {}, tags: spec.tags ?? {},
      permanent: spec.permanent ?? false, ephemeral: spec.ephemeral ?? false, generation: 1,
      startedAt: isoSeconds(now()),
      holderPid: null, holderStartedAt: null, childPid: null, childStartedAt: null, childPgid: null,
      killRequestedAt: null, exitedAt: null, exitCode: null, exitSignal: null, ended: null, startError: null,
      lastLines: [], log: sessionFiles(root, id).log,
    };
    writeRecord(root, record);
    return record;
  });
}

/** The holder script a detached session runs in. */
const HOLDER_SCRIPT = ownScript("scripts", "dev", "session-holder");

/**
 * Starts a detached holder for a session and waits until its child is confirmed started
 * (or failed to start); the holder lives on after this process exits.
 */
export async function startDetached(root: string, id: string, timeoutMs = 15_000): Promise<{ name: string; id: string; pid: number }> {
  const argv = runtimeArgv(HOLDER_SCRIPT);
  const holder = spawn(argv[0], [...argv.slice(1), root, id], { detached: true, stdio: ["ignore", "pipe", "ignore"], env: process.env });
  const name = readRecord(root, id)?.name ?? id;
  const answer = await new Promise<{ pid?: number; error?: string } | undefined>((resolve) => {
    let buffered = "";
    const timer = setTimeout(() => resolve(undefined), timeoutMs);
    holder.stdout!.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      const newline = buffered.indexOf("\n");
      if (newline === -1) return;
      clearTimeout(timer);
      try {
        resolve(JSON.parse(buffered.slice(0, newline)));
      } catch {
        resolve({ error: `the holder answered ${JSON.stringify(buffered.slice(0, newline))}` });
      }
    });
    holder.once("exit", () => {
      clearTimeout(timer);
      resolve(undefined);
    });
  });
  // The holder lives on by itself; this process stops listening to it.
  holder.stdout!.destroy();
  holder.unref();
  if (answer?.pid) return { name, id, pid: answer.pid };
  if (answer?.error) throw new PreconditionError(`Session "${name}" could not start: ${answer.error}`);
  const record = readRecord(root, id);
  if (record?.startError) throw new PreconditionError(`Session "${name}" could not start: ${record.startError}`);
  throw new RobotArmyError(`Session "${name}" did not confirm its start within ${timeoutMs / 1000}s`);
}

/** Prepares a retained session to run again under a new generation (gc's respawn). */
export function respawnRecord(record: SessionRecord): SessionRecord {
  return {
    ...record,
    generation: record.generation + 1,
    startedAt: isoSeconds(now()),
    holderPid: null, holderStartedAt: null, childPid: null, childStartedAt: null, childPgid: null,
    killRequestedAt: null, exitedAt: null, exitCode: null, exitSignal: null, ended: null, startError: null, lastLines: [],
  };
}

/** Logs a respawn in the session's events. */
export function noteRespawn(root: string, record: SessionRecord): void {
  appendSessionEvent(root, record.id, "respawn", { generation: record.generation });
}
