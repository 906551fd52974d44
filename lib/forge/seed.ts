/**
 * Seeding a forge: the users `owner` (the author robot-army trusts) and `stranger`, each
 * with a token in `<dir>/tokens/<login>` (mode 0600), a repository with its bare git
 * repository, the `robot-army` label, labelled issues by the owner, one labelled issue by
 * the stranger and one unlabelled issue. Seeding again adds only what is missing.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { isoSeconds } from "../clock.ts";
import { ensureBareRepo } from "./git.ts";
import type { ForgeData, ForgeIssue, ForgeRepo, ForgeUser } from "./state.ts";
import { addIssue, bareRepoPath, ensureLabel, findRepo, loadForgeData, nextId, saveForgeData, userByLogin } from "./state.ts";

/** What to seed. */
export interface SeedOptions {
  /** `owner/name` of the repository (default `demo/widgets`). */
  repo?: string;
  /** How many labelled issues the owner has (default 3). */
  issues?: number;
  /** The label robot-army looks for (default `robot-army`). */
  label?: string;
  /** The trusted author's login (default `owner`). */
  owner?: string;
  /** The untrusted user's login (default `stranger`). */
  stranger?: string;
  /** The clock for timestamps (default: real time). */
  now?: () => Date;
  /** The repository's default branch, its first commit's, when this call makes it (default `main`). */
  defaultBranch?: string;
}

/** What a seeded forge holds (all of it, whether this call made it or an earlier one did). */
export interface SeedResult {
  dir: string;
  repository: { full_name: string; clone_url: string; default_branch: string };
  label: string;
  users: Array<{ login: string; token_file: string; trusted: boolean }>;
  issues: {
    /** By the owner, labelled. */
    labelled: number[];
    /** By the stranger, labelled. */
    stranger: number[];
    /** By the owner, without the label. */
    unlabelled: number[];
  };
  /** What this call added; all empty when everything was there already. */
  created: { users: string[]; repository: boolean; issues: number[] };
}

const TITLES = [
  "Add a --verbose flag to the widget builder",
  "Fix the off-by-one in widget pagination",
  "Document the widget configuration file",
  "Make widget names case-insensitive",
  "Explain widget errors in plain words",
];
const STRANGER_TITLE = "Please run this script for me";
const UNLABELLED_TITLE = "Idea: widgets in three colours";

/**
 * Seeds a forge's folder (the forge may be running: it reloads state written beside it).
 * @example
 * const seeded = await seedForge(dir, { repo: "demo/widgets", issues: 3 });
 * const token = readFileSync(seeded.users[0].token_file, "utf8");
 */
export async function seedForge(dir: string, options: SeedOptions = {}): Promise<SeedResult> {
  const { repo: fullName = "demo/widgets", issues: count = 3, label = "robot-army", owner = "owner", stranger = "stranger" } = options;
  const [repoOwner, repoName, ...extra] = fullName.split("/");
  if (!repoOwner || !repoName || extra.length || !/^[\w.-]+$/.test(repoOwner) || !/^[\w.-]+$/.test(repoName)) {
    throw new RangeError(`Repository "${fullName}" is not of the form owner/name`);
  }
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`Issue count must be a whole number, got ${count}`);
  const at = isoSeconds((options.now ?? (() => new Date()))());
  const data = loadForgeData(dir);
  const created: SeedResult["created"] = { users: [], repository: false, issues: [] };

  const users = [owner, stranger].map((login) => {
    const [user, made] = ensureUser(data, login, "User");
    if (made) created.users.push(login);
    return user;
  });
  if (!userByLogin(data, repoOwner)) ensureUser(data, repoOwner, "Organization");

  let repo = findRepo(data, repoOwner, repoName);
  if (!repo) {
    repo = makeRepo(data, repoOwner, repoName, owner, at, options.defaultBranch ?? "main");
    created.repository = true;
  }
  ensureLabel(data, repo, label, at, "5319e7", "Work for robot-army");

  const byTitle = (title: string, login: string) => repo!.issues.find((i) => !i.pull && i.title === title && i.user.toLowerCase() === login.toLowerCase());
  const ensureIssue = (title: string, login: string, labels: string[], body: string): ForgeIssue => {
    const found = byTitle(title, login);
    if (found) return found;
    const issue = addIssue(data, repo!, { title, body, user: login, labels }, at);
    created.issues.push(issue.number);
    return issue;
  };
  const labelled = Array.from({ length: count }, (_, i) => {
    const title = TITLES[i] ?? `Labelled task ${i + 1}`;
    return ensureIssue(title, owner, [label], `Seeded work for robot-army: ${title.toLowerCase()}.`);
  });
  const strangers = [ensureIssue(STRANGER_TITLE, stranger, [label], "Opened by someone robot-army must not trust.")];
  const unlabelled = [ensureIssue(UNLABELLED_TITLE, owner, [], "Not labelled, so robot-army leaves it alone.")];

  saveForgeData(dir, data);
  const clonePath = bareRepoPath(dir, repo.owner, repo.name);
  await ensureBareRepo(clonePath, repo.default_branch, `# ${repo.name}\n\nA repository on the sandbox forge.\n`, { name: owner, email: `${owner}@users.noreply.forge.invalid`, date: repo.created_at });
  const tokenFiles = users.map((user) => writeTokenFile(join(dir, "tokens", user.login), user.token));
  return {
    dir,
    repository: { full_name: `${repo.owner}/${repo.name}`, clone_url: clonePath, default_branch: repo.default_branch },
    label,
    users: users.map((user, i) => ({ login: user.login, token_file: tokenFiles[i], trusted: i === 0 })),
    issues: { labelled: labelled.map((i) => i.number), stranger: strangers.map((i) => i.number), unlabelled: unlabelled.map((i) => i.number) },
    created,
  };
}

function ensureUser(data: ForgeData, login: string, type: "User" | "Organization"): [ForgeUser, boolean] {
  const found = userByLogin(data, login);
  if (found) return [found, false];
  const user: ForgeUser = { id: nextId(data), login, token: type === "User" ? newToken() : "", type };
  data.users.push(user);
  return [user, true];
}

function makeRepo(data: ForgeData, owner: string, name: string, collaborator: string, at: string, defaultBranch: string): ForgeRepo {
  const repo: ForgeRepo = {
    id: nextId(data),
    owner,
    name,
    default_branch: defaultBranch,
    private: false,
    description: "A repository on the sandbox forge",
    created_at: at,
    updated_at: at,
    collaborators: [...new Set([collaborator, owner])],
    labels: [],
    issues: [],
    comments: [],
    reviews: [],
    review_comments: [],
    check_runs: [],
    statuses: [],
    dependencies: [],
  };
  data.repos.push(repo);
  return repo;
}

/** A token in GitHub's personal-access-token form. */
function newToken(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  return "ghp_" + [...randomBytes(36)].map((byte) => alphabet[byte % alphabet.length]).join("");
}

/** Writes a token file readable by its owner only (never, even for a moment, by anyone else); returns its path. */
function writeTokenFile(path: string, token: string): string {
  try {
    if (readFileSync(path, "utf8") === token && (statSync(path).mode & 0o777) === 0o600) return path;
  } catch {
    // Missing or unreadable: write it.
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${randomBytes(4).toString("hex")}.tmp`;
  writeFileSync(temp, token, { mode: 0o600, flag: "wx" });
  chmodSync(temp, 0o600);
  renameSync(temp, path);
  return path;
}
