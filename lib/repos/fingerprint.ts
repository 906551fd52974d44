/**
 * A repository's fingerprint: the settings the owner approved when onboarding it
 * (GitHub's `settings`, its default branch, whether it is private, and where its clone
 * is on this machine). Two fingerprints are compared key by key, so a change can say
 * exactly which setting moved.
 */
import type { GitHubRepository } from "../boundaries/github-types.ts";

/** The approved settings, keys sorted; values are JSON. */
export type Fingerprint = Record<string, unknown>;

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
  const all: Fingerprint = { ...repository.settings, default_branch: repository.default_branch, private: repository.private, path };
  return Object.fromEntries(Object.keys(all).sort().map((key) => [key, canonical(all[key])]));
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
  return changes.map((c) => `${c.setting} ${value(c.from)} -> ${value(c.to)}`).join(", ");
}

/** Objects with their keys sorted, so that equal settings serialise equally. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([key, entry]) => [key, canonical(entry)]));
}
