/**
 * A stand-in for Claude Code a setup writes: `<dir>/bin/claude` (so the worker profile is
 * claude, from the binary's name), which runs the given script on robot-army's runtime.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runtimeArgv } from "../../runtime.ts";
import { commandText } from "../../shell-words.ts";

/** Writes `<dir>/bin/<name>.mjs` holding `source` and `<dir>/bin/claude` that runs it; returns the path of `claude`. */
export function writeClaudeStandIn(dir: string, name: string, source: string): string {
  const bin = join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  const script = join(bin, `${name}.mjs`);
  writeFileSync(script, source);
  const claude = join(bin, "claude");
  writeFileSync(claude, `#!/bin/sh\nexec ${commandText(runtimeArgv(script))} "$@"\n`);
  chmodSync(claude, 0o755);
  return claude;
}
