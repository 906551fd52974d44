/**
 * The dashboard as an owner starts it: `robot-army serve` as a child process of the runtime
 * running the test or benchmark, its address read from the line it prints once it listens,
 * and ended by its pid. For tests and benchmarks only.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { PROJECT_ROOT, isDeno, runtimeArgv } from "../runtime.ts";

/** A running `robot-army serve`. */
export interface Dashboard {
  /** Its address without the trailing slash, e.g. `http://127.0.0.1:40123`. */
  url: string;
  /** The server's own pid (the runtime running robot-army, no wrapper in between). */
  pid: number;
  /** Everything it printed on stdout and stderr so far. */
  output(): string;
  /** Ends it (SIGTERM, then SIGKILL after five seconds) and waits until it has gone. */
  stop(): Promise<void>;
}

/** How to start it: the environment (state dir, config), the working directory, and more arguments. */
export interface DashboardOptions {
  env: Record<string, string | undefined>;
  cwd?: string;
  /** Arguments after `serve`; `--port 0` is added unless a port is among them. */
  args?: string[];
  /** The command that runs robot-army (default: this process's runtime, as below); a scenario names its own runtime's. */
  command?: string[];
}

/** The line `robot-army serve` prints once it listens. */
const LISTENING = /^dashboard: (http:\/\/127\.0\.0\.1:\d+)\/$/m;

/**
 * robot-army as an owner runs it, on the runtime running this process: on Node the entry
 * point (bin/robot-army.mjs, with Node's compile cache, as `robot-army` on PATH runs), on
 * Deno the router.
 */
const ROBOT_ARMY = isDeno() ? runtimeArgv(join(PROJECT_ROOT, "scripts", "robot-army.ts")) : [process.execPath, join(PROJECT_ROOT, "bin", "robot-army.mjs")];

/** Starts `robot-army serve` on a free loopback port; resolves once it listens, fails with its output if it exits first. */
export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  const args = options.args ?? [];
  const argv = ["serve", ...args, ...(args.includes("--port") ? [] : ["--port", "0"])];
  const [bin, ...prefix] = options.command ?? ROBOT_ARMY;
  const child = spawn(bin, [...prefix, ...argv], { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = () => stopChild(child, exited);
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout!.on("data", () => {
        const found = LISTENING.exec(output)?.[1];
        if (found) resolve(found);
      });
      child.once("error", reject);
      child.once("exit", (code, signal) => reject(new Error(`robot-army ${argv.join(" ")} exited ${code ?? signal} before it listened: ${output.trim()}`)));
    });
    return { url, pid: child.pid!, output: () => output, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Ends the child by its pid: SIGTERM, SIGKILL if it is still there after five seconds. */
async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), 5_000)));
  if (await Promise.race([exited.then(() => false), late])) {
    child.kill("SIGKILL");
    await exited;
  }
  clearTimeout(timer);
}
