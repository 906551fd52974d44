/**
 * The one way the boundaries run git: through dax, its arguments as an array (escaped by
 * dax, never joined into a command string), quietly, with no terminal to prompt on.
 */
import { RobotArmyError } from "../errors.ts";
import { redact } from "../redact.ts";

let dax: typeof import("dax-sh").$ | undefined;

/** dax, loaded on first use. */
export async function loadDax(): Promise<typeof import("dax-sh").$> {
  dax ??= (await import("dax-sh")).$;
  return dax;
}

/** Runs git in `cwd`, `input` on its stdin (none by default); the exit code is the caller's to read. */
export async function runGit(cwd: string, args: string[], input?: string) {
  const $ = await loadDax();
  const command = $`git ${args}`.cwd(cwd).env("GIT_TERMINAL_PROMPT", "0").quiet().noThrow();
  return await (input === undefined ? command.stdin("null") : command.stdinText(input));
}

/** Runs git and returns its trimmed stdout; a non-zero exit throws with git's words. */
export async function git(cwd: string, args: string[]): Promise<string> {
  const result = await runGit(cwd, args);
  if (result.code !== 0) throw new RobotArmyError(`git ${args.join(" ")} failed in "${cwd}": ${tail(result.stderr) || `exit ${result.code}`}`);
  return result.stdout.trim();
}

/** The end of a program's output, redacted before it is cut so no part of a secret it printed survives. */
export function tail(text: string, lines = 20, chars = 2000): string {
  return redact(text).trim().split("\n").slice(-lines).join("\n").slice(-chars);
}
