/**
 * The owner's trust in a repository, as the worker's agent keeps it. Claude Code asks "Is this
 * a project you trust?", and Codex "Trust this folder?", in a folder they have not been told to
 * trust, and run no hook until it is answered: a worker at that question is a worker robot-army
 * cannot see.
 *
 * Claude Code keeps
 * the answer in its global config (`~/.claude.json`, or `$CLAUDE_CONFIG_DIR/.claude.json`),
 * as `projects["<folder>"].hasTrustDialogAccepted`; for a git repository the answer given for
 * its main clone holds for every worktree of it (seen with Claude Code 2.1.332: a worktree of a
 * trusted clone opens with no question, wherever it lies), so one answer for the clone covers
 * every worker robot-army starts there.
 *
 * robot-army reads that answer (`doctor`, `trust --check`), and records it only when the
 * owner says yes (`robot-army trust owner/name`), audited (`agent.trust`): merged into the file,
 * every other setting of Claude Code's kept, written whole by a rename so Claude Code never
 * reads half a file.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import { writeFileAtomic } from "../atomic.ts";
import type { WorkerProfile } from "../config.ts";
import { PreconditionError } from "../errors.ts";

/** An environment as robot-army reads it. */
type Env = Record<string, string | undefined>;

/** What Claude Code's config says of a folder: trusted, not (yet), or why it cannot be told. */
export type TrustAnswer = { trusted: true } | { trusted: false } | { trusted: "unknown"; why: string };

/** Where Claude Code keeps its global config, trust answers among it. */
export function claudeConfigFile(env: Env = process.env): string {
  if (env.CLAUDE_CONFIG_DIR) return join(env.CLAUDE_CONFIG_DIR, ".claude.json");
  if (!env.HOME) throw new PreconditionError("Neither CLAUDE_CONFIG_DIR nor HOME is set: where Claude Code keeps its trust answers cannot be told");
  return join(env.HOME, ".claude.json");
}

/** Whether Claude Code's config records the owner's trust in `folder` (its clone), as its path or its real path. */
export function claudeTrusts(file: string, folder: string): TrustAnswer {
  if (!existsSync(file)) return { trusted: false };
  let config: unknown;
  try {
    config = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    return { trusted: "unknown", why: `${file} cannot be read as JSON: ${(error as Error).message}` };
  }
  if (!isObject(config)) return { trusted: "unknown", why: `${file} is not a JSON object` };
  const projects = isObject(config.projects) ? config.projects : {};
  const accepted = namesOf(folder).some((name) => {
    const project = projects[name];
    return isObject(project) && project.hasTrustDialogAccepted === true;
  });
  return { trusted: accepted };
}

/**
 * Records the owner's trust in `folder` in Claude Code's config: `projects[folder].hasTrustDialogAccepted = true`,
 * the rest of the file as it was. A file that is not a JSON object is Claude Code's to mend, never overwritten.
 * Returns whether it changed anything.
 */
export function recordClaudeTrust(file: string, folder: string): boolean {
  const config: Record<string, unknown> = existsSync(file) ? parseObject(file) : {};
  const projects = isObject(config.projects) ? config.projects : {};
  const key = realFolder(folder);
  const project = isObject(projects[key]) ? projects[key] as Record<string, unknown> : {};
  if (project.hasTrustDialogAccepted === true) return false;
  config.projects = { ...projects, [key]: { ...project, hasTrustDialogAccepted: true } };
  // Claude Code keeps the file readable by its owner only; so does this write.
  writeFileAtomic(file, JSON.stringify(config, null, 2) + "\n", { private: true });
  return true;
}

/** The agents whose folder trust robot-army reads and records. */
export type TrustingAgent = "claude" | "codex";

/** Where an agent keeps its trust answers, and how they are read and recorded. */
export interface TrustStore {
  agent: TrustingAgent;
  /** The agent as its users know it. */
  name: string;
  /** The question it asks in a folder not yet trusted. */
  question: string;
  file: string;
}

/** The agents with a folder-trust question, by their worker profile. */
const TRUSTING: Readonly<Record<TrustingAgent, { name: string; question: string }>> = {
  claude: { name: "Claude Code", question: "Is this a project you trust?" },
  codex: { name: "Codex", question: "Trust this folder?" },
};

/** The trust store of the profile's agent; null for a profile whose agent asks no such question (demo, generic). */
export function trustStoreFor(profile: WorkerProfile, env: Env = process.env): TrustStore | null {
  if (profile !== "claude" && profile !== "codex") return null;
  return { agent: profile, ...TRUSTING[profile], file: profile === "claude" ? claudeConfigFile(env) : codexConfigFile(env) };
}

/** Whether the store records the owner's trust in `folder`. */
export function trusts(store: Pick<TrustStore, "agent" | "file">, folder: string): TrustAnswer {
  return store.agent === "claude" ? claudeTrusts(store.file, folder) : codexTrusts(store.file, folder);
}

/** Records the owner's trust in `folder` in the store; returns whether it changed anything. */
export function recordTrust(store: Pick<TrustStore, "agent" | "file">, folder: string): boolean {
  return store.agent === "claude" ? recordClaudeTrust(store.file, folder) : recordCodexTrust(store.file, folder);
}

/** Where Codex keeps its config, trust answers among it. */
export function codexConfigFile(env: Env = process.env): string {
  if (env.CODEX_HOME) return join(env.CODEX_HOME, "config.toml");
  if (!env.HOME) throw new PreconditionError("Neither CODEX_HOME nor HOME is set: where Codex keeps its trust answers cannot be told");
  return join(env.HOME, ".codex", "config.toml");
}

/** Whether Codex's config records the owner's trust in `folder` (its clone), as its path or its real path. */
export function codexTrusts(file: string, folder: string): TrustAnswer {
  if (!existsSync(file)) return { trusted: false };
  let config: Record<string, unknown>;
  try {
    config = parseToml(readFileSync(file, "utf8")) as Record<string, unknown>;
  } catch (error) {
    return { trusted: "unknown", why: `${file} cannot be read as TOML: ${(error as Error).message.split("\n")[0]}` };
  }
  const projects = isObject(config.projects) ? config.projects : {};
  const trusted = namesOf(folder).some((name) => {
    const project = projects[name];
    return isObject(project) && project.trust_level === "trusted";
  });
  return { trusted };
}

/**
 * Records the owner's trust in `folder` in Codex's config by adding its table
 * (`[projects."<folder>"]`, `trust_level = "trusted"`) at the end, the rest of the file byte for
 * byte. A folder Codex was told not to trust, or a file the table cannot be added to (one that
 * is not TOML, or keeps its projects inline), is the owner's to change, never rewritten.
 */
export function recordCodexTrust(file: string, folder: string): boolean {
  const current = existsSync(file) ? readFileSync(file, "utf8") : "";
  const answer = codexTrusts(file, folder);
  if (answer.trusted === true) return false;
  if (answer.trusted === "unknown") throw new PreconditionError(`Cannot record trust in ${file}: ${answer.why}; Codex's file is left as it is`);
  const key = realFolder(folder);
  const projects = (parseToml(current) as Record<string, unknown>).projects;
  const entry = isObject(projects) ? projects[key] ?? projects[folder] : undefined;
  if (entry !== undefined) {
    const level = isObject(entry) ? JSON.stringify(entry.trust_level) : "not a table";
    throw new PreconditionError(`Cannot record trust in ${file}: its [projects.${JSON.stringify(key)}] says trust_level ${level}; change it to "trusted" there yourself if you trust the clone`);
  }
  const next = `${current}${current === "" || current.endsWith("\n") ? "" : "\n"}${current === "" ? "" : "\n"}[projects.${JSON.stringify(key)}]\ntrust_level = "trusted"\n`;
  try {
    parseToml(next);
  } catch (error) {
    throw new PreconditionError(`Cannot record trust in ${file}: a [projects.${JSON.stringify(key)}] table cannot be added to it (${(error as Error).message.split("\n")[0]}); Codex's file is left as it is`);
  }
  writeFileAtomic(file, next, { private: true });
  return true;
}

/** The words `doctor`, `onboard` and `trust --check` use for an answer about the clone of `repo`. */
export function describeTrust(repo: string, folder: string, answer: TrustAnswer, store: Pick<TrustStore, "name" | "question" | "file">): string {
  const { name, question, file } = store;
  if (answer.trusted === true) return `${name} trusts ${folder} (${repo}), so its worktrees open without the folder-trust question`;
  if (answer.trusted === false) {
    return `${name} has not been told to trust ${folder} (${repo}): every worker there stops at "${question}" ` +
      `before any hook runs, until you attach and answer; "robot-army trust ${repo}" records your yes in ${file}`;
  }
  return `whether ${name} trusts ${folder} (${repo}) cannot be told: ${answer.why}`;
}

function parseObject(file: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new PreconditionError(`Cannot record trust in ${file}: it is not JSON (${(error as Error).message}); Claude Code's file is left as it is`);
  }
  if (!isObject(value)) throw new PreconditionError(`Cannot record trust in ${file}: it is not a JSON object; Claude Code's file is left as it is`);
  return value;
}

/** The folder as Claude Code names it (its real path), and as written. */
function namesOf(folder: string): string[] {
  return [...new Set([folder, realFolder(folder)])];
}

function realFolder(folder: string): string {
  try {
    return realpathSync.native(folder);
  } catch {
    return folder;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * What became of a trust record a crash cut short, read from the file its intent names: the
 * folder trusted there (recorded), or not (not recorded; the owner runs `trust` again).
 */
export function agentTrustEvidence(intent: { body: Record<string, unknown> }): { settled: true; ok: boolean; found: string; facts: Record<string, unknown> } | { settled: false; check: string } {
  const { file, folder, agent } = intent.body;
  if (typeof file !== "string" || typeof folder !== "string") return { settled: false, check: "its intent names no file and folder" };
  // Intents from before Codex was trusted name no agent: they are Claude Code's.
  const answer = trusts({ agent: agent === "codex" ? "codex" : "claude", file }, folder);
  if (answer.trusted === "unknown") return { settled: false, check: answer.why };
  return { settled: true, ok: answer.trusted, found: answer.trusted ? "recorded" : "not recorded", facts: { file, folder } };
}
