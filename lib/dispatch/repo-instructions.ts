/**
 * A repository's own instructions to its workers: `.claude/robot-army.md` and
 * `.robot-army/instructions.md`, read as committed on the base branch (never from a working
 * tree, so a file nobody committed never reaches a prompt), each cut to 16 KiB. Both count
 * towards the repository's trust fingerprint: a change to either waits for the owner to
 * onboard the repository again before anything is dispatched from it.
 *
 * @example
 * const at = await startingCommit(worktree.path, "HEAD", "main");
 * const instructions = await readRepoInstructions(worktree.path, "main", at);
 */
import { RobotArmyError } from "../errors.ts";
import { branchExists } from "../boundaries/branches.ts";
import { runGit, tail } from "../boundaries/run-git.ts";

/** The instruction files, in the order a prompt gives them. */
export const INSTRUCTION_FILES: readonly string[] = [".claude/robot-army.md", ".robot-army/instructions.md"];

/** The most of one instruction file a prompt holds, in bytes; the rest is cut with a note. */
export const INSTRUCTIONS_MAX_BYTES = 16 * 1024;

/** One instruction file as committed. */
export interface InstructionFile {
  /** Its path in the repository (one of INSTRUCTION_FILES). */
  path: string;
  /** Its text, cut to INSTRUCTIONS_MAX_BYTES (never inside a character). */
  text: string;
  /** Its whole size in bytes. */
  bytes: number;
  /** Whether `text` is only its first INSTRUCTIONS_MAX_BYTES. */
  truncated: boolean;
}

/**
 * What a prompt says of the repository's instructions: the files committed at one commit of
 * the base branch (none is an answer too), or why they could not be read.
 */
export type RepoInstructions =
  | { base: string; commit: string; files: InstructionFile[]; unreadable?: undefined }
  | { base: string; commit?: undefined; files?: undefined; unreadable: string };

/**
 * The commit of the base branch a branch started from: where `ref` meets `origin/<base>`.
 * A new worktree's HEAD is that commit; a worktree a worker has committed in still finds it,
 * so what the worker changed on its branch is never read as the repository's instructions.
 */
export async function startingCommit(cwd: string, ref: string, base: string): Promise<string> {
  const result = await runGit(cwd, ["merge-base", "--", ref, `refs/remotes/origin/${base}`]);
  const commit = result.stdout.trim();
  if (result.code !== 0 || !/^[0-9a-f]{40,64}$/.test(commit)) {
    throw new RobotArmyError(`Cannot tell where "${ref}" left the base branch "origin/${base}" in "${cwd}": ${tail(result.stderr) || `git merge-base exit ${result.code}`}`);
  }
  return commit;
}

/**
 * The instruction files committed at `commit`, in INSTRUCTION_FILES order; a file not
 * committed there is not among them. Only a regular file counts: a symbolic link or a folder
 * by that name is skipped, as its target is not what the owner approved.
 */
export async function readRepoInstructions(cwd: string, base: string, commit: string): Promise<RepoInstructions> {
  const listed = await runGit(cwd, ["ls-tree", "-z", "--full-tree", commit, "--", ...INSTRUCTION_FILES]);
  if (listed.code !== 0) throw new RobotArmyError(`Cannot list the instruction files at commit ${commit} in "${cwd}": ${tail(listed.stderr) || `exit ${listed.code}`}`);
  // `<mode> <type> <object>\t<path>`, one per NUL.
  const blobs = new Map<string, string>();
  for (const entry of listed.stdout.split("\0").filter(Boolean)) {
    const match = /^(100644|100755) blob ([0-9a-f]+)\t(.*)$/s.exec(entry);
    if (match) blobs.set(match[3], match[2]);
  }
  const files: InstructionFile[] = [];
  for (const path of INSTRUCTION_FILES) {
    const object = blobs.get(path);
    if (object === undefined) continue;
    const read = await runGit(cwd, ["cat-file", "blob", object]);
    if (read.code !== 0) throw new RobotArmyError(`Cannot read "${path}" at commit ${commit} in "${cwd}": ${tail(read.stderr) || `exit ${read.code}`}`);
    files.push(cut(path, read.stdoutBytes));
  }
  return { base, commit, files };
}

/** The file's text, cut to INSTRUCTIONS_MAX_BYTES at a character's boundary. */
function cut(path: string, bytes: Uint8Array): InstructionFile {
  const truncated = bytes.length > INSTRUCTIONS_MAX_BYTES;
  let end = truncated ? INSTRUCTIONS_MAX_BYTES : bytes.length;
  // Back off UTF-8 continuation bytes, so no character is split.
  if (truncated) while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  const text = new TextDecoder().decode(bytes.subarray(0, end));
  return { path, text, bytes: bytes.length, truncated };
}

/**
 * The instructions a worker on `branch` is, or would be, given, read in the clone at
 * `repoPath`: where the branch left `origin/<base>`, or `origin/<base>` as last fetched when
 * the branch is not made yet (a dispatch fetches first, so it may read a later commit). What
 * cannot be read is said, not thrown: `robot-army prompt` only shows the prompt.
 */
export async function cloneInstructions(repoPath: string, branch: string, base: string): Promise<RepoInstructions> {
  try {
    const ref = await branchExists(repoPath, branch) ? `refs/heads/${branch}` : `refs/remotes/origin/${base}`;
    return await readRepoInstructions(repoPath, base, await startingCommit(repoPath, ref, base));
  } catch (error) {
    return { base, unreadable: (error as Error).message };
  }
}
