/**
 * The sandbox forge's state on disk: users with their tokens, repositories, labels,
 * issues (pull requests are issues with a `pull` part, sharing their numbers, as on
 * GitHub) with who labelled them and who edited their bodies, comments, pull request
 * reviews and review comments, check runs and commit statuses, and which issue blocks
 * which, kept as one JSON file written atomically after every change.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../atomic.ts";
import { PreconditionError } from "../errors.ts";
import { makePrivateDir } from "../state-dir.ts";

/** A user the forge knows, and the token that authenticates as them (an organisation has none). */
export interface ForgeUser {
  id: number;
  login: string;
  /** Empty for an organisation: no request authenticates as it. */
  token: string;
  type?: "User" | "Organization";
}

/** A label a repository has. */
export interface ForgeLabel {
  id: number;
  name: string;
  color: string;
  description: string | null;
  /** When it was made and last changed (GitHub's GraphQL `createdAt`, `updatedAt`); absent in a state written before they were kept. */
  created_at?: string;
  updated_at?: string;
}

/** What makes an issue a pull request: its branches and how it ended. */
export interface ForgePull {
  head: string;
  base: string;
  /** The head commit when the pull request was opened, refreshed at merge or close. */
  head_sha: string;
  base_sha: string;
  draft: boolean;
  merged_at: string | null;
  merge_commit_sha: string | null;
  merged_by: string | null;
}

/** An issue or pull request; `user` and `labels` hold logins and label names. */
export interface ForgeIssue {
  id: number;
  number: number;
  title: string;
  body: string | null;
  user: string;
  state: "open" | "closed";
  state_reason: "completed" | "not_planned" | "reopened" | null;
  labels: string[];
  created_at: string;
  updated_at: string;
  closed_at: string | null;
  closed_by: string | null;
  pull?: ForgePull;
  /** Who added or removed which label and who renamed the issue, oldest first (absent in a state written before they were kept). */
  events?: ForgeIssueEvent[];
  /** The body's revisions once it was first edited, oldest first: the original, then each edit (GitHub's `userContentEdits`). */
  edits?: ForgeBodyEdit[];
}

/** What GitHub's issue events list, and by whom: a label added or removed, or the title changed. */
export type ForgeIssueEvent = ForgeLabelEvent | ForgeRenameEvent;

/** A label added to or removed from an issue, and by whom. */
export interface ForgeLabelEvent {
  id: number;
  event: "labeled" | "unlabeled";
  actor: string;
  label: string;
  created_at: string;
}

/** An issue's title changed, by whom, from what to what (GitHub's `renamed` event). */
export interface ForgeRenameEvent {
  id: number;
  event: "renamed";
  actor: string;
  rename: { from: string; to: string };
  created_at: string;
}

/** One revision of an issue's body: who wrote it, when, and the text. */
export interface ForgeBodyEdit {
  id: number;
  editor: string;
  edited_at: string;
  body: string | null;
}

/** A comment on an issue or pull request. */
export interface ForgeComment {
  id: number;
  issue: number;
  user: string;
  body: string;
  created_at: string;
  updated_at: string;
}

/** A submitted pull request review (the forge keeps no pending ones). */
export interface ForgeReview {
  id: number;
  /** The pull request's number. */
  pull: number;
  user: string;
  /** Empty when none was given, as GitHub keeps it. */
  body: string;
  state: "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED";
  /** The commit reviewed: the pull request's head when it was submitted, unless another was named. */
  commit_id: string;
  submitted_at: string;
}

/** A comment on a line of a pull request's diff, always part of a review (a lone one gets a COMMENTED review, as on GitHub). */
export interface ForgeReviewComment {
  id: number;
  pull: number;
  review_id: number;
  user: string;
  body: string;
  path: string;
  /** The line in the file: the new file's on the RIGHT side, the old file's on the LEFT. */
  line: number;
  side: "LEFT" | "RIGHT";
  /** The line's place in the file's diff, counted from below its first hunk header (GitHub's `position`). */
  position: number;
  /** The diff's lines up to and including the commented one, from its hunk's header. */
  diff_hunk: string;
  commit_id: string;
  created_at: string;
  updated_at: string;
}

/** A check run on a commit, as a CI app reports it. */
export interface ForgeCheckRun {
  id: number;
  head_sha: string;
  name: string;
  status: "queued" | "in_progress" | "completed";
  conclusion: "action_required" | "cancelled" | "failure" | "neutral" | "success" | "skipped" | "stale" | "timed_out" | null;
  details_url: string | null;
  external_id: string | null;
  started_at: string | null;
  completed_at: string | null;
  output: { title: string | null; summary: string | null; text: string | null };
  /** The check suite it belongs to: one per commit, as one app's runs on one commit share a suite on GitHub. */
  suite_id: number;
}

/** A commit status, as `POST /repos/{o}/{r}/statuses/{sha}` sets one. */
export interface ForgeStatus {
  id: number;
  sha: string;
  state: "error" | "failure" | "pending" | "success";
  target_url: string | null;
  description: string | null;
  context: string;
  creator: string;
  created_at: string;
  updated_at: string;
}

/** One issue blocked by another (GitHub's issue dependencies), kept by the blocked issue's repository; issues by their ids. */
export interface ForgeDependency {
  blocked: number;
  blocking: number;
  created_at: string;
}

/** A repository: its metadata, who may push, and its issues. Its git objects live in the bare repository. */
export interface ForgeRepo {
  id: number;
  owner: string;
  name: string;
  default_branch: string;
  private: boolean;
  description: string | null;
  created_at: string;
  updated_at: string;
  /** Logins with push access (the owner among them). */
  collaborators: string[];
  labels: ForgeLabel[];
  issues: ForgeIssue[];
  comments: ForgeComment[];
  reviews: ForgeReview[];
  review_comments: ForgeReviewComment[];
  check_runs: ForgeCheckRun[];
  statuses: ForgeStatus[];
  dependencies: ForgeDependency[];
}

/** Everything the forge keeps. */
export interface ForgeData {
  version: 1;
  /** The next id handed out to a user, repository, label, issue or comment. */
  next_id: number;
  users: ForgeUser[];
  repos: ForgeRepo[];
}

/** The state file inside a forge's folder. */
export function statePath(dir: string): string {
  return join(dir, "state.json");
}

/** The bare git repository behind `owner/name`. */
export function bareRepoPath(dir: string, owner: string, name: string): string {
  return join(dir, "git", owner, `${name}.git`);
}

/** An empty forge. */
export function emptyForgeData(): ForgeData {
  return { version: 1, next_id: 1, users: [], repos: [] };
}

/** Reads the forge's state; a folder with no state file yet holds an empty forge, a broken one is a PreconditionError. */
export function loadForgeData(dir: string): ForgeData {
  let text: string;
  try {
    text = readFileSync(statePath(dir), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return emptyForgeData();
    throw error;
  }
  let data: ForgeData;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new PreconditionError(`Cannot read forge state "${statePath(dir)}": ${(error as Error).message}`);
  }
  if (data?.version !== 1 || !Array.isArray(data.users) || !Array.isArray(data.repos)) {
    throw new PreconditionError(`Cannot read forge state "${statePath(dir)}": not a version 1 forge state`);
  }
  keepLabelEvents(data);
  for (const repo of data.repos) fillNewLists(repo);
  return data;
}

/** Gives a repository of a state written before reviews, checks, statuses and dependencies were kept empty lists of them. */
function fillNewLists(repo: ForgeRepo): void {
  repo.reviews ??= [];
  repo.review_comments ??= [];
  repo.check_runs ??= [];
  repo.statuses ??= [];
  repo.dependencies ??= [];
}

/**
 * Gives each issue of a state written before label events were kept the events its labels
 * would have had: each added by the issue's opener when it was opened (what seeding did).
 */
function keepLabelEvents(data: ForgeData): void {
  for (const repo of data.repos) {
    for (const issue of repo.issues ?? []) {
      if (issue.events) continue;
      issue.events = issue.labels.map((label) => ({ id: nextId(data), event: "labeled" as const, actor: issue.user, label, created_at: issue.created_at }));
    }
  }
}

/** Writes the forge's state atomically; the folder is private, since the state holds tokens. */
export function saveForgeData(dir: string, data: ForgeData): void {
  makePrivateDir(dir);
  writeFileAtomic(statePath(dir), JSON.stringify(data, null, 1) + "\n");
}

/** What identifies one version of the state file on disk, to notice another process's write. */
export function stateStamp(dir: string): string {
  try {
    const stat = statSync(statePath(dir));
    return `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
  } catch {
    return "absent";
  }
}

/** Hands out the next id. */
export function nextId(data: ForgeData): number {
  return data.next_id++;
}

/** The user a token belongs to. */
export function userByToken(data: ForgeData, token: string): ForgeUser | undefined {
  if (token === "") return undefined;
  return data.users.find((user) => user.token === token);
}

/** A user by login (case-insensitive, as on GitHub). */
export function userByLogin(data: ForgeData, login: string): ForgeUser | undefined {
  const wanted = login.toLowerCase();
  return data.users.find((user) => user.login.toLowerCase() === wanted);
}

/** A repository by owner and name (case-insensitive, as on GitHub). */
export function findRepo(data: ForgeData, owner: string, name: string): ForgeRepo | undefined {
  const full = `${owner}/${name}`.toLowerCase();
  return data.repos.find((repo) => `${repo.owner}/${repo.name}`.toLowerCase() === full);
}

/** An issue or pull request by number. */
export function findIssue(repo: ForgeRepo, number: number): ForgeIssue | undefined {
  return repo.issues.find((issue) => issue.number === number);
}

/** A repository's label by name (case-insensitive, as on GitHub). */
export function findLabel(repo: ForgeRepo, name: string): ForgeLabel | undefined {
  const wanted = name.toLowerCase();
  return repo.labels.find((label) => label.name.toLowerCase() === wanted);
}

/** The repository's label of that name, created at `at` (grey) when it has none yet, as GitHub does when an issue is labelled. */
export function ensureLabel(data: ForgeData, repo: ForgeRepo, name: string, at: string, color = "ededed", description: string | null = null): ForgeLabel {
  const found = findLabel(repo, name);
  if (found) return found;
  const label = { id: nextId(data), name, color, description, created_at: at, updated_at: at };
  repo.labels.push(label);
  return label;
}

/** Whether a user may push to the repository (and so label, close others' issues, merge). */
export function canPush(repo: ForgeRepo, login: string): boolean {
  return repo.collaborators.some((name) => name.toLowerCase() === login.toLowerCase());
}

/** The number the next issue or pull request gets. */
export function nextNumber(repo: ForgeRepo): number {
  return repo.issues.reduce((max, issue) => Math.max(max, issue.number), 0) + 1;
}

/** What a new issue starts with. */
export interface NewIssue {
  title: string;
  body?: string | null;
  user: string;
  labels?: string[];
  pull?: ForgePull;
}

/**
 * Opens an issue (or, with `pull`, a pull request) at `at`; its labels are created on the
 * repository as needed, each a `labeled` event by the issue's opener, as on GitHub.
 */
export function addIssue(data: ForgeData, repo: ForgeRepo, issue: NewIssue, at: string): ForgeIssue {
  const labels = (issue.labels ?? []).map((name) => ensureLabel(data, repo, name, at).name);
  const made: ForgeIssue = {
    id: nextId(data),
    number: nextNumber(repo),
    title: issue.title,
    body: issue.body ?? null,
    user: issue.user,
    state: "open",
    state_reason: null,
    labels: [],
    created_at: at,
    updated_at: at,
    closed_at: null,
    closed_by: null,
    ...(issue.pull ? { pull: issue.pull } : {}),
    events: [],
  };
  setLabels(data, made, labels, issue.user, at);
  repo.issues.push(made);
  return made;
}

/**
 * Gives an issue exactly `labels` (names as the repository spells them), recording a
 * `labeled` or `unlabeled` event by `actor` for each one added or taken away; whether anything changed.
 */
export function setLabels(data: ForgeData, issue: ForgeIssue, labels: readonly string[], actor: string, at: string): boolean {
  const next = [...new Set(labels)];
  const had = (list: readonly string[], name: string) => list.some((l) => l.toLowerCase() === name.toLowerCase());
  const events = issue.events ??= [];
  for (const name of issue.labels) if (!had(next, name)) events.push({ id: nextId(data), event: "unlabeled", actor, label: name, created_at: at });
  for (const name of next) if (!had(issue.labels, name)) events.push({ id: nextId(data), event: "labeled", actor, label: name, created_at: at });
  const changed = JSON.stringify(next) !== JSON.stringify(issue.labels);
  issue.labels = next;
  return changed;
}

/**
 * Replaces an issue's body as `editor` did at `at`, keeping its revisions as GitHub does:
 * the first edit also records the original, by the issue's author at its creation.
 * Setting the body it already has records nothing.
 */
export function editBody(data: ForgeData, issue: ForgeIssue, body: string | null, editor: string, at: string): boolean {
  if (body === issue.body) return false;
  const edits = issue.edits ??= [];
  if (edits.length === 0) edits.push({ id: nextId(data), editor: issue.user, edited_at: issue.created_at, body: issue.body });
  edits.push({ id: nextId(data), editor, edited_at: at, body });
  issue.body = body;
  return true;
}

/** Changes an issue's title as `actor` did at `at`, recording GitHub's `renamed` event; setting the title it has records nothing. */
export function renameIssue(data: ForgeData, issue: ForgeIssue, title: string, actor: string, at: string): boolean {
  if (title === issue.title) return false;
  (issue.events ??= []).push({ id: nextId(data), event: "renamed", actor, rename: { from: issue.title, to: title }, created_at: at });
  issue.title = title;
  return true;
}

/**
 * Closes or reopens an issue, keeping closed_at, closed_by and state_reason as GitHub does;
 * each issue it blocks is changed too (its count of open blockers moved), so it is updated at `at`.
 */
export function setIssueState(data: ForgeData, issue: ForgeIssue, state: "open" | "closed", by: string, at: string, reason?: ForgeIssue["state_reason"]): void {
  if (issue.state === state) {
    if (state === "closed" && reason !== undefined) issue.state_reason = reason;
    return;
  }
  issue.state = state;
  if (state === "closed") {
    issue.closed_at = at;
    issue.closed_by = by;
    issue.state_reason = reason ?? "completed";
  } else {
    issue.closed_at = null;
    issue.closed_by = null;
    issue.state_reason = "reopened";
  }
  issue.updated_at = at;
  for (const repo of data.repos) {
    for (const dependency of repo.dependencies ?? []) {
      if (dependency.blocking !== issue.id) continue;
      const blocked = repo.issues.find((other) => other.id === dependency.blocked);
      if (blocked) blocked.updated_at = at;
    }
  }
}

/** An issue anywhere in the forge by its id (not its number), with its repository. */
export function issueById(data: ForgeData, id: number): { repo: ForgeRepo; issue: ForgeIssue } | undefined {
  for (const repo of data.repos) {
    const issue = repo.issues.find((candidate) => candidate.id === id);
    if (issue) return { repo, issue };
  }
  return undefined;
}
