/**
 * Runs many command lines through the `robot-army` router in one process, for the argv fuzz
 * (`scripts/argv.fuzz.test.ts`): starting a process per case costs 150-300 ms, one case
 * in-process a few. Each case goes through `runMain`, the same top-level catch the binary
 * has, with stdout and stderr captured; one JSON line per case goes to a results file.
 *
 * `node scripts/dev/argv-cases.ts CASES.json RESULTS.jsonl` where CASES.json holds `string[][]`
 * (argv after `robot-army`); each result is appended to RESULTS.jsonl as it is known. The caller picks the state dir, config, HOME and cwd through the
 * environment and the working directory: this file reaches nothing by itself.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { runMain } from "../../lib/cli.ts";
import { main } from "../robot-army.ts";

/** What one case did: its exit code, what it printed, and whether it finished at all. */
export interface CaseResult {
  argv: string[];
  /** The exit code runMain left, or null when the case did not end within the time allowed. */
  exit: number | null;
  stdout: string;
  stderr: string;
  /** An error nothing caught (an uncaught exception or rejection while the case ran). */
  escaped?: string;
}

/** How long one case may take before it counts as hanging. */
const CASE_TIMEOUT_MS = 10_000;

/** The most of stdout and stderr a result keeps: enough to see a stack trace. */
const KEEP_CHARS = 4000;

async function runCases(cases: string[][], resultsFile: string): Promise<void> {
  // To a file, not stdout: a case may leave process.stdout ended or broken, and a pipe the
  // caller reads slowly refuses a synchronous write once it is full.
  const report = (result: CaseResult) => appendFileSync(resultsFile, JSON.stringify(result) + "\n");
  let escaped: string | undefined;
  const onEscape = (error: unknown) => {
    escaped ??= error instanceof Error ? String(error.stack) : String(error);
  };
  process.on("uncaughtException", onEscape);
  process.on("unhandledRejection", onEscape);
  for (const argv of cases) {
    const out: string[] = [];
    const err: string[] = [];
    const restore = capture(out, err);
    const listeners = { out: process.stdout.listeners("error"), err: process.stderr.listeners("error") };
    escaped = undefined;
    process.exitCode = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finished = await Promise.race([
      runMain(main, argv).then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), CASE_TIMEOUT_MS))),
    ]);
    clearTimeout(timer);
    restore();
    // runMain adds its stdout and stderr listeners on every call; one process runs many.
    for (const [stream, before] of [[process.stdout, listeners.out], [process.stderr, listeners.err]] as const) {
      for (const listener of stream.listeners("error")) if (!before.includes(listener)) stream.off("error", listener as () => void);
    }
    const exit = finished ? Number(process.exitCode ?? 0) : null;
    report({ argv, exit, stdout: out.join("").slice(0, KEEP_CHARS), stderr: err.join("").slice(0, KEEP_CHARS), ...(escaped ? { escaped } : {}) });
    // A case that hangs may hold anything open; the rest of the batch is not trusted to it.
    if (!finished) break;
  }
  process.exitCode = 0;
}

/** Sends what the process writes to stdout and stderr into `out` and `err`; returns the undo. */
function capture(out: string[], err: string[]): () => void {
  const streams = [[process.stdout, out], [process.stderr, err]] as const;
  const originals = streams.map(([stream]) => stream.write);
  for (const [stream, into] of streams) {
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      into.push(typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk));
      const done = rest.find((arg) => typeof arg === "function") as (() => void) | undefined;
      done?.();
      return true;
    }) as typeof stream.write;
  }
  return () => streams.forEach(([stream], i) => (stream.write = originals[i]));
}

if (import.meta.main) {
  await runCases(JSON.parse(readFileSync(process.argv[2], "utf8")) as string[][], process.argv[3]);
  // Whatever a case left open (a timer, a server) does not keep the batch's process alive.
  process.exit(0);
}
