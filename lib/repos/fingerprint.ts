/**
 * A repository's fingerprint: the settings the owner approved when onboarding it
 * (GitHub's `settings`, its default branch, whether it is private, and where its clone
 * is on this machine), and the SHA-256 of each of its agent files on the base branch
 * (`agent_file:<path>`, lib/repos/agent-files.ts). Two fingerprints are compared key by
 * key, so a change can say exactly which setting or file moved.
 */
import type { GitHubRepository } from "../boundaries/github-types.ts";
import { printable } from "../printable.ts";
import { sha256Hex } from "../sha256.ts";

/** The approved settings, keys sorted; values are JSON. */
export type Fingerprint = Record<string, unknown>;

/** The prefix of an agent file's key: `agent_file:.claude/settings.json`. */
export const AGENT_FILE_KEY = "agent_file:";

/**
 * An agent file every fingerprint that read them holds (null when absent): a change from
 * "no such key" there means the approval was made before agent files were fingerprinted.
 */
const ALWAYS_NAMED = `${AGENT_FILE_KEY}.claude/settings.json`;

/** One setting whose value differs between the approved fingerprint and the one seen. */
export interface SettingChange {
  setting: string;
  /** Undefined when the setting was not there before. */
  from: unknown;
  /** Undefined when the setting is gone. */
  to: unknown;
}

/**
 * The fingerprint of a repository as GitHub describes it, cloned at `path`. The named
 * keys win over a `settings` entry of the same name.
 */
export function fingerprintOf(repository: GitHubRepository, path: string): Fingerprint {
  return sortedFingerprint({ ...repository.settings, default_branch: repository.default_branch, private: repository.private, path });
}

/** Several parts (the settings, the agent files) as one fingerprint, keys sorted. */
export function sortedFingerprint(...parts: Fingerprint[]): Fingerprint {
  const all: Fingerprint = Object.assign({}, ...parts);
  return Object.fromEntries(Object.keys(all).sort().map((key) => [key, canonical(all[key])]));
}

/**
 * A digest of a fingerprint's settings (every key but the agent files'), the same whichever way
 * its keys came: what an approval page shows and the approval it posts are held to the same
 * settings by it (lib/repos/onboard.ts `settingsDigest`).
 */
export function settingsDigest(fingerprint: Fingerprint): string {
  const settings = Object.fromEntries(Object.entries(sortedFingerprint(fingerprint)).filter(([key]) => !key.startsWith(AGENT_FILE_KEY)));
  return sha256Hex(JSON.stringify(settings));
}

/** The agent files among the changes, by path, in key order. */
export function agentFileChanges(changes: readonly SettingChange[]): SettingChange[] {
  return changes.filter((c) => c.setting.startsWith(AGENT_FILE_KEY));
}

/** Whether the changes come from an approval made before agent files were fingerprinted. */
export function approvedWithoutAgentFiles(changes: readonly SettingChange[]): boolean {
  return changes.some((c) => c.setting === ALWAYS_NAMED && c.from === undefined);
}

/** The settings that differ, in key order; empty when the fingerprints are the same. */
export function fingerprintChanges(approved: Fingerprint, seen: Fingerprint): SettingChange[] {
  const keys = [...new Set([...Object.keys(approved), ...Object.keys(seen)])].sort();
  return keys
    .filter((key) => JSON.stringify(canonical(approved[key])) !== JSON.stringify(canonical(seen[key])))
    .map((setting) => ({ setting, from: approved[setting], to: seen[setting] }));
}

/**
 * Changes in words, for a line of output or a refusal.
 * @example describeChanges([{ setting: "private", from: false, to: true }]) // "private false -> true"
 */
export function describeChanges(changes: readonly SettingChange[]): string {
  const value = (v: unknown) => (v === undefined ? "(none)" : JSON.stringify(v));
  const settings = changes.filter((c) => !c.setting.startsWith(AGENT_FILE_KEY)).map((c) => `${c.setting} ${value(c.from)} -> ${value(c.to)}`);
  return [...settings, ...describeAgentFileChanges(changes)].join(", ");
}

/**
 * The agent files that changed, in words: `.claude/settings.json changed`, `.mcp.json added`;
 * an approval made before agent files were read is one phrase, not a list of additions.
 */
export function describeAgentFileChanges(changes: readonly SettingChange[]): string[] {
  if (approvedWithoutAgentFiles(changes)) return ["agent files never approved (onboarded before robot-army fingerprinted them)"];
  return agentFileChanges(changes).map((c) => {
    // A file's name is the pusher's text: its control characters are escaped.
    const path = printable(c.setting.slice(AGENT_FILE_KEY.length));
    const had = c.from !== undefined && c.from !== null;
    const has = c.to !== undefined && c.to !== null;
    return `${path} ${had && has ? "changed" : has ? "added" : "removed"}`;
  });
}

/** Objects with their keys sorted, so that equal settings serialise equally. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([key, entry]) => [key, canonical(entry)]));
}
