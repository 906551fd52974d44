/**
 * Every kind of outward effect robot-army audits with an intent and an outcome (DESIGN
 * rule 3), what it touches, how long it may take before an intent with no outcome means a
 * crash cut it short, and where the evidence of what became of it can be read.
 *
 * `auditEffect` takes only these kinds, so a new effect cannot be written without being
 * listed here; the crash suite (`lib/crash/`) runs one crash case per kind and fails when a
 * kind has none, and the unfinished-effect sweep settles or reports each by this table.
 */

/** What an audit record is: a plain fact, or the before/after of an outward effect. */
export type AuditPhase = "intent" | "outcome" | "fact";

/** How an effect cut short is settled: from evidence that can be read, or reported for the owner. */
export type EffectEvidence =
  /** The comments, looked for by the marker the comment carries. */
  | "issue-comments"
  /** The worktree's folder and git's list of worktrees. */
  | "worktree"
  /** The managed session's record and the process table. */
  | "session-record"
  /** The file's old and new paths. */
  | "file"
  /** The clone's branch the intent names: gone, or still at the tip that was proven. */
  | "branch"
  /** The bundle file the intent names: whole at its path, or not there. */
  | "bundle"
  /** The terminal server the intent names, asked for the item's tabs by marker. */
  | "terminal"
  /** The archive's copies the intent names, read by their hashes, and the worktree's originals. */
  | "archive"
  /** The agent's config file the intent names, read for the folder's trust answer. */
  | "agent-trust"
  /** The reference on GitHub the intent names (an issue's claim, a host's heartbeat), and its commit's message (which names the action). */
  | "claim-ref"
  /** Nothing that can be read settles it: the owner is told. */
  | "none";

/** One effect kind. */
export interface EffectKind {
  /** What the effect does, in a few words, as a report names it. */
  what: string;
  /** Seconds after its intent past which an intent with no outcome is taken for cut short, when its writer cannot be checked. */
  timeoutSeconds: number;
  /**
   * Seconds after its intent before its evidence is read even when its writer is proven
   * gone: a request still on its way when the writer died can land a moment later, and
   * "not done" must not be concluded before it could have. An intent may name a longer wait
   * of its own, `settle_after_seconds` in its body (a launch whose configured timeout is
   * longer); its timeout is then at least as long too.
   */
  settleAfterSeconds?: number;
  evidence: EffectEvidence;
}

export const EFFECT_KINDS = {
  "github.comment": { what: "a comment on an issue", timeoutSeconds: 300, settleAfterSeconds: 60, evidence: "issue-comments" },
  // An issue's claim on GitHub (lib/work-items/issue-claims.ts): its reference is read back, and its commit's message
  // names the claim's action, so a claim made just before a crash is found and used, never left held for ever.
  "claim.create": { what: "an issue claimed on GitHub before a worker starts", timeoutSeconds: 120, settleAfterSeconds: 60, evidence: "claim-ref" },
  "claim.release": { what: "a finished item's claim on GitHub released", timeoutSeconds: 120, settleAfterSeconds: 60, evidence: "claim-ref" },
  // A host's heartbeat reference advanced (lib/daemon/host-heartbeats.ts): read back like a claim, by the action its commit names.
  "host.heartbeat": { what: "this host's heartbeat on GitHub advanced", timeoutSeconds: 120, settleAfterSeconds: 60, evidence: "claim-ref" },
  "worktree.create": { what: "a worktree made for a work item", timeoutSeconds: 900, evidence: "worktree" },
  "worktree.remove": { what: "a work item's worktree removed", timeoutSeconds: 300, evidence: "worktree" },
  // git's own bookkeeping of directories already gone: nothing on disk to read it back from, so the owner is told.
  "worktree.prune": { what: "a clone's records of vanished worktrees pruned", timeoutSeconds: 120, evidence: "none" },
  "bundle.write": { what: "a branch's commits written to a bundle before its deletion", timeoutSeconds: 600, evidence: "bundle" },
  "branch.delete": { what: "a branch proven on origin deleted at its proven tip", timeoutSeconds: 120, evidence: "branch" },
  // An item's episode records copied to its archive (verified) before they leave its worktree: a crash leaves each whole in one place or both.
  "records.archive": { what: "a finished item's episode records archived before its worktree's removal", timeoutSeconds: 120, evidence: "archive" },
  "bundle.remove": { what: "a deleted branch's bundle removed after cleanup.keep_bundles", timeoutSeconds: 60, evidence: "bundle" },
  // A launch hands the start to a child (`session run -d`, a tmux pane, a kitty window) that outlives a writer killed
  // mid-launch and writes the session's record only as it starts: "not launched" is not concluded before the launch
  // itself would have given up (daemon.confirm_timeout, 30s by default; a longer one is named in the intent).
  "session.launch": { what: "a worker session started", timeoutSeconds: 120, settleAfterSeconds: 60, evidence: "session-record" },
  "session.stop": { what: "a worker session stopped", timeoutSeconds: 120, evidence: "session-record" },
  "session.kill": { what: "a managed session killed by the owner", timeoutSeconds: 120, evidence: "session-record" },
  // A retirement cut after its signal leaves a worker still exiting (SIGTERM, then SIGKILL after its grace): "still
  // running" is not concluded before the stop itself would have given up, and an exit meanwhile is the retirement's.
  "session.retire": { what: "an idle worker of a done item retired", timeoutSeconds: 120, settleAfterSeconds: 15, evidence: "session-record" },
  "session.cancel": { what: "a worker session cancelled by the owner", timeoutSeconds: 120, evidence: "session-record" },
  "session.remove": { what: "a finished session's files removed", timeoutSeconds: 120, evidence: "session-record" },
  "session.remove-orphan": { what: "an orphaned session's files removed", timeoutSeconds: 120, evidence: "session-record" },
  "session.abandon": { what: "a session marked abandoned", timeoutSeconds: 120, evidence: "session-record" },
  "session.start": { what: "a respawned session's holder started", timeoutSeconds: 120, settleAfterSeconds: 60, evidence: "session-record" },
  "session.respawn": { what: "a session respawned", timeoutSeconds: 120, evidence: "session-record" },
  "session.mark-flapping": { what: "a session marked flapping", timeoutSeconds: 120, evidence: "session-record" },
  "spool.damaged": { what: "a damaged spool file set aside", timeoutSeconds: 60, evidence: "file" },
  "episode.recovered": { what: "an episode recovered in a journal", timeoutSeconds: 120, evidence: "none" },
  // A message handed to a channel (a webhook, Pushover) cannot be asked back from it: one cut short is reported, never sent again.
  "notification.send": { what: "a notification delivered to one channel", timeoutSeconds: 120, evidence: "none" },
  // What the owner typed at a worker's prompt from afar (`robot-army send`): no terminal keeps what was typed into it, so one cut short is reported.
  "session.send": { what: "a message typed into a worker's terminal for the owner", timeoutSeconds: 60, evidence: "none" },
  // Feedback from the owner or a listed reviewer typed into its worker (lib/dispatch/feedback-delivery.ts): as for
  // session.send, no terminal keeps it, so one cut short is reported, and its feedback is never typed again.
  "feedback.delivered": { what: "feedback on a work item typed into its worker's terminal", timeoutSeconds: 60, evidence: "none" },
  "tab.close": { what: "a finished item's tab closed", timeoutSeconds: 60, evidence: "terminal" },
  // The owner's yes written where the agent keeps it (Claude Code's folder trust): the file is read back to settle it.
  "agent.trust": { what: "the owner's trust in a clone recorded for the workers' agent", timeoutSeconds: 60, evidence: "agent-trust" },
} as const satisfies Record<string, EffectKind>;

/** The name of an audited effect. */
export type EffectKindName = keyof typeof EFFECT_KINDS;

/** Whether a kind is one of the audited effects. */
export function isEffectKind(kind: string): kind is EffectKindName {
  return Object.hasOwn(EFFECT_KINDS, kind);
}
