/**
 * Setup `forge-with-unreadable-session`: `forge-with-worker`, and in the session root a
 * session record that cannot be read (its file was cut short, as by a full disk). Whether
 * that session is a live worker is unknown, so the machine's session count is too.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sessionRootOf, setup as forgeWithWorker } from "./forge-with-worker.ts";
import type { SetupContext, SetupResult } from "../setup.ts";

/** The record's file name: a session id, as the session manager names them. */
export const DAMAGED = "5e551011-0000-4000-8000-000000000001.json";

/** The forge, the clone, the worker config, and one damaged session record. */
export async function setup(ctx: SetupContext): Promise<SetupResult> {
  const made = await forgeWithWorker(ctx);
  const root = sessionRootOf(ctx);
  mkdirSync(root, { recursive: true, mode: 0o700 });
  writeFileSync(join(root, DAMAGED), '{"id":"5e551011-0000-4000-8000-000000000001","name":"other-agent","tags":{"ra_it', { mode: 0o600 });
  return { ...made, vars: { ...made.vars, DAMAGED: join(root, DAMAGED) } };
}
