/**
 * `robot-army worktree list|remove|prune`: the disk robot-army's worktrees take, and
 * reclaiming it under the guards of DESIGN rule 2. `list` shows every worktree robot-army
 * made or that sits in its worktree root; `remove <id>` removes an item's worktree and
 * branch as cleanup would; `remove <path>` one no item claims; `prune` clears git's record
 * of worktrees whose directory is gone, per onboarded clone.
 */
import { basename, resolve } from "node:path";
import { ask as askAtTerminal, asJson, asLines, runMain, runSubcommand, stderrIsTerminal, writeStderr, writeStdout } from "../lib/cli.ts";
import type { Ask, CommandDef, FamilyDef, ParsedArgs, Write } from "../lib/cli.ts";
import { configFromArgs } from "../lib/config.ts";
import type { Config } from "../lib/config.ts";
import { CONFIG_OPTION, checkConfigOption } from "../lib/config-path.ts";
import { EFFECT_LEVEL_OPTIONS, resolveLevel, SIMULATED_GITHUB, wireEffects } from "../lib/effects.ts";
import type { Effects } from "../lib/effects.ts";
import { EXIT, PreconditionError } from "../lib/errors.ts";
import { printable } from "../lib/printable.ts";
import { ensureSessionRoot } from "../lib/sessions/records.ts";
import { ensureStateDir } from "../lib/state-dir.ts";
import { appendAudit } from "../lib/store/audit.ts";
import { withStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { formatSize } from "../lib/cleanup/disk-usage.ts";
import { listWorktreesOnDisk } from "../lib/cleanup/worktree-list.ts";
import type { ListedWorktree } from "../lib/cleanup/worktree-list.ts";
import { describePrune, pruneWorktrees } from "../lib/cleanup/worktree-prune.ts";
import { removeItemWorktree } from "../lib/cleanup/remove-item.ts";
import { removeUnclaimed, unclaimedTarget } from "../lib/cleanup/unclaimed.ts";
import type { UnclaimedTarget } from "../lib/cleanup/unclaimed.ts";
import type { CheckoutRemoval } from "../lib/cleanup/checkout.ts";

const list: CommandDef = {
  name: "worktree list",
  summary: "List robot-army's worktrees with their size, condition and cleanup state",
  usage: "worktree list [--json] [--config FILE]",
  description:
    "Every worktree robot-army made (the one each work item's newest session records) and every\n" +
    "directory in its worktree root: path, item (or none), branch, size on disk, condition and cleanup\n" +
    "state, then the total. Conditions: clean, dirty (uncommitted or untracked files), unknown (git\n" +
    "could not say: never taken for clean), missing (its directory is gone) and unclaimed (no item\n" +
    "claims it: \"robot-army worktree remove <path>\" removes it). Sizes count the blocks on disk of\n" +
    "everything below, symbolic links not followed; a size marked + left out what could not be read.",
  options: { json: { type: "boolean", description: "Print JSON instead of text" }, config: CONFIG_OPTION },
  examples: ["robot-army worktree list", "robot-army worktree list --json"],
};

const remove: CommandDef = {
  name: "worktree remove",
  summary: "Remove an item's worktree and branch, or a worktree no item claims",
  usage: "worktree remove <id | path> [--force] [--effect-level L] [--config FILE]",
  description:
    "With a work item's id: its worktree and branch, under cleanup's guards, leaving the record cleanup\n" +
    "would on a finished item. With a path: a worktree no item claims, provided it is inside the\n" +
    "worktree root, an onboarded clone lists it as a worktree, and no live worker is in it (asked of\n" +
    "the session root's records by pid and start time; a record that cannot be read refuses). A path\n" +
    "an item claims is refused with the item's id to use instead. Git's refusal over uncommitted or\n" +
    "untracked work stands, and the branch is kept unless origin, asked live, has every commit of it.\n" +
    "--force overrides both, only when typed at a terminal and once you type the directory's name; for\n" +
    "an item it also overrides an open session row, once you type the item's id (the path form never\n" +
    "overrides a live worker). No stdin, Ctrl-C or a wrong answer removes nothing and is recorded in\n" +
    "the audit log. Below effect level local nothing is touched: it says what it would remove.",
  options: {
    force: { type: "boolean", description: "Remove even over uncommitted work and unproven commits (only at a terminal, after you confirm)" },
    ...EFFECT_LEVEL_OPTIONS,
    config: CONFIG_OPTION,
  },
  positionals: { min: 1, max: 1 },
  examples: ["robot-army worktree remove 12", "robot-army worktree remove ~/.local/state/robot-army/worktrees/demo/widgets/issue-9"],
};

const prune: CommandDef = {
  name: "worktree prune",
  summary: "Clear git's record of worktrees whose directory is gone, per onboarded clone",
  usage: "worktree prune [--effect-level L] [--config FILE]",
  description:
    "Runs git worktree prune in each onboarded clone and says per repository what it pruned (what git\n" +
    "still lists afterwards is named, never reported pruned). Each prune is written to the audit log\n" +
    "(worktree.prune). Below effect level local git is not asked: each repository is not checked.",
  options: { ...EFFECT_LEVEL_OPTIONS, config: CONFIG_OPTION },
  examples: ["robot-army worktree prune"],
};

/** The `worktree` family. */
export const command: FamilyDef = {
  name: "worktree",
  summary: "List, remove and prune robot-army's worktrees",
  subcommands: {
    list: { command: list, run: (args) => withWorktreeDeps(args, (deps) => runList({ json: args.values.json === true }, deps)) },
    remove: { command: remove, run: (args) => runRemoveCommand(args) },
    prune: { command: prune, run: (args) => withWorktreeDeps(args, (deps) => runPrune({}, deps)) },
  },
};

/** Routes argv to the subcommand. */
export function main(argv: string[]): Promise<number> {
  return runSubcommand(command, argv);
}

/** What the `worktree` subcommands work with: the store, config, state dir, session root and effects, and where output, progress and questions go. */
export interface WorktreeDeps {
  store: Store;
  config: Config;
  stateDir: string;
  sessionRoot: string;
  effects: Effects;
  write: Write;
  /** Where progress goes (stderr at a terminal only; nowhere otherwise). */
  progress?: Write;
  ask: Ask;
  /** Whether stdin is a terminal: --force is taken only there. */
  atTerminal: boolean;
}

/** Opens what a subcommand reads, at the effect level it was given, and runs it; the store is closed afterwards. */
async function withWorktreeDeps(args: ParsedArgs, fn: (deps: WorktreeDeps) => Promise<number>): Promise<number> {
  checkConfigOption(args);
  const config = await configFromArgs(args);
  const stateDir = ensureStateDir();
  // No GitHub write is among these commands' effects: the level decides only whether worktrees are real.
  const effects = wireEffects(resolveLevel(args, config), { github: SIMULATED_GITHUB });
  const progress = stderrIsTerminal() ? writeStderr : undefined;
  return await withStore(stateDir, (store) =>
    fn({ store, config, stateDir, sessionRoot: ensureSessionRoot(), effects, write: writeStdout, progress, ask: (q) => askAtTerminal(q), atTerminal: process.stdin.isTTY === true }));
}

/** Lists the worktrees and the total; progress goes to `deps.progress` while a large tree is measured. */
export async function runList(opts: { json: boolean }, deps: WorktreeDeps): Promise<number> {
  let shown = false;
  const onProgress = deps.progress ? (path: string, sofar: { bytes: number; entries: number }) => {
    shown = true;
    deps.progress!(`\rmeasuring ${path}: ${sofar.entries} entries, ${formatSize(sofar.bytes)} so far\x1b[K`);
  } : undefined;
  const listing = await listWorktreesOnDisk(deps, { onProgress });
  if (shown) deps.progress!("\r\x1b[K");
  if (opts.json) {
    deps.write(asJson({
      worktrees: listing.worktrees.map((w) => ({ path: w.path, item: w.item, repo: w.repo, branch: w.branch, size_bytes: w.bytes, size_complete: w.unreadable === 0, condition: w.condition, cleanup_state: w.cleanup })),
      total_bytes: listing.totalBytes,
    }));
    return EXIT.ok;
  }
  if (listing.worktrees.length === 0) {
    deps.write(asLines("no worktrees recorded, and none in the worktree root"));
    return EXIT.ok;
  }
  const count = listing.worktrees.length;
  deps.write(asLines(...listing.worktrees.map(describeListed), `total: ${count} worktree${count === 1 ? "" : "s"}, ${formatSize(listing.totalBytes)}`));
  return EXIT.ok;
}

function describeListed(w: ListedWorktree): string {
  const item = w.item === null ? "no item" : `item ${w.item}`;
  const size = w.bytes === null ? "-" : `${formatSize(w.bytes)}${w.unreadable ? "+" : ""}`;
  return `${printable(w.path)}  ${item}  ${w.branch ? printable(w.branch) : "(no branch)"}  ${size}  ${w.condition}  cleanup: ${w.cleanup ?? "none"}`;
}

/** What `worktree remove` was asked for: an item's id or a path, and whether --force was given. */
export interface RemoveOptions {
  target: { item: number } | { path: string };
  force: boolean;
}

/** `--force` from a script is refused before anything is opened. */
async function runRemoveCommand(args: ParsedArgs): Promise<number> {
  const opts: RemoveOptions = { target: removeTarget(args.positionals[0]), force: args.values.force === true };
  return await withWorktreeDeps(args, (deps) => runRemove(opts, deps));
}

/** A whole number names a work item; anything else is a path. */
export function removeTarget(word: string): RemoveOptions["target"] {
  return /^\d+$/.test(word) ? { item: Number(word) } : { path: resolve(word) };
}

/** Removes what it was given under its guards and says what became of the worktree and branch; exit 3 when a guard kept either. */
export async function runRemove(opts: RemoveOptions, deps: WorktreeDeps): Promise<number> {
  if ("item" in opts.target) {
    if (opts.force && !deps.atTerminal) throw forceNeedsTerminal(`work item ${opts.target.item}`);
    return await removeItem(opts.target.item, opts.force, deps);
  }
  const target = await unclaimedTarget(deps, opts.target.path);
  if (opts.force && target.session.live === false) {
    const refusal = await confirmForce(deps, target);
    if (refusal) {
      appendAudit(deps.store, { kind: "worktree.remove", repo: target.repo, body: { path: target.path, branch: target.branch, force: true, gave_up: refusal, removed: false } });
      throw new PreconditionError(`Not removed (${refusal}): nothing was touched in "${target.path}"`);
    }
  }
  const removal = await removeUnclaimed(deps, target, { force: opts.force && target.session.live === false });
  deps.write(asLines(...describeRemoval(target.path, target.branch, removal, deps.effects)));
  const worktreeGone = ["removed", "absent", "simulated"].includes(removal.worktree.status);
  const branchGone = ["deleted", "absent", "simulated"].includes(removal.branch.status);
  return worktreeGone && branchGone ? EXIT.ok : EXIT.precondition;
}

/** `worktree remove <id>`: cleanup's decision for a finished item (its record shown), the bare removal for an unfinished one. */
async function removeItem(itemId: number, force: boolean, deps: WorktreeDeps): Promise<number> {
  const { item, path, branch, removal, record } = await removeItemWorktree(deps, itemId, { force, ask: deps.ask });
  const lines = removal
    ? describeRemoval(path, branch, removal, deps.effects)
    : [`kept worktree ${path} (session): ${record?.reason ?? "a session of it is open"}`, `branch ${branch} not attempted: its worktree was kept`];
  if (record) lines.push(`work item ${item.id} (${item.repo}#${item.issue}, ${item.state}): cleanup state ${record.state}`);
  else lines.push(`work item ${item.id} (${item.repo}#${item.issue}) is ${item.state}: no cleanup record is written, so retry or reset can give it a fresh worktree`);
  deps.write(asLines(...lines));
  if (record) return record.state === "done" ? EXIT.ok : EXIT.precondition;
  const gone = removal !== null && ["removed", "absent", "simulated"].includes(removal.worktree.status) && ["deleted", "absent", "simulated"].includes(removal.branch.status);
  return gone ? EXIT.ok : EXIT.precondition;
}

/** Asks the owner to type the directory's name; why it gave up, or undefined once confirmed. */
async function confirmForce(deps: WorktreeDeps, target: UnclaimedTarget): Promise<string | undefined> {
  if (!deps.atTerminal) return "not at a terminal";
  const name = basename(target.path);
  const answer = await deps.ask(
    `--force removes "${target.path}" even with uncommitted or untracked work in it, and deletes branch ${target.branch} even with commits origin does not have.\n` +
    `Type the directory's name (${name}) to confirm: `,
  );
  if ("unanswered" in answer) return answer.unanswered;
  return answer.line.trim() === name ? undefined : "answer did not match";
}

/** What became of the worktree and the branch, in the words of DESIGN rule 7: "would" below local, "removed" only when gone. */
export function describeRemoval(path: string, branch: string, removal: CheckoutRemoval, effects: Pick<Effects, "level">): string[] {
  const lines: string[] = [];
  const w = removal.worktree;
  if (w.status === "removed") lines.push(`removed worktree ${path}`);
  else if (w.status === "absent") lines.push(`worktree ${path} was already gone`);
  else if (w.status === "simulated") lines.push(`would remove worktree ${path}`);
  else if ("reason" in w) lines.push(`kept worktree ${path} (${w.code}): ${w.reason}`);
  const b = removal.branch;
  if (b.status === "deleted") lines.push(`deleted branch ${branch}${removal.proof ? ` (${removal.proof})` : ""}`);
  else if (b.status === "absent") lines.push(`branch ${branch} was already gone`);
  else if (b.status === "simulated") lines.push(`would delete branch ${branch}`);
  else if (b.status === "not_attempted") lines.push(`branch ${branch} not attempted: its worktree was kept`);
  else if ("reason" in b) lines.push(`kept branch ${branch}: ${b.reason}`);
  for (const record of removal.archived ?? []) lines.push(`archived episode record ${record.file} in ${record.archive}`);
  if (removal.bundle) lines.push(`its commits are bundled in ${removal.bundle}`);
  if (removal.restore) lines.push(`restore it with: ${removal.restore}`);
  if (removal.simulated) lines.push(`effect level ${effects.level}: nothing was touched; version control is real from local`);
  return lines;
}

/** Prunes each onboarded clone and says what it pruned, repository by repository. */
export async function runPrune(_opts: Record<string, never>, deps: WorktreeDeps): Promise<number> {
  const results = await pruneWorktrees(deps);
  if (results.length === 0) {
    deps.write(asLines("no onboarded repositories: nothing to prune"));
    return EXIT.ok;
  }
  deps.write(asLines(...results.flatMap(describePrune)));
  return results.some((r) => r.status === "failed") ? EXIT.failed : EXIT.ok;
}

function forceNeedsTerminal(what: string): PreconditionError {
  return new PreconditionError(`--force removes work, so it is taken only when typed at a terminal; stdin is not one, so nothing of ${what} was touched`);
}

if (import.meta.main) await runMain(main, process.argv.slice(2));
