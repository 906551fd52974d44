/**
 * Running an outside program (tmux, kitty's remote control, git on a worker's PATH) by argv
 * through dax: each argument escaped by dax, never joined into a string, with exactly the
 * environment given, no stdin (or the text given as its stdin), its output captured. What the
 * launchers and the terminal reader share.
 *
 * @example await runCommand(["tmux", "-V"], { PATH: process.env.PATH }) // { code: 0, stdout: "tmux 3.3a\n", stderr: "" }
 */

/** What an outside command answered; code 127 when it could not be run at all. */
export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

let dax: typeof import("dax-sh").$ | undefined;

/**
 * Runs argv through dax (each argument escaped by dax, never joined into a string) with
 * exactly `env`, no stdin unless `stdin` gives its text, its output captured; a non-zero exit
 * is the caller's to read.
 */
export async function runCommand(argv: string[], env: Record<string, string | undefined>, options: { timeoutMs?: number; stdin?: string } = {}): Promise<CommandResult> {
  dax ??= (await import("dax-sh")).$;
  const defined = Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
  try {
    const command = dax`${argv}`.clearEnv().env(defined);
    const fed = options.stdin === undefined ? command.stdin("null") : command.stdinText(options.stdin);
    const result = await fed.quiet().noThrow().timeout(options.timeoutMs);
    return { code: result.code, stdout: result.stdout, stderr: result.stderr };
  } catch (error) {
    // dax throws when the program cannot be found or started at all.
    return { code: 127, stdout: "", stderr: error instanceof Error ? error.message : String(error) };
  }
}
