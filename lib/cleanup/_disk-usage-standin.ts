/**
 * Stand-in for helper B's lib/cleanup/disk-usage.ts (same exports and shapes) until it is merged.
 * integration: replace with diskUsage and formatSize from lib/cleanup/disk-usage.ts, and delete this file
 */
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** What a walk found: bytes on disk, entries counted, and entries that could not be read. */
export interface DiskUsage {
  bytes: number;
  entries: number;
  unreadable: number;
}

/** The size on disk of everything at and below `path` (lstat blocks, links not followed); undefined when it is not there. */
export function diskUsage(path: string): DiskUsage | undefined {
  let top;
  try {
    top = lstatSync(path);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? undefined : { bytes: 0, entries: 0, unreadable: 1 };
  }
  const usage: DiskUsage = { bytes: top.blocks * 512, entries: 1, unreadable: 0 };
  const folders = top.isDirectory() ? [path] : [];
  while (folders.length > 0) {
    const folder = folders.pop()!;
    try {
      for (const name of readdirSync(folder)) {
        const stat = lstatSync(join(folder, name));
        usage.bytes += stat.blocks * 512;
        usage.entries++;
        if (stat.isDirectory()) folders.push(join(folder, name));
      }
    } catch {
      usage.unreadable++;
    }
  }
  return usage;
}

/** A byte count as the owner reads it: `512 B`, `4.0 KiB`, `12.4 MiB`. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
