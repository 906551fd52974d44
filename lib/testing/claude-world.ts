/**
 * The world the real-CLI tests stand on: the real Claude Code CLI (the pinned devDependency)
 * as robot-army's worker in tmux, its model requests answered by the scripted stand-in for the
 * Anthropic API on loopback (anthropic-api.ts), over a forge, a clone and an onboarded
 * repository (daemon.ts). A test drives the daemon's tick itself and reads what a user would:
 * the item, the worker's registry, the worker's pane. Test support only.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { answersTool, claudeCodeBinary, claudeCodeHome, lastPrompt, serveAnthropicApi, toolResults } from "./anthropic-api.ts";
import type { AnthropicApi, ModelScript } from "./anthropic-api.ts";
import { withDaemon } from "./daemon.ts";
import type { DaemonTest } from "./daemon.ts";
import type { ForgeTemplate } from "./forge.ts";
import { waitFor } from "./wait.ts";
import { makeTempDir, removeTempDir } from "./fixtures.ts";
import { openSessions } from "../work-items/sessions.ts";
import type { StoredSession } from "../work-items/sessions.ts";
import { readRegistry } from "../work-items/idleness.ts";
import { runCommand } from "../run-command.ts";
import { recordClaudeTrust } from "../dispatch/agent-trust.ts";
import { pause } from "../dispatch/controls.ts";
import { relaunchItem } from "../dispatch/verbs/relaunch.ts";
import { initialState, runTick } from "../daemon/tick.ts";
import { readRecord } from "../sessions/records.ts";
import { getItem } from "../work-items/queries.ts";

/** What the worker is told first: where its task is. */
export const TASK_POINTER = /Your task is in the file (\S+?):/;

/**
 * The model of a worker that does as told: it reads the file its first message names, then
 * says it has read it and waits at its prompt. What comes after is the test's `then`.
 */
export function obedientWorker(then: ModelScript = () => ({ text: "Nothing more to do." })): ModelScript {
  return (request) => {
    if (!request.withTools) return { text: "ok" };
    const pointer = TASK_POINTER.exec(lastPrompt(request));
    const results = toolResults(request);
    if (pointer && !answersTool(request) && results.length === 0) return { tool: "Read", input: { file_path: pointer[1] } };
    if (answersTool(request) && results.length === 1) return { text: "I have read my task." };
    return then(request);
  };
}

/** A Claude Code world: the daemon's, the stand-in API, Claude Code's home, and the workers' tmux server. */
export interface ClaudeWorld extends DaemonTest {
  api: AnthropicApi;
  home: string;
  socket: string;
  /** What the newest worker's tmux pane shows now. */
  pane(): Promise<string>;
  /** Types a line into the newest worker's pane, as its owner attached would. */
  type(line: string): Promise<void>;
  /** Presses keys in the newest worker's pane (tmux key names: Down, Enter). */
  press(...keys: string[]): Promise<void>;
}

/** Whether the owner's yes to Claude Code's folder-trust question is recorded for the clone (default: yes). */
export interface ClaudeWorldOptions {
  trustClone?: boolean;
}

/** A world runner for one test file's forge template. */
export type WithClaude = (script: ModelScript, fn: (w: ClaudeWorld) => Promise<void>, options?: ClaudeWorldOptions) => Promise<void>;

/**
 * Binds the world to a test file's forge template: each call runs `fn` with a forge, the
 * daemon's deps with Claude Code as the tmux worker, and the stand-in API answering with
 * `script`; the tmux server is ended afterwards.
 * @example
 * const template = forgeTemplate();
 * const withClaude = claudeWorld(template);
 * test("...", () => withClaude(obedientWorker(), async (w) => { await runTick(w.deps, initialState()); }));
 */
export function claudeWorld(template: ForgeTemplate): WithClaude {
  return (script, fn, options = {}) => withClaude(template, script, fn, options);
}

async function withClaude(template: ForgeTemplate, script: ModelScript, fn: (w: ClaudeWorld) => Promise<void>, options: ClaudeWorldOptions): Promise<void> {
  const api = await serveAnthropicApi(script);
  const socket = `ra-claude-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const home = makeTempDir("robot-army-claude-home-");
  try {
    const env = claudeCodeHome(home, api);
    await withDaemon(template, async (d) => {
      // The owner's yes, as `robot-army trust demo/widgets` records it: for the clone, which holds for its worktrees.
      if (options.trustClone ?? true) recordClaudeTrust(join(home, ".claude.json"), d.config.repos["demo/widgets"].path);
      const { pane, type, press } = workerPane(socket);
      await fn({ ...d, api, home, socket, pane, type, press });
    }, [claudeCodeBinary()], { worker: { profile: "claude", launcher: "tmux", tmux_socket: socket, tmux_session: "workers" }, env });
  } finally {
    await runCommand(["tmux", "-L", socket, "kill-server"], process.env);
    await api.close();
    removeTempDir(home);
  }
}

/** The newest worker's pane on the tmux server `socket` (a resumed worker's window opens beside its dead predecessor's): read, typed into, keys pressed. */
export function workerPane(socket: string): Pick<ClaudeWorld, "pane" | "type" | "press"> {
  const tmux = async (...args: string[]) => (await runCommand(["tmux", "-L", socket, ...args], process.env)).stdout;
  const newest = async () => (await tmux("list-windows", "-t", "workers", "-F", "#{window_id}")).trim().split("\n").at(-1) || "workers";
  return {
    pane: async () => await tmux("capture-pane", "-p", "-t", await newest()),
    type: async (line: string) => {
      const window = await newest();
      await tmux("send-keys", "-t", window, "-l", line);
      // A key sent with the text would be taken as part of a paste by an agent that detects one (Codex): Enter comes on its own.
      await new Promise((done) => setTimeout(done, 300));
      await tmux("send-keys", "-t", window, "Enter");
    },
    press: async (...keys: string[]) => {
      const window = await newest();
      for (const key of keys) await tmux("send-keys", "-t", window, key);
    },
  };
}

/**
 * Kills item 1's worker (`first`) with SIGKILL, as a crash would, ticks until its exit makes
 * the item `interrupted` (dispatch paused, so no other item takes the slot), and resumes it as
 * the owner would (`robot-army resume 1 --force`); returns the new session, a new attempt.
 */
export async function killAndResume(w: DaemonTest & Pick<ClaudeWorld, "pane" | "home"> & { api: { requests: unknown[] } }, first: StoredSession): Promise<StoredSession> {
  const record = readRecord(w.deps.sessionRoot, first.id);
  if (!record?.childPid) throw new Error(`the worker of ${first.name} has no pid on record`);
  pause(w.store, { reason: "the test resumes item 1 itself" });
  process.kill(record.childPid, "SIGKILL");
  await waitWorker(w, "the killed worker's exit to be seen", async () => {
    await runTick(w.deps, initialState());
    return getItem(w.store, 1)!.state === "interrupted";
  });
  const resumed = await relaunchItem(w.deps, 1, { how: "resume", force: true });
  if (resumed.result !== "active") throw new Error(`resume 1: ${resumed.result}: ${resumed.reason}`);
  const second = sessionOf(w, 1);
  if (!second || second.id !== resumed.session?.id || second.episode_key === first.episode_key) throw new Error(`resume 1 started no new attempt: ${JSON.stringify(second)}`);
  return second;
}

/** The one open session of item `id`. */
export function sessionOf(w: DaemonTest, id: number): StoredSession | undefined {
  return openSessions(w.store).find((session) => session.item === id);
}

/** waitFor, with the worker's pane and the API's requests in the failure, as a user attaching would see them. */
export async function waitWorker<T>(w: DaemonTest & Pick<ClaudeWorld, "pane" | "home"> & { api: { requests: unknown[] } }, what: string, probe: () => T | undefined | null | false | Promise<T | undefined | null | false>, timeoutMs = 60_000): Promise<T> {
  try {
    return await waitFor(what, probe, timeoutMs);
  } catch (error) {
    const session = openSessions(w.store)[0];
    const registry = session ? JSON.stringify(await readRegistry(session, session.profile ?? "claude")) : "no open session";
    (error as Error).message += `\ntranscripts: ${transcriptsOf(w.home).join(", ")}\nregistry: ${registry}\nrequests: ${w.api.requests.length}\npane:\n${(await w.pane()).replace(/\n{2,}/g, "\n")}`;
    throw error;
  }
}

/** The transcripts Claude Code keeps in a home, as `<project folder>/<session id>.jsonl`. */
export function transcriptsOf(home: string): string[] {
  const projects = join(home, ".claude", "projects");
  return existsSync(projects) ? readdirSync(projects).flatMap((dir) => readdirSync(join(projects, dir)).map((file) => `${dir}/${file}`)) : [];
}

/** What a command printed through its `write`. */
export async function textOf(fn: (write: (chunk: string) => void) => unknown): Promise<string> {
  let text = "";
  await fn((chunk) => void (text += chunk));
  return text;
}

/** The worker's episode status as its registry says it, or `unknown (why)`. */
export async function episodeStatus(session: StoredSession): Promise<string> {
  const registry = await readRegistry(session, session.profile ?? "claude");
  return registry.known ? registry.status : `unknown (${registry.why})`;
}
