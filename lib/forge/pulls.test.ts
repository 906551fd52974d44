import { test } from "uvu";
import * as assert from "uvu/assert";
import { git } from "../testing/fixtures.ts";
import { closingReferences } from "./pulls.ts";
import type { ForgeRepo } from "./state.ts";
import { failure, forgeTemplate } from "../testing/forge.ts";
import { makeBranch, pushBranch } from "../testing/forge-git.ts";

// Seeded: #1..#3 labelled by owner, #4 labelled by stranger, #5 unlabelled by owner.
const template = forgeTemplate();
test.after(() => template.remove());
const repo = { owner: "demo", repo: "widgets" };

test("creating a pull request for a branch the bare repository lacks is 422 naming head", () =>
  template.use(async ({ owner }) => {
    const answer = await failure(owner.rest.pulls.create({ ...repo, title: "Nothing", head: "no-such-branch", base: "main" }));
    assert.is(answer.status, 422);
    assert.is(answer.data.message, "Validation Failed");
    assert.equal(answer.data.errors, [{ resource: "PullRequest", field: "head", code: "invalid" }]);
    const noTitle = await failure(owner.request("POST /repos/{owner}/{repo}/pulls", { ...repo, head: "main", base: "main" }));
    assert.equal(noTitle.data.errors, [{ resource: "PullRequest", code: "missing_field", field: "title" }]);
  }));

test("a pull request is opened for a branch of the bare repository: 201, head and base with their commits, mergeable not known yet", () =>
  template.use(async ({ owner, seeded }) => {
    const sha = makeBranch(seeded.repository.clone_url, "ra/issue-2", "fix.txt");
    const made = await owner.rest.pulls.create({ ...repo, title: "Fix pagination", head: "demo:ra/issue-2", base: "main", body: "Closes #2" });
    assert.is(made.status, 201);
    assert.is(made.data.number, 6, "pull requests share the issues' numbering");
    assert.is(made.data.state, "open");
    assert.is(made.data.head.ref, "ra/issue-2");
    assert.is(made.data.head.sha, sha);
    assert.is(made.data.head.label, "demo:ra/issue-2");
    assert.is(made.data.base.ref, "main");
    assert.is(made.data.base.sha, git(seeded.repository.clone_url, "rev-parse", "main"));
    assert.is(made.data.user.login, "owner");
    assert.is(made.data.merged, false);
    assert.is(made.data.mergeable, null, "GitHub computes mergeability in the background");
    assert.is(made.data.mergeable_state, "unknown");
    assert.is(made.data.commits, 1);
    assert.match(made.data.html_url, /\/demo\/widgets\/pull\/6$/);
  }));

test("mergeable is null until computed, as on GitHub: on opening and the first read after it, known on a later read, null again on the first read after a push", () =>
  template.use(async ({ owner, seeded }) => {
    makeBranch(seeded.repository.clone_url, "ra/issue-3", "three.txt");
    const made = await owner.rest.pulls.create({ ...repo, title: "Three", head: "ra/issue-3", base: "main" });
    const read = async () => (await owner.rest.pulls.get({ ...repo, pull_number: made.data.number })).data;
    const states = async () => {
      const pull = await read();
      return [pull.mergeable, pull.mergeable_state];
    };
    assert.equal([made.data.mergeable, made.data.mergeable_state], [null, "unknown"]);
    assert.equal(await states(), [null, "unknown"], "the first read starts the job");
    assert.equal(await states(), [true, "clean"], "a later read has its answer");
    assert.equal(await states(), [true, "clean"]);
    makeBranch(seeded.repository.clone_url, "ra/issue-3", "more.txt", "more\n", "ra/issue-3");
    assert.equal(await states(), [null, "unknown"], "a push starts it again");
    assert.equal(await states(), [true, "clean"]);
  }));

test("refused: no commits between base and head, and a second open pull request for one branch", () =>
  template.use(async ({ owner, seeded }) => {
    makeBranch(seeded.repository.clone_url, "feature", "f.txt");
    git(seeded.repository.clone_url, "branch", "empty", "main");
    const empty = await failure(owner.rest.pulls.create({ ...repo, title: "x", head: "empty", base: "main" }));
    assert.is(empty.status, 422);
    assert.is(empty.data.errors[0].message, "No commits between main and empty");
    await owner.rest.pulls.create({ ...repo, title: "first", head: "feature", base: "main" });
    const twice = await failure(owner.rest.pulls.create({ ...repo, title: "second", head: "feature", base: "main" }));
    assert.is(twice.status, 422);
    assert.is(twice.data.errors[0].message, "A pull request already exists for demo:feature.");
    assert.is((await failure(owner.rest.pulls.create({ ...repo, title: "x", head: "feature", base: "nowhere" }))).data.errors[0].field, "base");
  }));

test("list pull requests by head, base and state; a push moves head.sha", () =>
  template.use(async ({ owner, seeded }) => {
    makeBranch(seeded.repository.clone_url, "one", "one.txt");
    makeBranch(seeded.repository.clone_url, "two", "two.txt");
    await owner.rest.pulls.create({ ...repo, title: "one", head: "one", base: "main" });
    await owner.rest.pulls.create({ ...repo, title: "two", head: "two", base: "main" });
    const numbers = async (params: Record<string, string>) => (await owner.rest.pulls.list({ ...repo, ...params })).data.map((p) => p.number);
    assert.equal(await numbers({}), [7, 6]);
    assert.equal(await numbers({ head: "demo:two" }), [7]);
    assert.equal(await numbers({ head: "someone-else:two" }), [], "another owner's branch of that name is not this one");
    assert.equal(await numbers({ base: "main", direction: "asc" }), [6, 7]);
    await owner.rest.pulls.update({ ...repo, pull_number: 6, state: "closed" });
    assert.equal(await numbers({ state: "closed" }), [6]);
    assert.equal(await numbers({ state: "all" }), [7, 6]);
    const before = await owner.rest.pulls.list({ ...repo, head: "demo:two" });
    const moved = makeBranch(seeded.repository.clone_url, "two", "two-more.txt", "more\n", "two");
    const after = await owner.rest.pulls.list({ ...repo, head: "demo:two", headers: { "if-none-match": before.headers.etag } });
    assert.is(after.status, 200, "a push changes the list, so its ETag");
    assert.is(after.data[0].head.sha, moved);
  }));

test("merge merges head into base in the bare repository and closes the issue the body names", () =>
  template.use(async ({ owner, seeded, tmp, forge }) => {
    const head = pushBranch(tmp, seeded.repository.clone_url, "ra/issue-2", "fix.txt", "fixed\n");
    const pull = await owner.rest.pulls.create({ ...repo, title: "Fix pagination", head: "ra/issue-2", base: "main", body: "This fixes it.\n\nCloses #2, and fixes demo/widgets#3; not other/repo#1" });
    const merged = await owner.rest.pulls.merge({ ...repo, pull_number: pull.data.number });
    assert.equal(merged.data.merged, true);
    assert.is(merged.data.message, "Pull Request successfully merged");
    const clone = tmp + "/clone";
    git(clone, "fetch", "--quiet", "origin");
    assert.is(git(clone, "rev-parse", "origin/main"), merged.data.sha, "main in the bare repository is the merge commit");
    assert.is(git(clone, "rev-parse", "origin/main^2"), head, "a merge commit has the head as its second parent");
    assert.is(git(clone, "show", "origin/main:fix.txt"), "fixed");
    assert.match(git(clone, "log", "-1", "--format=%s", "origin/main"), `Merge pull request #${pull.data.number} from demo/ra/issue-2`);

    const after = await owner.rest.pulls.get({ ...repo, pull_number: pull.data.number });
    assert.is(after.data.state, "closed");
    assert.is(after.data.merged, true);
    assert.is(after.data.merge_commit_sha, merged.data.sha);
    assert.ok(after.data.merged_at);
    assert.is(after.data.merged_by?.login, "owner");
    assert.is((await owner.request("GET /repos/{owner}/{repo}/pulls/{pull_number}/merge", { ...repo, pull_number: pull.data.number })).status, 204);
    for (const number of [2, 3]) {
      const issue = await owner.rest.issues.get({ ...repo, issue_number: number });
      assert.is(issue.data.state, "closed", `#${number} is closed by the merge`);
      assert.is(issue.data.state_reason, "completed");
      assert.is(issue.data.closed_by?.login, "owner");
    }
    assert.is((await owner.rest.issues.get({ ...repo, issue_number: 1 })).data.state, "open", "other issues stay open");
    const listed = (await owner.rest.issues.listForRepo({ ...repo, state: "closed" })).data.find((i) => i.number === pull.data.number);
    assert.is(listed?.pull_request?.merged_at, after.data.merged_at);
    assert.is((await failure(owner.rest.pulls.merge({ ...repo, pull_number: pull.data.number }))).status, 405, "a merged pull request cannot merge again");
    assert.ok(forge.stats().by_route["PUT /repos/{owner}/{repo}/pulls/{number}/merge"]);
  }));

test("squash merge writes one commit on the base; a pull request into another branch closes no issue", () =>
  template.use(async ({ owner, seeded }) => {
    const bare = seeded.repository.clone_url;
    makeBranch(bare, "release", "release.txt");
    makeBranch(bare, "topic", "topic.txt", "topic\n", "release");
    const pull = await owner.rest.pulls.create({ ...repo, title: "Topic", head: "topic", base: "release", body: "Fixes #1" });
    const merged = await owner.rest.pulls.merge({ ...repo, pull_number: pull.data.number, merge_method: "squash" });
    assert.is(git(bare, "rev-parse", "release"), merged.data.sha);
    assert.is(git(bare, "rev-list", "--parents", "-n", "1", "release").split(" ").length, 2, "a squash commit has one parent");
    assert.is(git(bare, "log", "-1", "--format=%s", "release"), `Topic (#${pull.data.number})`);
    assert.is(git(bare, "show", "release:topic.txt"), "topic");
    assert.is((await owner.rest.issues.get({ ...repo, issue_number: 1 })).data.state, "open", "only merges into the default branch close issues");
  }));

test("merge refusals: a conflict (405, mergeable false), a moved head (409), a stranger (403), rebase (405)", () =>
  template.use(async ({ owner, stranger, seeded }) => {
    makeBranch(seeded.repository.clone_url, "left", "same.txt", "left\n");
    makeBranch(seeded.repository.clone_url, "right", "same.txt", "right\n");
    const left = await owner.rest.pulls.create({ ...repo, title: "left", head: "left", base: "main" });
    const right = await owner.rest.pulls.create({ ...repo, title: "right", head: "right", base: "main" });
    assert.is((await failure(stranger.rest.pulls.merge({ ...repo, pull_number: left.data.number }))).status, 403);
    assert.is((await failure(owner.rest.pulls.merge({ ...repo, pull_number: left.data.number, merge_method: "rebase" }))).status, 405);
    const moved = await failure(owner.rest.pulls.merge({ ...repo, pull_number: left.data.number, sha: "0".repeat(40) }));
    assert.is(moved.status, 409);
    await owner.rest.pulls.merge({ ...repo, pull_number: left.data.number, sha: left.data.head.sha });
    assert.is((await owner.rest.pulls.get({ ...repo, pull_number: right.data.number })).data.mergeable, null, "the base moved: computed again");
    assert.is((await owner.rest.pulls.get({ ...repo, pull_number: right.data.number })).data.mergeable, false);
    const conflict = await failure(owner.rest.pulls.merge({ ...repo, pull_number: right.data.number }));
    assert.is(conflict.status, 405);
    assert.is(conflict.data.message, "Pull Request is not mergeable");
    assert.is((await owner.rest.pulls.get({ ...repo, pull_number: right.data.number })).data.state, "open");
  }));

/** What the remote says `ref` is, asked live from a clone (`git ls-remote origin <ref>`): its sha, or "" when it has none. */
function remoteRef(clone: string, ref: string): string {
  return git(clone, "ls-remote", "origin", ref).split("\t")[0];
}

test("refs/pull/<n>/head is written when a pull request opens, follows its head branch while it is open, and is kept after a squash merge and the branch's deletion; a clone fetches it", () =>
  template.use(async ({ owner, seeded, tmp }) => {
    const bare = seeded.repository.clone_url;
    const first = pushBranch(tmp, bare, "ra/issue-2", "fix.txt", "fixed\n");
    const clone = tmp + "/clone";
    const pull = await owner.rest.pulls.create({ ...repo, title: "Fix pagination", head: "ra/issue-2", base: "main", body: "Closes #2" });
    const ref = `refs/pull/${pull.data.number}/head`;
    assert.is(remoteRef(clone, ref), first, "written when the pull request opens");

    const second = pushBranch(tmp, bare, "ra/issue-2", "fix.txt", "fixed again\n", "ra/issue-2");
    assert.is(remoteRef(clone, ref), first, "a push reaches the bare repository without the forge");
    assert.is((await owner.rest.pulls.get({ ...repo, pull_number: pull.data.number })).data.head.sha, second);
    assert.is(remoteRef(clone, ref), second, "a read of the pull request moves its ref to the branch's tip");

    const squashed = await owner.rest.pulls.merge({ ...repo, pull_number: pull.data.number, merge_method: "squash" });
    const deleted = await owner.rest.git.deleteRef({ ...repo, ref: "heads/ra/issue-2" });
    assert.is(deleted.status, 204);
    assert.is(remoteRef(clone, "refs/heads/ra/issue-2"), "", "the head branch is gone from the remote");
    assert.is(remoteRef(clone, ref), second, "the pull request's head ref is kept after the merge and the branch's deletion");

    git(clone, "fetch", "--quiet", "--prune", "origin");
    assert.is(git(clone, "rev-parse", "origin/main"), squashed.data.sha);
    assert.not.ok(git(clone, "branch", "-r", "--contains", second), "no branch on the remote holds the squashed commits: only the pull ref does");
    git(clone, "fetch", "--quiet", "origin", ref);
    assert.is(git(clone, "rev-parse", "FETCH_HEAD"), second, "the pull request's head is fetched from the remote");
    const after = await owner.rest.pulls.get({ ...repo, pull_number: pull.data.number });
    assert.is(after.data.merged, true);
    assert.is(after.data.head.sha, second);
  }));

test("refs/pull/<n>/head follows a push on a read of the list and at a merge commit's merge; once merged or closed, it stays put", () =>
  template.use(async ({ owner, seeded, tmp }) => {
    const bare = seeded.repository.clone_url;
    pushBranch(tmp, bare, "one", "one.txt");
    pushBranch(tmp, bare, "two", "two.txt");
    const clone = tmp + "/clone";
    const one = await owner.rest.pulls.create({ ...repo, title: "one", head: "one", base: "main" });
    const two = await owner.rest.pulls.create({ ...repo, title: "two", head: "two", base: "main" });
    const oneMoved = pushBranch(tmp, bare, "one", "one.txt", "more\n", "one");
    const twoMoved = pushBranch(tmp, bare, "two", "two.txt", "more\n", "two");
    await owner.rest.pulls.list({ ...repo, head: "demo:two" });
    assert.is(remoteRef(clone, `refs/pull/${one.data.number}/head`), oneMoved, "a read of the list moves every open pull request's ref, not only those listed");
    assert.is(remoteRef(clone, `refs/pull/${two.data.number}/head`), twoMoved);

    const oneLast = pushBranch(tmp, bare, "one", "one.txt", "last\n", "one");
    await owner.rest.pulls.merge({ ...repo, pull_number: one.data.number });
    assert.is(remoteRef(clone, `refs/pull/${one.data.number}/head`), oneLast, "the merge writes the head it merged");
    const twoLast = pushBranch(tmp, bare, "two", "two.txt", "last\n", "two");
    await owner.rest.pulls.update({ ...repo, pull_number: two.data.number, state: "closed" });
    assert.is(remoteRef(clone, `refs/pull/${two.data.number}/head`), twoLast, "closing writes the head it closed at");

    pushBranch(tmp, bare, "one", "one.txt", "after\n", "one");
    pushBranch(tmp, bare, "two", "two.txt", "after\n", "two");
    await owner.rest.pulls.list({ ...repo, state: "all" });
    assert.is(remoteRef(clone, `refs/pull/${one.data.number}/head`), oneLast, "a merged pull request's ref stays where it merged");
    assert.is(remoteRef(clone, `refs/pull/${two.data.number}/head`), twoLast, "a closed pull request's ref stays where it closed");
  }));

test("a branch is deleted through the API as on GitHub: 204, the ref read 404 after; 422 for no such ref and for the default branch; 403 for a stranger; an open pull request's head branch deleted closes it", () =>
  template.use(async ({ owner, stranger, seeded, forge, token }) => {
    const bare = seeded.repository.clone_url;
    const sha = makeBranch(bare, "robot-army/issue-3-fix", "fix.txt");
    const read = await owner.rest.git.getRef({ ...repo, ref: "heads/robot-army/issue-3-fix" });
    assert.is(read.data.ref, "refs/heads/robot-army/issue-3-fix");
    assert.is(read.data.object.sha, sha);
    const pull = await owner.rest.pulls.create({ ...repo, title: "Fix", head: "robot-army/issue-3-fix", base: "main" });
    assert.is((await failure(stranger.rest.git.deleteRef({ ...repo, ref: "heads/robot-army/issue-3-fix" }))).status, 403);
    const main = await failure(owner.rest.git.deleteRef({ ...repo, ref: "heads/main" }));
    assert.is(main.status, 422);
    assert.is(main.data.message, "Cannot delete the default branch");
    const missing = await failure(owner.rest.git.deleteRef({ ...repo, ref: "heads/no-such-branch" }));
    assert.is(missing.status, 422);
    assert.is(missing.data.message, "Reference does not exist");

    // A ref sent with its slashes as they are (curl, say), not encoded as Octokit sends it.
    const raw = await fetch(`${forge.url}/repos/demo/widgets/git/refs/heads/robot-army/issue-3-fix`, { method: "DELETE", headers: { authorization: `token ${token("owner")}` } });
    assert.is(raw.status, 204);
    assert.is(git(bare, "for-each-ref", "refs/heads/robot-army/"), "", "the branch is gone from the bare repository");
    assert.is((await failure(owner.rest.git.getRef({ ...repo, ref: "heads/robot-army/issue-3-fix" }))).status, 404);
    const closed = await owner.rest.pulls.get({ ...repo, pull_number: pull.data.number });
    assert.is(closed.data.state, "closed", "deleting an open pull request's head branch closes it");
    assert.is(closed.data.merged, false);
    assert.is(closed.data.head.sha, sha);
    assert.is(git(bare, "rev-parse", `refs/pull/${pull.data.number}/head`), sha, "its head ref stays");
  }));

test("closingReferences reads every closing keyword, in any case, for this repository only", () => {
  const repo = { owner: "demo", name: "widgets" } as ForgeRepo;
  assert.equal(closingReferences(repo, "Closes #1\nfixed #2. RESOLVES #3, close: #4"), [1, 2, 3, 4]);
  assert.equal(closingReferences(repo, "fixes Demo/Widgets#5 and fixes other/repo#6"), [5]);
  assert.equal(closingReferences(repo, "See #7; prefixes #8; closes#9"), []);
});

test.run();
