/**
 * `run --once --dry-run`: one pass that says what it would do and changes nothing, whatever
 * the effect level. The pass runs on a copy of the state (the store copied whole as one
 * snapshot, the exit spool and the last heartbeat) in a temporary folder, removed after;
 * the copy answers to the real store's path, so the workers and tabs tagged with it are
 * known as its own. The session root and the worktrees are the real ones, only read: with
 * its effects wired for a dry run (lib/effects.ts) no GitHub write, worktree, session,
 * terminal or notification is made, each is only said (`would ...`). GitHub is read as a
 * pass reads it (conditional requests, so usually one request per repository).
 */
import { chmodSync, copyFileSync, cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Config } from "../config.ts";
import { stateDirPath } from "../state-dir.ts";
import { sessionRoot } from "../sessions/records.ts";
import { spoolDir } from "../sessions/spool.ts";
import { copyStore, storePath } from "../store/open.ts";
import { worktreeRoot } from "../work-items/worktree-root.ts";
import { heartbeatPath } from "./heartbeat.ts";

/** The copy a dry run works on, and how to remove it. */
export interface DryRunState {
  /** The real state dir, as the owner knows it. */
  real: string;
  /** The copy's folder: the state dir of the pass. */
  dir: string;
  /** The environment of the pass: the copy's state dir, the real session root. */
  env: Record<string, string | undefined>;
  /** The config with the worktree root the real state dir gives (a default one would follow the copy). */
  config: Config;
  /** The real store's database file, which the copy answers to. */
  standsFor: string;
  remove(): void;
}

/** Copies the state a pass reads into a new private folder. */
export async function dryRunState(env: Record<string, string | undefined>, config: Config): Promise<DryRunState> {
  const real = stateDirPath(env);
  const dir = mkdtempSync(join(tmpdir(), "robot-army-dry-run-"));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    chmodSync(dir, 0o700);
    await copyStore(real, storePath(dir));
    if (existsSync(heartbeatPath(real))) copyFileSync(heartbeatPath(real), heartbeatPath(dir));
    const spool = spoolDir(env);
    if (existsSync(spool)) cpSync(spool, join(dir, "spool"), { recursive: true });
  } catch (error) {
    remove();
    throw error;
  }
  return {
    real, dir,
    env: { ...env, RA_STATE_DIR: dir, RA_SESSION_ROOT: sessionRoot(env) },
    config: { ...config, worktrees: { ...config.worktrees, root: worktreeRoot(config, real) } },
    standsFor: storePath(real),
    remove,
  };
}
