/**
 * `robot-army serve [--bind ADDR] [--port N] [--render PATH]`: the web dashboard. It reads
 * the store the commands read and never holds up the daemon; its only writes (keep, release
 * a keep, acknowledge an anomaly) are the CLI's own functions, audited as the CLI audits
 * them. Bound beyond loopback it needs `[web] token_file`, and refuses to start without it.
 */
import { setFlagsFromString } from "node:v8";
import type { CommandDef, Write } from "../lib/cli.ts";
import { integerOption, parse, runMain, stringOption, withHelp, writeStdout } from "../lib/cli.ts";
import type { Config } from "../lib/config.ts";
import { CONFIG_OPTION, configFromArgs } from "../lib/config.ts";
import { UsageError } from "../lib/errors.ts";
import { sessionRoot } from "../lib/sessions/records.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { webApp } from "../lib/web/app.ts";
import { webContext } from "../lib/web/context.ts";
import { webAccess } from "../lib/web/security.ts";
import { listen } from "../lib/web/serve.ts";

export const command: CommandDef = {
  name: "serve",
  summary: "Serve the web dashboard: what runs, what needs you, each item's live terminal",
  usage: "serve [--bind ADDR] [--port N] [--read-only] [--render PATH] [--config FILE]",
  description: `\
Serves the dashboard at http://<bind>:<port>/ (default 127.0.0.1:8787, or [web] bind and
port) until interrupted, and prints its address. Its pages: / what needs you (failed items
with why, workers that asked you something, interrupted items, open anomalies, held
items, the pause), /active (every worker session, idle or busy and for how long, its pull
request, a keep button, and the keeps in force with their release buttons), /items/<id> (an
item's state, history, sessions, pull requests, cleanup, what an interrupted or failed item
is decided by, the verbs that apply, and its worker's terminal, live), /queue, /anomalies
and /log (the audit log, newest first). Each page's data is JSON under /api (/api/needs,
/api/active, ...). Pages update themselves and say when their data was read and whether
the daemon is alive.

The owner's verbs are buttons where they apply: resume, restart, retry, reset, cancel,
abandon, keep and release, hold and unhold (an item or its repository), pause and unpause,
acknowledge an anomaly, and a box that types a line into an interactive worker's window
(as "robot-army send" does). Each runs the function its command runs, under the same caps,
pauses, holds and refusals, answers with the command's own words, and is written to the
audit log naming the web session that pressed it. Cancel, abandon, reset and restart open a
confirmation first, saying what the worktree holds that could be lost; reset never forces.
A form pressed twice (a double tap, a resubmission) acts once. --read-only shows no buttons
and refuses every action.

On a loopback address no login is needed. Bound to any other address, or with [web]
allowed_hosts naming a host that is not loopback, it refuses to start without [web]
token_file (a 0600 file holding the token); without one it also refuses any request that
carries a proxy's headers (X-Forwarded-For, Forwarded, Via, ...). The login form takes the
token once and sets a cookie, good until serve restarts; the JSON API takes
"Authorization: Bearer <token>". Every request's Host must be the address bound or one of
[web] allowed_hosts; buttons post with a CSRF token and the dashboard's own Origin.

--render PATH prints the page at PATH (HTML, or JSON under /api) as the dashboard would
serve it, and exits: 0 when it was found, 1 when not.
`,
  options: {
    bind: { type: "string", value: "ADDR", description: "The address to listen on (default [web] bind, 127.0.0.1)" },
    port: { type: "string", value: "N", description: "The port to listen on, 0 for any free one (default [web] port, 8787)" },
    "read-only": { type: "boolean", description: "Show, and change nothing: no buttons, and every action refused" },
    render: { type: "string", value: "PATH", description: "Print the page at PATH (such as / or /api/active) and exit" },
    config: CONFIG_OPTION,
  },
  examples: ["robot-army serve", "robot-army serve --port 9000", "robot-army serve --read-only", "robot-army serve --render /api/needs"],
};

/** What `serve` was asked for; unset: the config's. */
export interface ServeOptions {
  bind?: string;
  port?: number;
  render?: string;
  /** Show, and change nothing (`--read-only`). */
  readOnly?: boolean;
}

/** What `serve` reads and where it writes; `stop` ends serving. */
export interface ServeDeps {
  config: Config;
  stateDir: string;
  sessionRoot: string;
  write: Write;
  stop: AbortSignal;
}

/** Parses argv, serves until SIGINT or SIGTERM. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  const opts = withHelp(command, (): ServeOptions => {
    const render = stringOption(args, "render");
    if (render !== undefined && !render.startsWith("/")) throw new UsageError(`--render takes a path that starts with "/", such as /active; got "${render}"`);
    return { bind: stringOption(args, "bind"), port: integerOption(args, "port", 0, 65535), render, readOnly: args.values["read-only"] === true };
  });
  const config = await configFromArgs(args);
  if (opts.render === undefined) smallAndSteady();
  const stop = new AbortController();
  const end = () => stop.abort();
  process.once("SIGINT", end);
  process.once("SIGTERM", end);
  try {
    return await run(opts, { config, stateDir: stateDirPath(), sessionRoot: sessionRoot(), write: writeStdout, stop: stop.signal });
  } finally {
    process.off("SIGINT", end);
    process.off("SIGTERM", end);
  }
}

/** Serves the dashboard (or renders one page) for the state dir. */
export async function run(opts: ServeOptions, deps: ServeDeps): Promise<number> {
  const bind = opts.bind ?? deps.config.web.bind;
  const port = opts.port ?? deps.config.web.port;
  const ctx = webContext(deps.config, deps.stateDir, deps.sessionRoot, { readOnly: opts.readOnly });
  try {
    if (opts.render !== undefined) {
      // The owner at the terminal reads the store already: a rendered page needs no login.
      // Nothing listens, so no form it prints can be posted: its CSRF key is fixed, and a page printed twice reads the same.
      const access = webAccess({ ...deps.config, web: { ...deps.config.web, token_file: undefined, allowed_hosts: [] } }, "127.0.0.1", port);
      const app = webApp(ctx, { ...access, secret: new Uint8Array(32) });
      const stopped = new AbortController();
      const response = await app.request(`http://127.0.0.1${opts.render}`, {
        headers: { Host: "127.0.0.1", Accept: opts.render.startsWith("/api/") ? "application/json" : "text/html" }, signal: stopped.signal,
      });
      // A live stream (an item's terminal) never ends: it is no page to print.
      if (response.headers.get("content-type")?.startsWith("text/event-stream")) {
        stopped.abort();
        await response.body?.cancel().catch(() => {});
        throw new UsageError(`--render prints a page, and ${opts.render} is a live stream that never ends: open it in the dashboard, or read its last lines with "robot-army session peek <session>"`);
      }
      const text = await response.text();
      deps.write(text.endsWith("\n") ? text : `${text}\n`);
      return response.status < 400 ? 0 : 1;
    }
    const app = webApp(ctx, webAccess(deps.config, bind, port));
    const listening = await listen(app, bind, port);
    deps.write(`dashboard: ${listening.url}\n`);
    await new Promise<void>((resolve) => deps.stop.aborted ? resolve() : deps.stop.addEventListener("abort", () => resolve(), { once: true }));
    await listening.close();
    return 0;
  } finally {
    ctx.close();
  }
}

/**
 * A dashboard runs for days beside the agents it watches, and answers a page now and then:
 * V8 keeps its heap small rather than growing it for throughput (a page of 200 sessions
 * allocates a few MB and keeps none), and runs the pages' code in its interpreter and
 * baseline compiler only. The optimizing compilers (Maglev, Turbofan) would make a page a
 * few milliseconds faster and cost 5 to 15 MiB of peak memory for their code and their
 * compilations (`npm run bench -- web`, run with them and without).
 */
function smallAndSteady(): void {
  for (const flag of ["--optimize-for-size", "--no-maglev", "--no-turbofan"]) setFlagsFromString(flag);
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
