/**
 * A stand-in for Claude Code a setup writes: `<dir>/bin/claude` (so the worker profile is
 * claude, from the binary's name), which runs the given script on robot-army's runtime, or a
 * few lines of shell.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runtimeArgv } from "../../runtime.ts";
import { commandText } from "../../shell-words.ts";

/** Writes `<dir>/bin/<name>.mjs` holding `source` and `<dir>/bin/claude` that runs it; returns the path of `claude`. */
export function writeClaudeStandIn(dir: string, name: string, source: string): string {
  const script = join(dir, "bin", `${name}.mjs`);
  const claude = writeClaudeShell(dir, `exec ${commandText(runtimeArgv(script))} "$@"`);
  writeFileSync(script, source);
  return claude;
}

/** Writes `<dir>/bin/claude`, a shell script running `body`; returns its path. */
export function writeClaudeShell(dir: string, body: string): string {
  const bin = join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  const claude = join(bin, "claude");
  writeFileSync(claude, `#!/bin/sh\n${body}\n`);
  chmodSync(claude, 0o755);
  return claude;
}
