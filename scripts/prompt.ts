/**
 * `robot-army prompt <id>`: prints the prompt a worker for a work item starts with, as
 * dispatch composes it: the issue, the item, its branch and worktree, how to keep the
 * journal, how to deliver the work at the effect level, and the repository's own
 * instructions (read from the clone; lib/dispatch/repo-instructions.ts).
 *
 * A read never creates anything: with no database yet, no item exists.
 */
import type { CommandDef, Write } from "../lib/cli.ts";
import { JSON_OPTION, parse, printVerbatim, runMain, writeStdout } from "../lib/cli.ts";
import { worktreePath } from "../lib/boundaries/worktrees.ts";
import { worktreeRoot } from "../lib/work-items/worktree-root.ts";
import type { Config } from "../lib/config.ts";
import { CONFIG_OPTION, configFromArgs } from "../lib/config.ts";
import { branchName } from "../lib/work-items/branch-name.ts";
import { composePrompt, UNKNOWN_BASE } from "../lib/dispatch/prompt.ts";
import { cloneInstructions } from "../lib/dispatch/repo-instructions.ts";
import { deliveryAt, EFFECT_LEVEL_OPTIONS, resolveLevel } from "../lib/effects.ts";
import type { EffectLevel } from "../lib/effects.ts";
import type { PromptInput } from "../lib/dispatch/prompt.ts";
import { stateDirPath } from "../lib/state-dir.ts";
import { withExistingStore } from "../lib/store/open.ts";
import type { Store } from "../lib/store/open.ts";
import { itemIdArgument } from "../lib/work-items/argument.ts";
import { requireItem } from "../lib/work-items/queries.ts";
import { printable } from "../lib/printable.ts";
import { promptWords, trustRulesOf, wordsHash } from "../lib/intake/issue-trust.ts";
import { knownBaseBranch } from "../lib/repos/base-branch.ts";

/** How the command is called; its help is generated from this. */
export const command: CommandDef = {
  name: "prompt",
  summary: "Print the prompt a worker for a work item starts with",
  usage: "prompt <id> [--effect-level L] [--config FILE] [--json]",
  description: `\
Prints the prompt dispatch gives the worker of a work item: the issue (repository and
number, title, and its body quoted as the author's words), the item id, the branch and
worktree, how the worker keeps the journal (episode start, busy, idle and end, ledger
notes), how it finishes, and the repository's own instructions.

How it finishes follows the effect level (--effect-level, default: the daemon's, from the config):
at live it commits, pushes and opens a pull request whose body says Closes #N; below
live, a rehearsal with no remote writes, it only commits on its branch and says it is
done (you push).

The repository's own instructions are .claude/robot-army.md and
.robot-army/instructions.md as committed on its base branch, each under its own heading
and cut at 16 KiB; a file only in a working tree is never read. They are read from the
clone: where the item's branch left origin/<base>, or, before it has a branch,
origin/<base> as last fetched (a dispatch fetches first).

When someone other than github.author changed the title or body and you have not
approved them, the prompt says so, with the command that approves exactly the title and
body it shows ("robot-army approve <id> --sha256 <hash>"); --json gives their sha256.

The worker receives it in a file only its owner can read, never in its command line or
environment. An unknown item is exit 3.
`,
  options: { ...EFFECT_LEVEL_OPTIONS, config: CONFIG_OPTION, json: JSON_OPTION },
  positionals: { min: 1, max: 1 },
  examples: ["robot-army prompt 12", "robot-army prompt 12 --effect-level live", "robot-army prompt 12 --json"],
};

/** What `prompt` reads: the config (where worktrees go), the state dir and the store, if there is one. */
export interface PromptDeps {
  config: Config;
  stateDir: string;
  store: Store | undefined;
  write: Write;
}

/** Parses argv, opens what the command reads, and runs it. */
export async function main(argv: string[]): Promise<number> {
  const args = parse(command, argv);
  // The prompt is printed as the worker is given it, its times included.
  printVerbatim();
  const id = itemIdArgument(command, args);
  const config = await configFromArgs(args);
  const stateDir = stateDirPath();
  return await withExistingStore(stateDir, async (store) => {
    return await run({ id, json: args.values.json === true, level: resolveLevel(args, config) }, { config, stateDir, store, write: writeStdout });
  });
}

/** Prints the item's prompt at an effect level, or its parts as JSON; an unknown item is a PreconditionError. */
export async function run(opts: { id: number; json: boolean; level: EffectLevel }, deps: PromptDeps): Promise<number> {
  const item = requireItem(deps.store, opts.id);
  const branch = branchName(item.issue, item.title);
  const clone = deps.config.repos[item.repo];
  const base = knownBaseBranch(deps.store!, deps.config, item.repo);
  const input: PromptInput = {
    item: item.id, repo: item.repo, issue: item.issue, title: item.title, body: item.body,
    branch,
    worktree: worktreePath(worktreeRoot(deps.config, deps.stateDir), item.repo, item.issue),
    episodeKey: `item-${item.id}`,
    words: promptWords(deps.store!, item, trustRulesOf(deps.config.github)),
    level: opts.level,
    instructions: !clone
      ? { base: UNKNOWN_BASE, unreadable: `repository "${item.repo}" is not in the config` }
      : base
      ? await cloneInstructions(clone.path, branch, base)
      : { base: UNKNOWN_BASE, unreadable: `repository "${item.repo}" is not onboarded, so its default branch is not known: robot-army onboard ${item.repo}` },
  };
  const prompt = composePrompt(input);
  if (opts.json) {
    const { item: id, repo, issue, branch, worktree, episodeKey } = input;
    const { held, approve } = input.words;
    const { instructions } = input;
    deps.write(JSON.stringify({
      item: id, repo, issue, branch, worktree, episode_key: episodeKey, sha256: wordsHash(item), held, approve: approve ?? null,
      level: opts.level, delivery: deliveryAt(opts.level),
      instructions: instructions.unreadable === undefined
        ? { base: instructions.base, commit: instructions.commit, files: instructions.files.map(({ path, bytes, truncated }) => ({ path, bytes, truncated })), unreadable: null }
        : { base: instructions.base, commit: null, files: [], unreadable: instructions.unreadable },
      prompt,
    }, null, 2) + "\n");
  } else {
    // The prompt quotes the issue's body as GitHub gave it: escaped, it cannot drive the owner's terminal.
    deps.write(printable(prompt, { lines: true }));
  }
  return 0;
}


if (import.meta.main) await runMain(main, process.argv.slice(2));
