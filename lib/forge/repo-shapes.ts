/**
 * Users and repositories in GitHub's JSON shapes, with every field GitHub's OpenAPI
 * description requires (lib/forge/openapi.test.ts holds the forge to it): the URL
 * families GitHub links from each, and counts the forge does not keep given as zero.
 */
import type { ForgeData, ForgeRepo } from "./state.ts";
import { canPush, userByLogin } from "./state.ts";

/** Where the forge is reached and the state the shapes read users and labels from. */
export interface ShapeContext {
  /** The API root, e.g. `http://127.0.0.1:4567`. */
  base: string;
  data: ForgeData;
  /** The bare repository behind a repository, the clone URL. */
  clonePath: (repo: ForgeRepo) => string;
}

type Json = Record<string, unknown>;

/** When the forge says its accounts were made (it keeps no such date). */
const ACCOUNTS_CREATED = "2026-01-01T00:00:00Z";

/** A user, as GitHub embeds one in an issue, comment, event, repository or pull request (`simple-user`). */
export function userJson(ctx: ShapeContext, login: string): Json {
  const user = userByLogin(ctx.data, login);
  const name = user?.login ?? login;
  const api = `${ctx.base}/users/${name}`;
  return {
    login: name,
    id: user?.id ?? 0,
    node_id: nodeId("U", user?.id ?? 0),
    avatar_url: `${ctx.base}/_forge/avatars/${name}`,
    gravatar_id: "",
    url: api,
    html_url: `${ctx.base}/${name}`,
    followers_url: `${api}/followers`,
    following_url: `${api}/following{/other_user}`,
    gists_url: `${api}/gists{/gist_id}`,
    starred_url: `${api}/starred{/owner}{/repo}`,
    subscriptions_url: `${api}/subscriptions`,
    organizations_url: `${api}/orgs`,
    repos_url: `${api}/repos`,
    events_url: `${api}/events{/privacy}`,
    received_events_url: `${api}/received_events`,
    type: user?.type ?? "User",
    user_view_type: "public",
    site_admin: false,
  };
}

/** A user's profile, as `GET /users/{login}` answers (`public-user`). */
export function profileJson(ctx: ShapeContext, login: string): Json {
  const publicRepos = ctx.data.repos.filter((repo) => !repo.private && repo.owner.toLowerCase() === login.toLowerCase()).length;
  return {
    ...userJson(ctx, login),
    name: login,
    company: null,
    blog: "",
    location: null,
    email: null,
    hireable: null,
    bio: null,
    public_repos: publicRepos,
    public_gists: 0,
    followers: 0,
    following: 0,
    created_at: ACCOUNTS_CREATED,
    updated_at: ACCOUNTS_CREATED,
  };
}

/** The token's own user, as `GET /user` answers (`private-user`: the profile and what only its owner sees). */
export function privateUserJson(ctx: ShapeContext, login: string): Json {
  const owned = ctx.data.repos.filter((repo) => repo.private && repo.owner.toLowerCase() === login.toLowerCase()).length;
  return {
    ...profileJson(ctx, login),
    user_view_type: "private",
    private_gists: 0,
    total_private_repos: owned,
    owned_private_repos: owned,
    disk_usage: 0,
    collaborators: 0,
    two_factor_authentication: false,
  };
}

/** The URL templates a repository links, under its API root, as GitHub names them. */
const REPO_LINKS: Record<string, string> = {
  archive_url: "/{archive_format}{/ref}",
  assignees_url: "/assignees{/user}",
  blobs_url: "/git/blobs{/sha}",
  branches_url: "/branches{/branch}",
  collaborators_url: "/collaborators{/collaborator}",
  comments_url: "/comments{/number}",
  commits_url: "/commits{/sha}",
  compare_url: "/compare/{base}...{head}",
  contents_url: "/contents/{+path}",
  contributors_url: "/contributors",
  deployments_url: "/deployments",
  downloads_url: "/downloads",
  events_url: "/events",
  forks_url: "/forks",
  git_commits_url: "/git/commits{/sha}",
  git_refs_url: "/git/refs{/sha}",
  git_tags_url: "/git/tags{/sha}",
  hooks_url: "/hooks",
  issue_comment_url: "/issues/comments{/number}",
  issue_events_url: "/issues/events{/number}",
  issues_url: "/issues{/number}",
  keys_url: "/keys{/key_id}",
  labels_url: "/labels{/name}",
  languages_url: "/languages",
  merges_url: "/merges",
  milestones_url: "/milestones{/number}",
  notifications_url: "/notifications{?since,all,participating}",
  pulls_url: "/pulls{/number}",
  releases_url: "/releases{/id}",
  stargazers_url: "/stargazers",
  statuses_url: "/statuses/{sha}",
  subscribers_url: "/subscribers",
  subscription_url: "/subscription",
  tags_url: "/tags",
  teams_url: "/teams",
  trees_url: "/git/trees{/sha}",
};

/** A repository, as `GET /repos/{owner}/{repo}` answers and pull requests embed it; `permissions` are the viewer's. */
export function repoJson(ctx: ShapeContext, repo: ForgeRepo, viewer: string): Json {
  const api = repoApi(ctx, repo);
  const html = `${ctx.base}/${repo.owner}/${repo.name}`;
  const push = canPush(repo, viewer);
  const open = repo.issues.filter((issue) => issue.state === "open").length;
  return {
    id: repo.id,
    node_id: nodeId("R", repo.id),
    name: repo.name,
    full_name: `${repo.owner}/${repo.name}`,
    private: repo.private,
    owner: userJson(ctx, repo.owner),
    html_url: html,
    description: repo.description,
    fork: false,
    url: api,
    ...Object.fromEntries(Object.entries(REPO_LINKS).map(([field, path]) => [field, api + path])),
    clone_url: ctx.clonePath(repo),
    git_url: ctx.clonePath(repo),
    ssh_url: ctx.clonePath(repo),
    svn_url: html,
    mirror_url: null,
    homepage: null,
    language: null,
    size: 0,
    forks: 0,
    forks_count: 0,
    stargazers_count: 0,
    watchers: 0,
    watchers_count: 0,
    subscribers_count: 0,
    network_count: 0,
    license: null,
    topics: [],
    created_at: repo.created_at,
    updated_at: repo.updated_at,
    pushed_at: repo.updated_at,
    visibility: repo.private ? "private" : "public",
    default_branch: repo.default_branch,
    has_issues: true,
    has_projects: false,
    has_wiki: false,
    has_pages: false,
    has_discussions: false,
    has_downloads: true,
    archived: false,
    disabled: false,
    is_template: false,
    open_issues: open,
    open_issues_count: open,
    allow_merge_commit: true,
    allow_squash_merge: true,
    allow_rebase_merge: false,
    permissions: { admin: viewer.toLowerCase() === repo.owner.toLowerCase(), maintain: push, push, triage: push, pull: true },
  };
}

/** The API root of a repository. */
export function repoApi(ctx: ShapeContext, repo: ForgeRepo): string {
  return `${ctx.base}/repos/${repo.owner}/${repo.name}`;
}

/** A GraphQL node id for an object of `kind` (`I` issue, `U` user, ...), as the REST shapes carry it; `name` tells apart what one id holds (a repository's refs). */
export function nodeId(kind: string, id: number, name?: string): string {
  return Buffer.from(`${kind}_forge_${id}${name === undefined ? "" : `:${name}`}`).toString("base64url");
}
