/**
 * Makes a file or folder really read-only for a test, for root too: its mode loses the
 * write bits for an ordinary user, and root (whom modes do not stop) gets the immutable
 * attribute (`chattr +i`), which stops every writer. Returns the undo.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, statSync } from "node:fs";

/** Takes write access away from `path`; the function returned gives it back. */
export function makeReadOnly(path: string): () => void {
  if (process.getuid?.() !== 0) {
    const mode = statSync(path).mode & 0o7777;
    chmodSync(path, mode & ~0o222);
    return () => chmodSync(path, mode);
  }
  chattr("+i", path);
  return () => chattr("-i", path);
}

function chattr(flag: string, path: string): void {
  const result = spawnSync("chattr", [flag, path], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`chattr ${flag} "${path}" failed: ${result.error?.message ?? result.stderr.trim()}`);
}
