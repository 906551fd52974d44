/**
 * The effect level, read here and nowhere else: `plan` < `local` < `no-remote` < `live`.
 * `wireEffects` turns it once into what is real (the GitHub writer, worktrees, sessions,
 * notifications); the rest of the code asks those, never the level. Below `live` GitHub
 * writes are simulated: they write nothing, the caller says `would ...`, and the audit log
 * records them with `simulated: true`.
 *
 * @example
 * const effects = effectsFor(args, config, { github: github.writer });
 * await commentOnIssue(store, effects, { repo, issue: 3, item: 7, body: "..." });
 */
import type { OptionDef, ParsedArgs } from "./cli.ts";
import { stringOption } from "./cli.ts";
import type { Config, EffectLevel } from "./config.ts";
import { EFFECT_LEVELS } from "./config.ts";
import { UsageError } from "./errors.ts";
import type { GitHubWriter } from "./boundaries/github-types.ts";
import { auditEffect } from "./store/audit.ts";
import type { Store } from "./store/open.ts";

export type { EffectLevel };

/** The config key the level is read from, once, when a daemon starts: a change to it takes effect at its next start. */
export const LEVEL_KEY = "daemon.effect_level";

/** The `--effect-level` option, for commands with outward effects: spread it into `options`. */
export const EFFECT_LEVEL_OPTIONS: Record<string, OptionDef> = {
  "effect-level": {
    type: "string",
    value: "L",
    description: "plan, local, no-remote or live (default: daemon.effect_level); below live nothing is written to GitHub",
  },
};

/** The level a command runs at: its `--effect-level`, else `daemon.effect_level`. */
export function resolveLevel(args: ParsedArgs, config: Config): EffectLevel {
  const flag = stringOption(args, "effect-level");
  if (flag === undefined) return config.daemon.effect_level;
  if (!(EFFECT_LEVELS as readonly string[]).includes(flag)) {
    throw new UsageError(`--effect-level must be one of ${EFFECT_LEVELS.join(", ")}, got "${flag}"`);
  }
  return flag as EffectLevel;
}

/** The effects of a command taking `EFFECT_LEVEL_OPTIONS`: `wireEffects` at the level its flag or the config chose. */
export function effectsFor(args: ParsedArgs, config: Config, boundaries: { github: GitHubWriter }): Effects {
  return wireEffects(resolveLevel(args, config), boundaries);
}

/**
 * Whether the daemon, at the level its config names, writes to GitHub (comments, and the
 * claims that need push): for a check that speaks of the daemon without wiring its effects.
 */
export function daemonWritesToGitHub(config: Config): boolean {
  return wireEffects(daemonLevel(config), { github: SIMULATED_GITHUB }).simulated === false;
}

/** The level the daemon runs at, as its config names it: what acts for the owner outside a command (the dashboard's buttons) acts at. */
export function daemonLevel(config: Config): EffectLevel {
  return config.daemon.effect_level;
}

/** What is real at a level; every field is decided here, once. */
export interface Effects {
  /** For reports only ("effect level: plan"); decide by the fields below, never by this. */
  readonly level: EffectLevel;
  /** True below `live`: rows made now are marked simulated, GitHub writes are printed as `would ...`. */
  readonly simulated: boolean;
  /** Real at `live`; below it, a writer that writes nothing and returns nulls. */
  readonly github: GitHubWriter;
  /** Real git worktrees (from `local`). */
  readonly worktrees: boolean;
  /** Real worker sessions and terminals (from `no-remote`). */
  readonly sessions: boolean;
  /** Real notifications (at `live`). */
  readonly notifications: boolean;
  /** The base branch fetched into the owner's clones before it is read (every level; never in a dry run, which changes nothing there). */
  readonly fetches: boolean;
  /** The owner's own agent configuration written when the owner asks (`robot-army trust`: Claude Code's trust answer), from `local`. */
  readonly ownerFiles: boolean;
  /** What a worker is asked to deliver: a pull request only where robot-army itself writes to GitHub (`live`), else commits only. */
  readonly delivery: Delivery;
}

/** What a worker's prompt asks it to deliver. */
export type Delivery = "pull-request" | "commit";

/** What a worker is asked to deliver at a level: it asks for nothing robot-army would not itself do there. */
export function deliveryAt(level: EffectLevel): Delivery {
  return level === "live" ? "pull-request" : "commit";
}

/**
 * Wires the boundaries for a level: the real GitHub writer only at `live`. A dry run
 * (`run --once --dry-run`) takes the level's items as its own (`simulated` as at that level)
 * and makes nothing real: GitHub writes, worktrees, sessions, notifications and the owner's
 * files are each only said (`would ...`), and the owner's clones are read as last fetched.
 */
export function wireEffects(level: EffectLevel, boundaries: { github: GitHubWriter }, options: { dryRun?: boolean } = {}): Effects {
  const rank = EFFECT_LEVELS.indexOf(level);
  if (rank < 0) throw new RangeError(`Unknown effect level "${String(level)}"`);
  const live = level === "live";
  const real = options.dryRun !== true;
  return Object.freeze({
    level,
    simulated: !live,
    github: live && real ? boundaries.github : SIMULATED_GITHUB,
    worktrees: real && rank >= EFFECT_LEVELS.indexOf("local"),
    sessions: real && rank >= EFFECT_LEVELS.indexOf("no-remote"),
    notifications: real && live,
    fetches: real,
    ownerFiles: real && rank >= EFFECT_LEVELS.indexOf("local"),
    delivery: deliveryAt(level),
  });
}

/** The GitHub writer below `live`: writes nothing, returns nulls. */
export const SIMULATED_GITHUB: GitHubWriter = Object.freeze({
  simulated: true,
  comment: async () => ({ id: null, url: null }),
  addLabels: async () => {},
  removeLabel: async () => {},
  createClaim: async () => ({ created: true, sha: null }),
  advanceClaim: async () => ({ moved: true, sha: null }),
  deleteClaim: async () => "deleted" as const,
});

/** A comment to post on an issue, and the work item it is about. */
export interface IssueComment {
  repo: string;
  issue: number;
  item?: number;
  body: string;
  /** Why it is posted, for the audit record (`queued`, `claimed`, ...). */
  purpose: string;
}

/** What became of a comment: posted (with its URL), or only described below `live`. */
export interface CommentResult {
  simulated: boolean;
  id: number | null;
  url: string | null;
}

/**
 * Posts (or, below `live`, only records) a comment between an audit intent and outcome of
 * kind `github.comment`, marked simulated below `live` (DESIGN rule 3). The comment ends
 * with its action's marker (commentMarker), so a crash between posting and the outcome can
 * be settled by finding it on the issue. The caller says `would comment on ...` when
 * `simulated` comes back true.
 */
export async function commentOnIssue(store: Store, effects: Effects, comment: IssueComment): Promise<CommentResult> {
  const writer = effects.github;
  // GitHub refuses a longer comment with 422: a long text is cut, with a note, before the marker.
  const text = fitComment(comment.body, MARKER_ROOM);
  const made = await auditEffect(
    store,
    {
      kind: "github.comment", repo: comment.repo, item: comment.item, simulated: writer.simulated,
      body: { issue: comment.issue, purpose: comment.purpose, comment: text, ...(text === comment.body ? {} : { cut_from: comment.body.length }) },
    },
    (actionId) => writer.comment(comment.repo, comment.issue, `${text}\n\n${commentMarker(actionId)}`),
    (result) => (writer.simulated ? { simulated: true } : { comment_id: result.id, url: result.url }),
  );
  return { simulated: writer.simulated, ...made };
}

/** The longest comment body GitHub accepts, in characters (a longer one is refused with 422). */
export const COMMENT_MAX_CHARACTERS = 65536;

/** Room kept for the blank line and the marker after a comment's text (a marker is under 100 characters). */
const MARKER_ROOM = 128;

/**
 * A comment's text cut to fit GitHub's limit with `room` characters to spare, ending with a
 * note that says it was cut and how much is not shown; a text that fits is returned as it is.
 * Lengths count UTF-16 code units, never fewer than GitHub's characters, and a cut never
 * splits a surrogate pair.
 * @example fitComment("x".repeat(70_000)).length <= COMMENT_MAX_CHARACTERS // true
 */
export function fitComment(text: string, room = 0): string {
  const limit = COMMENT_MAX_CHARACTERS - room;
  if (text.length <= limit) return text;
  const note = (shown: number) => `\n\n[robot-army cut this comment: ${text.length - shown} of ${text.length} characters are not shown; GitHub allows ${COMMENT_MAX_CHARACTERS}]`;
  let keep = limit - note(0).length;
  const last = text.charCodeAt(keep - 1);
  if (last >= 0xd800 && last <= 0xdbff) keep--;
  return text.slice(0, keep) + note(keep);
}

/**
 * The marker every comment robot-army posts ends with: an HTML comment (GitHub does not
 * show it) naming the comment's audit action, an identifier only (DESIGN rule 4).
 * @example commentMarker("0b7e0a52-…") // "<!-- robot-army:action 0b7e0a52-… -->"
 */
export function commentMarker(actionId: string): string {
  return `<!-- robot-army:action ${actionId} -->`;
}
