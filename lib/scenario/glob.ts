/**
 * The paths a scenario's file expectations name: relative to the step's cwd, where `*`
 * matches any run of characters within one path segment (`.ai/repo/sessions/*.md`).
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";

/** Whether a path names several files (it has a `*`). */
export function isGlob(pattern: string): boolean {
  return pattern.includes("*");
}

/** A regular expression for one path segment, `*` matching anything but `/`. */
export function segmentPattern(segment: string): RegExp {
  const body = segment.split("*").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[^/]*");
  return new RegExp(`^${body}$`);
}

/**
 * The existing paths matching a pattern, as paths relative to `cwd` (absolute when the
 * pattern is), sorted.
 * @example matchPaths(repo, ".ai/repo/sessions/*.md") // [".ai/repo/sessions/2026-01-15-w1.md"]
 */
export function matchPaths(cwd: string, pattern: string): string[] {
  if (!isGlob(pattern)) return existsSync(join(isAbsolute(pattern) ? "/" : cwd, pattern)) ? [pattern] : [];
  let found = [isAbsolute(pattern) ? "/" : ""];
  for (const segment of pattern.split("/").filter((s) => s !== "")) {
    const next: string[] = [];
    for (const path of found) {
      if (!isGlob(segment)) {
        next.push(path === "" ? segment : join(path, segment));
        continue;
      }
      const dir = isAbsolute(path) ? path : join(cwd, path);
      if (!isDirectory(dir)) continue;
      const matcher = segmentPattern(segment);
      for (const name of readdirSync(dir)) if (matcher.test(name)) next.push(path === "" ? name : join(path, name));
    }
    found = next;
  }
  return found.filter((path) => existsSync(isAbsolute(path) ? path : join(cwd, path))).sort();
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
