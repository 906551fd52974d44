/**
 * Size on disk of a folder: the blocks of every file, folder and link below it (lstat's
 * `blocks` times 512, what `du` counts), symbolic links never followed, so a link to a big
 * tree elsewhere costs only the link. What cannot be read is counted apart, so a size is
 * never passed off as whole when part of the tree was hidden.
 *
 * @example
 * const usage = diskUsage("/home/o/.local/state/robot-army/worktrees/demo/widgets/issue-1");
 * formatSize(usage!.bytes) // "12.4 MiB"
 */
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** What a walk found: bytes on disk, entries counted, and entries that could not be read. */
export interface DiskUsage {
  bytes: number;
  entries: number;
  /** Entries (folders that could not be listed, files that could not be stat'ed) left out of `bytes`. */
  unreadable: number;
}

/** How a long walk reports how far it got, at most once per `everyMs` (default 250 ms). */
export interface DiskUsageOptions {
  onProgress?: (sofar: DiskUsage) => void;
  everyMs?: number;
}

/** The size on disk of everything at and below `path`; undefined when `path` itself is not there. */
export function diskUsage(path: string, options: DiskUsageOptions = {}): DiskUsage | undefined {
  let top;
  try {
    top = lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    return { bytes: 0, entries: 0, unreadable: 1 };
  }
  const usage: DiskUsage = { bytes: 0, entries: 0, unreadable: 0 };
  const everyMs = options.everyMs ?? 250;
  let lastReport = Date.now();
  const count = (stat: { blocks: number; size: number }) => {
    usage.entries++;
    // Some file systems report no blocks; the size is the best that can be said then.
    usage.bytes += Number.isFinite(stat.blocks) ? stat.blocks * 512 : stat.size;
    if (options.onProgress && Date.now() - lastReport >= everyMs) {
      lastReport = Date.now();
      options.onProgress({ ...usage });
    }
  };
  count(top);
  // An explicit stack, not recursion: a deep tree must not exhaust the call stack.
  const folders = top.isDirectory() ? [path] : [];
  while (folders.length > 0) {
    const folder = folders.pop()!;
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      usage.unreadable++;
      continue;
    }
    for (const name of names) {
      const child = join(folder, name);
      let stat;
      try {
        stat = lstatSync(child);
      } catch {
        usage.unreadable++;
        continue;
      }
      count(stat);
      if (stat.isDirectory()) folders.push(child);
    }
  }
  return usage;
}

const UNITS = ["KiB", "MiB", "GiB", "TiB"];

/**
 * A byte count as the owner reads it: `512 B`, `4.0 KiB`, `12.4 MiB` (powers of 1024, one decimal).
 * @example formatSize(1536) // "1.5 KiB"
 */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${UNITS[unit]}`;
}
