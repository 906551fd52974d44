/**
 * The demo worker: a scripted stand-in for a coding agent, for rehearsals and tests.
 * Started in a worktree with its prompt file in `$RA_PROMPT_FILE`, it does what an agent
 * is asked to: opens an episode, goes busy, writes and commits a note, then delivers as
 * its prompt's `Delivery:` line says (at `live`: pushes its branch and opens a pull request
 * that closes the issue; below it, a rehearsal with no remote writes: nothing more), notes
 * each step in the ledger, goes idle and waits at its prompt until SIGTERM or SIGINT, then
 * ends its episode.
 *
 * Every git and robot-army call goes through dax, each argument escaped by dax.
 */
import { appendFileSync, readFileSync, mkdirSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { join } from "node:path";
import type { CommandDef } from "../lib/cli.ts";
import { parse, runMain, writeStderr, writeStdoutVerbatim } from "../lib/cli.ts";
import { readTokenFile } from "../lib/boundaries/github-token.ts";
import { promptHeader } from "../lib/dispatch/prompt.ts";
import { ROBOT_ARMY_PROMPT, promptNote } from "../lib/episodes/hook.ts";
import type { PromptHeader } from "../lib/dispatch/prompt.ts";
import { PROJECT_ROOT, isDeno, ownScript, runtimeArgv } from "../lib/runtime.ts";
import { isoSeconds, now } from "../lib/clock.ts";

export const command: CommandDef = {
  name: "demo-worker",
  summary: "A scripted stand-in for a coding agent: note, commit, push and pull request when asked, then wait",
  usage: "demo-worker [--once]",
  description: `\
Run in a worktree with RA_PROMPT_FILE naming its prompt file (the work item, issue,
branch, episode key and delivery are read from the prompt). It opens an episode, goes
busy, writes notes/issue-<n>.md and commits it on the current branch. When the prompt asks
for a pull request (effect level live) it pushes the branch (git push -u origin HEAD) and
opens a pull request whose body says "Closes #<n>"; when it asks for commits only (a
rehearsal with no remote writes, below live) it pushes nothing and opens nothing. It notes
each step in the ledger, goes idle and waits at its prompt until SIGTERM or SIGINT. Then
it ends its episode: outcome done once it delivered (the pull request opened, or the note
committed when only commits were asked for), else interrupted; a done episode's record
(.ai/repo/sessions/) is committed (and pushed when the prompt asks for pushes), so the
worktree is left clean. A failure is one line on stderr, the episode ended as failed, and
exit 1.

Environment: RA_PROMPT_FILE (required), RA_GITHUB_API (the API base, e.g. the sandbox
forge's URL) and RA_GITHUB_TOKEN_FILE (a 0600 file holding the token), both required only
when the prompt asks for a pull request, RA_REPO (owner/name; default: the prompt's),
RA_BASE_BRANCH (default: origin's HEAD).
`,
  options: { once: { type: "boolean", description: "End the episode and exit after going idle, instead of waiting" } },
};

/** What the demo worker reads from its environment before it starts. */
export interface DemoSetup {
  header: PromptHeader;
  repo: string;
  /** Where and as whom the pull request is opened; null when the prompt asks for commits only. */
  github: { apiBase: string; token: string } | null;
  baseBranch: string | undefined;
  /** The prompt's "Feedback on this work" section (feedback given since an earlier attempt), when it has one. */
  feedback: string | null;
}

/** What the demo worker works with: where, how it reports, and the signal that stops it. */
export interface DemoDeps {
  cwd: string;
  /** What is typed at its prompt (a terminal's), read a line at a time while it waits; none when it runs headless. */
  input?: NodeJS.ReadableStream;
  stop: AbortSignal;
  out: (line: string) => void;
  err: (line: string) => void;
}

/** A step that could not be done; its message is the one line printed on stderr. */
class StepFailed extends Error {}

export async function main(argv: string[]): Promise<number> {
  const once = parse(command, argv).values.once === true;
  const stopper = new AbortController();
  const stop = (signal: NodeJS.Signals) => stopper.abort(signal);
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  // An interactive agent stays up until told to stop; a signal listener alone keeps no runtime alive.
  const alive = setInterval(() => {}, 2 ** 30);
  try {
    return await run({ once }, {
      cwd: process.cwd(), stop: stopper.signal,
      // Only a terminal is a prompt: a headless worker's stdin is its prompt file, already read.
      ...(process.stdin.isTTY ? { input: process.stdin } : {}),
      out: (line) => writeStdoutVerbatim(line + "\n"),
      err: (line) => writeStderr(line + "\n"),
    });
  } finally {
    clearInterval(alive);
    process.off("SIGTERM", stop);
    process.off("SIGINT", stop);
  }
}

/** Does the work, waits unless `once`, and ends the episode; returns the exit code. */
export async function run(opts: { once: boolean }, deps: DemoDeps, env: Record<string, string | undefined> = process.env): Promise<number> {
  const { cwd, stop, out } = deps;
  let setup: DemoSetup;
  try {
    setup = readSetup(env);
  } catch (error) {
    deps.err(`demo worker: ${(error as Error).message}`);
    return 1;
  }
  const { header } = setup;
  const key = header.episodeKey;
  out(`demo worker for work item ${header.item}: ${setup.repo}#${header.issue} on ${header.branch}`);
  try {
    await robotArmy(cwd, ["episode", "start", "--key", key, "--client-pid", String(process.pid)]);
  } catch (error) {
    deps.err(`demo worker: ${(error as Error).message}`);
    return 1;
  }
  out(`episode started (key ${key})`);
  const note = (text: string, data: Record<string, unknown> = {}) =>
    robotArmy(cwd, ["ledger", "append", "note", "--key", key, "--data", JSON.stringify({ text, ...data })]);
  let delivered = false;
  try {
    const steps: Array<() => Promise<[string, Record<string, unknown>?]>> = [
      async () => {
        await robotArmy(cwd, ["episode", "busy", "--key", key]);
        return ["busy"];
      },
      async () => [`wrote ${writeNote(cwd, setup)}${setup.feedback ? ", with the feedback its prompt gives addressed" : ""}`],
      () => commit(cwd, setup),
      ...(setup.github === null ? [
        async (): Promise<[string]> => {
          delivered = true;
          return [`a rehearsal with no remote writes: ${header.branch} is not pushed and no pull request is opened`];
        },
      ] : [
        async (): Promise<[string]> => {
          await sh(cwd, ["git", "push", "--quiet", "-u", "origin", "HEAD"]);
          return [`pushed ${header.branch} to origin`];
        },
        async (): Promise<[string, Record<string, unknown>]> => {
          const pr = await openPullRequest(cwd, setup, setup.github!);
          delivered = true;
          return [`${pr.existed ? "found open" : "opened"} pull request #${pr.number}: ${pr.url}`, { pull_request: pr.number, url: pr.url }];
        },
      ]),
    ];
    for (const step of steps) {
      if (stop.aborted) break;
      const [line, data] = await step();
      out(line);
      await note(line, data);
    }
    if (!stop.aborted) {
      await robotArmy(cwd, ["episode", "idle", "--key", key]);
      out("idle");
      if (!opts.once) {
        const name = env.RA_SESSION_NAME;
        out(`waiting at the prompt (Ctrl-C${name ? ` or "robot-army session kill ${name}"` : ""} stops it)`);
        const stopped = new Promise((resolve) => stop.aborted ? resolve(undefined) : stop.addEventListener("abort", resolve, { once: true }));
        await (deps.input ? atPrompt(deps.input, stopped, { cwd, setup, key, out, note }) : stopped);
      }
    }
  } catch (error) {
    deps.err(`demo worker: ${(error as Error).message}`);
    await endEpisode(cwd, key, "failed", deps);
    return 1;
  }
  if (stop.aborted) out(`stopping (${stop.reason})`);
  const outcome = delivered ? "done" : "interrupted";
  if (!(await endEpisode(cwd, key, outcome, deps))) return 1;
  // The episode's record is meant to be committed, as a tidy agent commits its journal: the worktree is left clean.
  if (outcome === "done") {
    try {
      const saved = await commitRecords(cwd, setup);
      if (saved) out(saved);
    } catch (error) {
      deps.err(`demo worker: ${(error as Error).message}`);
      return 1;
    }
  }
  return 0;
}

/**
 * Reads what is typed at the prompt until `stopped`, one line at a time, as an agent takes
 * prompts: each is noted in the ledger (event `prompt`, as an agent's prompt hook notes it),
 * then worked on, busy meanwhile. Feedback robot-army typed in is answered with a commit that
 * says what it addressed (pushed when the prompt asks for pushes); anything else is noted.
 */
async function atPrompt(
  input: NodeJS.ReadableStream,
  stopped: Promise<unknown>,
  work: { cwd: string; setup: DemoSetup; key: string; out: (line: string) => void; note: (text: string, data?: Record<string, unknown>) => Promise<unknown> },
): Promise<void> {
  const { cwd, setup, key, out, note } = work;
  const lines = createInterface({ input, terminal: false });
  let queue = Promise.resolve();
  lines.on("line", (line) => {
    queue = queue.then(async () => {
      await robotArmy(cwd, ["ledger", "append", "prompt", "--key", key, "--data", JSON.stringify(promptNote(line))]);
      await robotArmy(cwd, ["episode", "busy", "--key", key]);
      const done = line.startsWith(ROBOT_ARMY_PROMPT) && line.includes("feedback came") ? await answerFeedback(cwd, setup, line) : `read a prompt of ${[...line].length} characters; nothing to do`;
      out(done);
      await note(done);
      await robotArmy(cwd, ["episode", "idle", "--key", key]);
      out("idle");
    }).catch((error: unknown) => out(`demo worker: ${(error as Error).message}`));
  });
  await stopped;
  lines.close();
  await queue;
}

/** Answers feedback: the note says what was asked, committed on the branch (and pushed when the prompt asks for pushes). */
async function answerFeedback(cwd: string, setup: DemoSetup, line: string): Promise<string> {
  const { header, github } = setup;
  const path = `notes/issue-${header.issue}.md`;
  // What was asked, without where it is kept in full (a file named for the typing, new each time).
  const asked = line.slice(ROBOT_ARMY_PROMPT.length).replace(/ All of it, in full: the file \S+ .*$/, "").replace(/\s+/g, " ").slice(0, 300);
  appendFileSync(join(cwd, path), `\n## Feedback addressed\n\n${asked}\n`);
  await sh(cwd, ["git", "add", "--", path]);
  const at = isoSeconds(now());
  await sh(cwd, ["git", ...(await identity(cwd)), "commit", "--quiet", "-m", `Address the feedback on issue #${header.issue}`, "--", path], {
    env: { GIT_AUTHOR_DATE: at, GIT_COMMITTER_DATE: at },
  });
  const sha = (await sh(cwd, ["git", "rev-parse", "--short", "HEAD"])).stdout.trim();
  if (github === null) return `addressed the feedback: committed ${sha} on ${header.branch}`;
  await sh(cwd, ["git", "push", "--quiet", "origin", `HEAD:refs/heads/${header.branch}`]);
  return `addressed the feedback: committed ${sha} and pushed it to ${header.branch}`;
}

/** Commits the journal's records (`.ai/repo/sessions/`), and pushes them when the prompt asks for pushes; undefined when there were none to commit. */
async function commitRecords(cwd: string, { header, github }: DemoSetup): Promise<string | undefined> {
  const dir = ".ai/repo/sessions";
  await sh(cwd, ["git", "add", "--", dir], { answer: true });
  const staged = await sh(cwd, ["git", "diff", "--cached", "--quiet", "--", dir], { answer: true });
  if (staged.code === 0) return undefined;
  const at = isoSeconds(now());
  await sh(cwd, ["git", ...(await identity(cwd)), "commit", "--quiet", "-m", `Record the episode of issue #${header.issue}`, "--", dir], {
    env: { GIT_AUTHOR_DATE: at, GIT_COMMITTER_DATE: at },
  });
  if (github === null) return `committed the episode's record on ${header.branch}`;
  await sh(cwd, ["git", "push", "--quiet", "origin", `HEAD:refs/heads/${header.branch}`]);
  return `committed and pushed the episode's record on ${header.branch}`;
}

/** Reads the prompt file and the settings it needs; anything missing is an Error naming it. */
export function readSetup(env: Record<string, string | undefined>): DemoSetup {
  const file = env.RA_PROMPT_FILE;
  if (!file) throw new Error("RA_PROMPT_FILE is not set; it names the file holding the worker's prompt");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(`Cannot read the prompt file "${file}": ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const header = promptHeader(text);
  const repo = env.RA_REPO || header.repo;
  if (!/^[\w.-]+\/[\w.-]+$/.test(repo)) throw new Error(`RA_REPO "${repo}" is not of the form owner/name`);
  const feedback = /\n## Feedback on this work\n\n([\s\S]*?)(?=\n## |$)/.exec(text)?.[1].trim() ?? null;
  return { header, repo, github: header.delivery === "pull-request" ? githubOf(env) : null, baseBranch: env.RA_BASE_BRANCH || undefined, feedback };
}

/** The API base and token a pull request is opened with; either missing is an Error naming it. */
function githubOf(env: Record<string, string | undefined>): { apiBase: string; token: string } {
  const apiBase = env.RA_GITHUB_API;
  if (!apiBase) throw new Error("RA_GITHUB_API is not set; it is the API base the pull request is opened on");
  const tokenFile = env.RA_GITHUB_TOKEN_FILE;
  if (!tokenFile) throw new Error("RA_GITHUB_TOKEN_FILE is not set; it names a 0600 file holding the token");
  return { apiBase, token: readTokenFile(tokenFile) };
}

/** Writes `notes/issue-<n>.md`; returns its path in the worktree. */
function writeNote(cwd: string, setup: DemoSetup): string {
  const { header, repo, github } = setup;
  const path = `notes/issue-${header.issue}.md`;
  mkdirSync(join(cwd, "notes"), { recursive: true });
  writeFileSync(join(cwd, path), [
    `# ${repo}#${header.issue}: ${header.title}`,
    "",
    `The robot-army demo worker took this issue as work item ${header.item}, on branch`,
    ...(github === null ? [
      `${header.branch}: it wrote this note and committed it, in a rehearsal with no remote`,
      "writes (nothing pushed, no pull request).",
    ] : [
      `${header.branch}: it wrote this note, committed and pushed it, and opened a pull`,
      "request that closes the issue.",
    ]),
    "",
    // Feedback its prompt gives (since an earlier attempt) is answered in the note, as feedback typed at its prompt is.
    ...(setup.feedback ? ["## Feedback addressed", "", setup.feedback.replace(/\s+/g, " ").slice(0, 300), ""] : []),
  ].join("\n"));
  return path;
}

/** Commits the note on the current branch, which must be the prompt's. */
async function commit(cwd: string, { header }: DemoSetup): Promise<[string]> {
  const branch = (await sh(cwd, ["git", "symbolic-ref", "--short", "-q", "HEAD"], { answer: true })).stdout.trim();
  if (branch !== header.branch) {
    throw new StepFailed(branch
      ? `HEAD is on branch "${branch}", not "${header.branch}" as the prompt says; nothing was committed`
      : `HEAD is detached, not on branch "${header.branch}" as the prompt says; nothing was committed`);
  }
  const path = `notes/issue-${header.issue}.md`;
  await sh(cwd, ["git", "add", "--", path]);
  const staged = await sh(cwd, ["git", "diff", "--cached", "--quiet", "--", path], { answer: true });
  if (staged.code === 0) return [`nothing new to commit on ${branch}`];
  // Dated by robot-army's clock (RA_NOW fixes it), so a rehearsal or a scenario commits the same commit every run.
  const at = isoSeconds(now());
  await sh(cwd, ["git", ...(await identity(cwd)), "commit", "--quiet", "-m", `Add a note for issue #${header.issue}`, "--", path], {
    env: { GIT_AUTHOR_DATE: at, GIT_COMMITTER_DATE: at },
  });
  const sha = (await sh(cwd, ["git", "rev-parse", "--short", "HEAD"])).stdout.trim();
  return [`committed ${sha} on ${branch}`];
}

/** Git's identity options: none when one is configured, else the demo worker's own. */
async function identity(cwd: string): Promise<string[]> {
  const email = (await sh(cwd, ["git", "config", "user.email"], { answer: true })).stdout.trim();
  if (email || process.env.GIT_COMMITTER_EMAIL || process.env.EMAIL) return [];
  return ["-c", "user.name=robot-army demo worker", "-c", "user.email=demo-worker@robot-army.invalid"];
}

/** Opens the pull request for the current branch, or finds the one already open for it. */
async function openPullRequest(cwd: string, setup: DemoSetup, at: { apiBase: string; token: string }): Promise<{ number: number; url: string; existed: boolean }> {
  const { header } = setup;
  const [owner, repo] = setup.repo.split("/");
  const base = setup.baseBranch ?? await originHead(cwd);
  const { Octokit } = await import("@octokit/rest");
  const silent = { debug() {}, info() {}, warn() {}, error() {} };
  const github = new Octokit({ baseUrl: at.apiBase, auth: at.token, log: silent });
  try {
    const open = await github.rest.pulls.list({ owner, repo, state: "open", head: `${owner}:${header.branch}` });
    if (open.data[0]) return { number: open.data[0].number, url: open.data[0].html_url, existed: true };
    const made = await github.rest.pulls.create({
      owner, repo, base, head: header.branch,
      title: `${header.title} (#${header.issue})`,
      body: `Closes #${header.issue}\n\nOpened by the robot-army demo worker for work item ${header.item}.\n`,
    });
    return { number: made.data.number, url: made.data.html_url, existed: false };
  } catch (error) {
    const e = error as { status?: number; message?: string };
    throw new StepFailed(`Could not open a pull request on ${setup.repo} at "${at.apiBase}": ${e.status ? `${e.status} ` : ""}${oneLine(e.message ?? String(error))}`);
  }
}

/** The branch origin's HEAD names (`origin/main` -> `main`). */
async function originHead(cwd: string): Promise<string> {
  const ref = (await sh(cwd, ["git", "symbolic-ref", "--short", "-q", "refs/remotes/origin/HEAD"], { answer: true })).stdout.trim();
  if (!ref.startsWith("origin/")) throw new StepFailed("Cannot tell the base branch: origin has no HEAD; set RA_BASE_BRANCH");
  return ref.slice("origin/".length);
}

/** Ends the episode; false (with a line on stderr) when that failed. */
async function endEpisode(cwd: string, key: string, outcome: string, deps: DemoDeps): Promise<boolean> {
  try {
    // One word: dax 0.44 leaves a bare "done" unquoted, and its shell parser refuses it as a reserved word.
    await robotArmy(cwd, ["episode", "end", "--key", key, `--outcome=${outcome}`]);
    deps.out(`episode ended (outcome ${outcome})`);
    return true;
  } catch (error) {
    deps.err(`demo worker: ${(error as Error).message}`);
    return false;
  }
}

/** Runs `robot-army` itself, on the runtime running this worker, as `npx robot-army` would. */
function robotArmy(cwd: string, args: string[]) {
  const entry = isDeno() ? ownScript("scripts", "robot-army") : join(PROJECT_ROOT, "bin", "robot-army.mjs");
  return sh(cwd, [...runtimeArgv(entry), ...args], { shown: `robot-army ${args.slice(0, 2).join(" ")}` });
}

let dax: typeof import("dax-sh").$ | undefined;

/**
 * Runs an argv through dax, quietly. A non-zero exit fails the step with the command's own
 * last words, unless `answer` says the exit code is the caller's to read.
 */
async function sh(cwd: string, argv: string[], options: { answer?: boolean; shown?: string; env?: Record<string, string> } = {}) {
  dax ??= (await import("dax-sh")).$;
  const result = await dax`${argv}`.cwd(cwd).env(options.env ?? {}).quiet().noThrow();
  if (result.code !== 0 && !options.answer) {
    const words = oneLine(result.stderr) || oneLine(result.stdout) || `exit ${result.code}`;
    throw new StepFailed(`${options.shown ?? argv.join(" ")} failed: ${words}`);
  }
  return result;
}

/** Text on one line, at most 300 characters, so a failure stays one line. */
function oneLine(text: string): string {
  const joined = text.split("\n").map((line) => line.trim()).filter(Boolean).join("; ");
  return joined.length > 300 ? joined.slice(0, 297) + "..." : joined;
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
