/**
 * The world the real-Codex tests stand on: the real Codex CLI (the pinned devDependency) as
 * robot-army's worker in tmux, its model requests answered by the scripted stand-in for the
 * Responses API on loopback (openai-api.ts), over a forge, a clone and an onboarded
 * repository (daemon.ts), as claude-world.ts is for Claude Code. Test support only.
 */
import { join } from "node:path";
import { answersTool, codexBinary, codexHome, lastPrompt, serveOpenAiApi, toolResults } from "./openai-api.ts";
import type { ModelScript, OpenAiApi } from "./openai-api.ts";
import { TASK_POINTER, workerPane } from "./claude-world.ts";
import type { ClaudeWorld } from "./claude-world.ts";
import { withDaemon } from "./daemon.ts";
import type { DaemonTest } from "./daemon.ts";
import type { ForgeTemplate } from "./forge.ts";
import { makeTempDir, removeTempDir } from "./fixtures.ts";
import { runCommand } from "../run-command.ts";
import { recordCodexTrust } from "../dispatch/agent-trust.ts";

/**
 * The model of a Codex worker that does as told: it reads the file its first message names
 * with its shell tool, says it has read it, and waits at its prompt; what comes after is the
 * test's `then`. A request that offers no shell (Codex's own title request) is answered "ok".
 */
export function obedientCodex(then: ModelScript = () => ({ text: "Nothing more to do." })): ModelScript {
  return (request) => {
    if (!request.tools.includes("exec_command")) return { text: "ok" };
    const pointer = TASK_POINTER.exec(lastPrompt(request));
    const results = toolResults(request);
    if (pointer && !answersTool(request) && results.length === 0) return { shell: `cat ${pointer[1]}` };
    if (answersTool(request) && results.length === 1) return { text: "I have read my task." };
    return then(request);
  };
}

/** A Codex world: the daemon's, the stand-in API, Codex's home, and the workers' tmux server. */
export interface CodexWorld extends DaemonTest, Pick<ClaudeWorld, "pane" | "type" | "press"> {
  api: OpenAiApi;
  /** The worker's HOME; Codex's own home is its `.codex`. */
  home: string;
  socket: string;
}

/** Whether the owner's yes to Codex's folder-trust question is recorded for the clone (default: yes). */
export interface CodexWorldOptions {
  trustClone?: boolean;
}

/** A world runner for one test file's forge template. */
export type WithCodex = (script: ModelScript, fn: (w: CodexWorld) => Promise<void>, options?: CodexWorldOptions) => Promise<void>;

/**
 * Binds the world to a test file's forge template: each call runs `fn` with a forge, the
 * daemon's deps with Codex as the tmux worker, and the stand-in answering with `script`; the
 * tmux server is ended afterwards.
 */
export function codexWorld(template: ForgeTemplate): WithCodex {
  return (script, fn, options = {}) => withCodex(template, script, fn, options);
}

async function withCodex(template: ForgeTemplate, script: ModelScript, fn: (w: CodexWorld) => Promise<void>, options: CodexWorldOptions): Promise<void> {
  const api = await serveOpenAiApi(script);
  const socket = `ra-codex-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const home = makeTempDir("robot-army-codex-home-");
  try {
    // The worker's HOME is Codex's test home, which holds no git identity: its commits are named here.
    const codexEnv = codexHome(home, api);
    const env: Record<string, string> = { ...codexEnv, GIT_AUTHOR_NAME: "Codex worker", GIT_AUTHOR_EMAIL: "codex@example.invalid", GIT_COMMITTER_NAME: "Codex worker", GIT_COMMITTER_EMAIL: "codex@example.invalid" };
    await withDaemon(template, async (d) => {
      // The owner's yes, as `robot-army trust demo/widgets` records it: for the clone, which holds for its worktrees.
      if (options.trustClone ?? true) recordCodexTrust(join(codexEnv.CODEX_HOME, "config.toml"), d.config.repos["demo/widgets"].path);
      await fn({ ...d, api, home, socket, ...workerPane(socket) });
    }, [codexBinary()], { worker: { profile: "codex", launcher: "tmux", tmux_socket: socket, tmux_session: "workers" }, env });
  } finally {
    await runCommand(["tmux", "-L", socket, "kill-server"], process.env);
    await api.close();
    removeTempDir(home);
  }
}
