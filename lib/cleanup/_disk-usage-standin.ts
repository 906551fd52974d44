/**
 * Stand-in for helper B's lib/cleanup/disk-usage.ts until it is merged.
 * integration: replace with the size on disk from lib/cleanup/disk-usage.ts
 */
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** Bytes on disk below `path` (blocks of every file, symbolic links not followed); null when it cannot be read. */
export function diskUsage(path: string): number | null {
  try {
    const stat = lstatSync(path);
    let bytes = stat.blocks * 512;
    if (stat.isDirectory()) {
      for (const name of readdirSync(path)) {
        const below = diskUsage(join(path, name));
        if (below === null) return null;
        bytes += below;
      }
    }
    return bytes;
  } catch {
    return null;
  }
}

/** A size for people: `512 B`, `12.0 KiB`, `3.4 MiB`; `size unknown` when it could not be measured. */
export function describeSize(bytes: number | null): string {
  if (bytes === null) return "size unknown";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}
