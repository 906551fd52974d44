/**
 * Builders for the real things tests and scenario setups stand on: temp dirs and git
 * repositories with commits. Nothing here is mocked; every repository is a real one.
 */
import { cpSync, mkdtempSync, realpathSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";

/** A fresh, empty temp dir (its real path, so output normalisation sees one spelling). */
export function makeTempDir(prefix = "robot-army-"): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

/**
 * Removes a temp dir made by `makeTempDir`. A process ending as it is removed (a worker's
 * holder recording its exit when its terminal server went) can add a file between the
 * listing and the last rmdir: the removal is tried again a few times rather than failing.
 */
export function removeTempDir(dir: string): void {
  for (let attempt = 1; ; attempt++) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
      return;
    } catch (error) {
      // Deno's node:fs does not retry as maxRetries asks ("ENOTEMPTY: directory not empty, rm"): the same retries, here.
      const code = (error as { code?: string }).code ?? /^(ENOTEMPTY|EBUSY|EPERM)\b/.exec((error as Error).message)?.[1];
      if (attempt >= 20 || (code !== "ENOTEMPTY" && code !== "EBUSY" && code !== "EPERM")) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
}

/** Runs `fn` in a fresh temp dir and removes the dir afterwards, whether `fn` fails or not. */
export async function withTempDir(fn: (dir: string) => void | Promise<void>): Promise<void> {
  const dir = makeTempDir();
  try {
    await fn(dir);
  } finally {
    removeTempDir(dir);
  }
}

/** Runs git in a directory with a fixed identity; throws with git's stderr on failure. */
export function git(cwd: string, ...args: string[]): string {
  const result = spawnSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, ...GIT_IDENTITY },
  });
  if (result.status !== 0) {
    throw new Error(`git ${args.join(" ")} failed in "${cwd}": ${result.stderr.trim()}`);
  }
  return result.stdout.trim();
}

const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: "Robot Army Test",
  GIT_AUTHOR_EMAIL: "test@robot-army.invalid",
  GIT_COMMITTER_NAME: "Robot Army Test",
  GIT_COMMITTER_EMAIL: "test@robot-army.invalid",
  GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z",
  GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z",
};

/** A git repository at `dir` on branch `main` with one commit (a README). */
export function makeGitRepo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  git(dir, "init", "--quiet", "--initial-branch=main");
  git(dir, "config", "user.name", GIT_IDENTITY.GIT_AUTHOR_NAME);
  git(dir, "config", "user.email", GIT_IDENTITY.GIT_AUTHOR_EMAIL);
  commitFile(dir, "README.md", "# A repository robot-army works in\n", "Start the project");
  return dir;
}

/** A repository built once for a test file to copy per test; see `repoTemplate`. */
export interface RepoTemplate {
  /** A fresh real repository (branch main, one commit) at `<dir>/repo`; returns its path. */
  copy(dir: string): string;
  /** Removes the template; call it once the file's tests are done. */
  remove(): void;
}

/** A repository (branch main, one commit) built once, for tests to copy instead of running git to build their own. */
export function repoTemplate(): RepoTemplate {
  const templates = makeTempDir();
  const template = makeGitRepo(join(templates, "repo"));
  rmSync(join(template, ".git/hooks"), { recursive: true, force: true }); // only samples, and slow to copy
  return {
    copy(dir) {
      const repo = join(dir, "repo");
      cpSync(template, repo, { recursive: true });
      return repo;
    },
    remove() {
      removeTempDir(templates);
    },
  };
}

/** Writes a file and commits it; returns the new commit's SHA. */
export function commitFile(repo: string, path: string, content: string, message: string): string {
  const full = join(repo, path);
  mkdirSync(dirname(full), { recursive: true });
  writeFileSync(full, content);
  git(repo, "add", "--", path);
  git(repo, "commit", "--quiet", "-m", message);
  return git(repo, "rev-parse", "HEAD");
}

/** The pid of a process that has already exited (for "its client is gone" cases). */
export function exitedPid(): number {
  const result = spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" });
  const pid = Number(result.stdout.trim());
  if (!Number.isInteger(pid) || pid <= 1) throw new Error(`Could not learn an exited pid: ${JSON.stringify(result.stdout)}`);
  return pid;
}

/**
 * Sends `signal` to a child by its pid; false when it is already gone. Not `child.kill`:
 * Deno's node:child_process records a child it was asked to kill as ended by that signal
 * (its `exit` and `close` report code null and the signal) even when the child handled the
 * signal and exited 0, so an exit status read after `child.kill` on Deno is not the child's.
 * Signalled by its pid, the child's own exit status is reported on both runtimes.
 */
export function signalChild(child: ChildProcess, signal: NodeJS.Signals): boolean {
  try {
    process.kill(child.pid!, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
}

/** Where an `originClone` copy's three repositories are: a seed that pushed `main` to a bare origin, and a clone of origin. */
export interface OriginClone {
  dir: string;
  seed: string;
  origin: string;
  clone: string;
}

/**
 * The three repositories branch and worktree tests stand on, built once for a test file (a
 * dozen git calls) and copied per test, with `prepare` run once on the template; `remove`
 * once the file's tests are done. Each copy's clone has its own folder's origin.
 */
export function originCloneTemplate(prepare: (t: OriginClone) => void = () => {}): { copy(dir: string): OriginClone; remove(): void } {
  const templates = makeTempDir();
  const at = (dir: string): OriginClone => ({ dir, seed: join(dir, "seed"), origin: join(dir, "origin.git"), clone: join(dir, "clone") });
  const t = at(templates);
  makeGitRepo(t.seed);
  git(templates, "init", "--quiet", "--bare", "--initial-branch=main", t.origin);
  git(t.seed, "push", "--quiet", t.origin, "main");
  git(templates, "clone", "--quiet", t.origin, t.clone);
  prepare(t);
  // Only samples, and slow to copy.
  for (const repo of ["seed/.git", "origin.git", "clone/.git"]) rmSync(join(templates, repo, "hooks"), { recursive: true, force: true });
  return {
    copy(dir) {
      cpSync(templates, dir, { recursive: true });
      const copied = at(dir);
      git(copied.clone, "remote", "set-url", "origin", copied.origin);
      return copied;
    },
    remove: () => removeTempDir(templates),
  };
}
