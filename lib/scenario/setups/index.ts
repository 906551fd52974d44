/**
 * The named setups a scenario can stand on (`setup: git-repo`). Each is a module exporting
 * `setup(ctx)`, imported only when a scenario names it. To add one, write
 * `lib/scenario/setups/<name>.ts` and add one line to `SETUPS`.
 */

/** What a setup is given: the scenario's fresh folder and the environment its steps will get. */
export interface SetupContext {
  /** The scenario's own fresh temp dir (real path). */
  dir: string;
  /** The environment the steps will get (HOME, RA_STATE_DIR, RA_NOW, XDG_*, PATH, ...). */
  env: Record<string, string>;
  runtime: "node" | "deno";
  /** Runs the real robot-army binary on the scenario's runtime, as a step would. */
  robotArmy(argv: string[], options?: { cwd?: string; env?: Record<string, string> }): Promise<{ code: number; stdout: string; stderr: string }>;
}

/** What a setup made: where the steps run, `${NAME}` variables for them, and extra environment. */
export interface SetupResult {
  cwd: string;
  vars?: Record<string, string>;
  env?: Record<string, string>;
  /** Texts that differ from run to run and the placeholders shown instead, e.g. a forge's URL -> `<forge>`. */
  placeholders?: Record<string, string>;
  /** Stops what the setup started (a sandbox forge), after the last step and before the temp dir goes. */
  cleanup?: () => Promise<void>;
}

/** What every setup module exports. */
export interface SetupModule {
  setup(ctx: SetupContext): Promise<SetupResult>;
}

/** Every setup by name; the scenario schema's `setup` must be one of these. */
export const SETUPS: Record<string, () => Promise<SetupModule>> = {
  "empty-dir": () => import("./empty-dir.ts"),
  "git-repo": () => import("./git-repo.ts"),
  "config-mistakes": () => import("./config-mistakes.ts"),
  "notify-config-mistakes": () => import("./notify-config-mistakes.ts"),
  "forge-with-notify-limit": () => import("./forge-with-notify-limit.ts"),
  "forge-with-asking-worker-and-receivers": () => import("./forge-with-asking-worker-and-receivers.ts"),
  "worker-profile-configs": () => import("./worker-profile-configs.ts"),
  "forge-with-clone": () => import("./forge-with-clone.ts"),
  "forge-with-adoptable-worker": () => import("./forge-with-adoptable-worker.ts"),
  "forge-with-two-repos": () => import("./forge-with-two-repos.ts"),
  "forge-with-worker": () => import("./forge-with-worker.ts"),
  "forge-with-claude-worker": () => import("./forge-with-claude-worker.ts"),
  "forge-with-codex-worker": () => import("./forge-with-codex-worker.ts"),
  "forge-with-repo-instructions": () => import("./forge-with-repo-instructions.ts"),
  "heartbeat-from-the-future": () => import("./heartbeat-from-the-future.ts"),
  "forge-with-process-in-merged-worktree": () => import("./forge-with-process-in-merged-worktree.ts"),
  "forge-with-ignored-work-merged-demo-worker": () => import("./forge-with-ignored-work-merged-demo-worker.ts"),
  "forge-with-build-output-merged-demo-worker": () => import("./forge-with-build-output-merged-demo-worker.ts"),
  "forge-with-closed-issue-worker": () => import("./forge-with-closed-issue-worker.ts"),
  "forge-with-finished-claude-worker": () => import("./forge-with-finished-claude-worker.ts"),
  "forge-with-headless-claude-worker": () => import("./forge-with-headless-claude-worker.ts"),
  "forge-with-untrusted-claude-worker": () => import("./forge-with-untrusted-claude-worker.ts"),
  "forge-with-merged-pull-request": () => import("./forge-with-merged-pull-request.ts"),
  "forge-with-merged-demo-worker": () => import("./forge-with-merged-demo-worker.ts"),
  "forge-with-hand-closed-demo-worker": () => import("./forge-with-hand-closed-demo-worker.ts"),
  "forge-with-three-merged-demo-workers": () => import("./forge-with-three-merged-demo-workers.ts"),
  "forge-with-missing-worker": () => import("./forge-with-missing-worker.ts"),
  "forge-with-tmux-worker": () => import("./forge-with-tmux-worker.ts"),
  "forge-with-tmux-worker-job": () => import("./forge-with-tmux-worker-job.ts"),
  "forge-with-tmux-tabs": () => import("./forge-with-tmux-tabs.ts"),
  "forge-with-tmux-running-tab": () => import("./forge-with-tmux-running-tab.ts"),
  "forge-with-tmux-failed-item": () => import("./forge-with-tmux-failed-item.ts"),
  "forge-with-failing-post-create": () => import("./forge-with-failing-post-create.ts"),
  "forge-with-token-printing-post-create": () => import("./forge-with-token-printing-post-create.ts"),
  "forge-with-unreadable-session": () => import("./forge-with-unreadable-session.ts"),
  "forge-with-control-characters": () => import("./forge-with-control-characters.ts"),
  "forge-with-hostile-title": () => import("./forge-with-hostile-title.ts"),
  "forge-with-html-title": () => import("./forge-with-html-title.ts"),
  "forge-with-dashboard-workers": () => import("./forge-with-dashboard-workers.ts"),
  "web-configs": () => import("./web-configs.ts"),
  "forge-with-rebuilt-store": () => import("./forge-with-rebuilt-store.ts"),
  "forge-with-emptied-store": () => import("./forge-with-emptied-store.ts"),
  "forge-with-daemon": () => import("./forge-with-daemon.ts"),
  "forge-with-notify-receivers": () => import("./forge-with-notify-receivers.ts"),
  "forge-with-notify-webhook-down": () => import("./forge-with-notify-webhook-down.ts"),
  "forge-with-notify-webhook-hanging": () => import("./forge-with-notify-webhook-hanging.ts"),
  "forge-with-stopped-daemon": () => import("./forge-with-stopped-daemon.ts"),
  "daemon-starting": () => import("./daemon-starting.ts"),
  "daemon-hung": () => import("./daemon-hung.ts"),
  "daemon-died": () => import("./daemon-died.ts"),
  "daemon-lock-junk": () => import("./daemon-lock-junk.ts"),
  "daemon-died-with-notify-receivers": () => import("./daemon-died-with-notify-receivers.ts"),
  "forge-comments-fail": () => import("./forge-comments-fail.ts"),
  "forge-with-cut-short-dispatch": () => import("./forge-with-cut-short-dispatch.ts"),
  "forge-with-damaged-spool": () => import("./forge-with-damaged-spool.ts"),
  "forge-with-comment-cut-short": () => import("./forge-with-comment-cut-short.ts"),
  "forge-with-posted-comment-cut-short": () => import("./forge-with-posted-comment-cut-short.ts"),
  "forge-with-wrong-origin": () => import("./forge-with-wrong-origin.ts"),
  "forge-with-changed-settings": () => import("./forge-with-changed-settings.ts"),
  "forge-with-changed-agent-files": () => import("./forge-with-changed-agent-files.ts"),
  "forge-with-stopped-worker-changed-settings": () => import("./forge-with-stopped-worker-changed-settings.ts"),
  "forge-issue-closed": () => import("./forge-issue-closed.ts"),
  "forge-label-removed": () => import("./forge-label-removed.ts"),
  "forge-labelled-by-collaborator": () => import("./forge-labelled-by-collaborator.ts"),
  "forge-with-worker-edited-body": () => import("./forge-with-worker-edited-body.ts"),
  "forge-flaky": () => import("./forge-flaky.ts"),
  "forge-candidate-unreadable": () => import("./forge-candidate-unreadable.ts"),
  "forge-held-label-put-back": () => import("./forge-held-label-put-back.ts"),
  "forge-token-readable": () => import("./forge-token-readable.ts"),
  "episode-repo": () => import("./episode-repo.ts"),
  "repo-with-open-episode": () => import("./repo-with-open-episode.ts"),
  "repo-with-unreadable-episode": () => import("./repo-with-unreadable-episode.ts"),
  "vanished-session": () => import("./vanished-session.ts"),
  "stopped-sessions": () => import("./stopped-sessions.ts"),
  "foreground-session-with-job": () => import("./foreground-session-with-job.ts"),
  "broken-store-files": () => import("./broken-store-files.ts"),
  "repo-with-symlinked-ledger": () => import("./repo-with-symlinked-ledger.ts"),
  "forge-with-c1-title": () => import("./forge-with-c1-title.ts"),
  "forge-with-old-secret": () => import("./forge-with-old-secret.ts"),
  "damaged-files": () => import("./damaged-files.ts"),
  "store-with-resolved-anomalies": () => import("./store-with-resolved-anomalies.ts"),
  "forge-with-worktrees-on-disk": () => import("./forge-with-worktrees-on-disk.ts"),
  "forge-with-cleanup-on-merged-demo-worker": () => import("./forge-with-cleanup-on-merged-demo-worker.ts"),
  "forge-with-dirty-merged-demo-worker": () => import("./forge-with-dirty-merged-demo-worker.ts"),
  "forge-with-retained-then-tidied-worktree": () => import("./forge-with-retained-then-tidied-worktree.ts"),
  "forge-with-unpushed-commit-after-merge": () => import("./forge-with-unpushed-commit-after-merge.ts"),
  "forge-with-cleanup-on-busy-done-worker": () => import("./forge-with-cleanup-on-busy-done-worker.ts"),
  "forge-with-retired-worktree-deleted-by-hand": () => import("./forge-with-retired-worktree-deleted-by-hand.ts"),
  "forge-with-squash-merged-branch-deleted": () => import("./forge-with-squash-merged-branch-deleted.ts"),
  "forge-with-demo-worker-worktree": () => import("./forge-with-demo-worker-worktree.ts"),
};

/** Whether a setup of this name is registered. */
export function isSetup(name: string): boolean {
  return Object.hasOwn(SETUPS, name);
}

/** Loads a registered setup's module. */
export async function loadSetup(name: string): Promise<SetupModule> {
  if (!isSetup(name)) throw new Error(`Unknown setup "${name}" (known: ${Object.keys(SETUPS).join(", ")})`);
  return await SETUPS[name]();
}
