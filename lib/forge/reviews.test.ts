import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync, writeFileSync } from "node:fs";
import type { Octokit } from "@octokit/rest";
import { failure, forgeTemplate, SEED_TIME } from "../testing/forge.ts";
import type { TestForge } from "../testing/forge.ts";
import { makeBranch } from "../testing/forge-git.ts";
import { placeInDiff } from "./_diff-hunks.ts";
import { statePath } from "./state.ts";

// Seeded: #1..#3 labelled by owner, #4 labelled by stranger, #5 unlabelled by owner.
const template = forgeTemplate();
test.after(() => template.remove());
const repo = { owner: "demo", repo: "widgets" };

/**
 * The owner's pull request #6: its branch rewrites README.md (`# widgets`, a blank line and
 * a sentence become `# widgets` and two new lines) and adds notes.txt; returns its number and head commit.
 */
async function openPull(t: TestForge, by: Octokit = t.owner): Promise<{ pull_number: number; head: string }> {
  const bare = t.seeded.repository.clone_url;
  makeBranch(bare, "ra/readme", "README.md", "# widgets\nline two\nline three\n");
  const head = makeBranch(bare, "ra/readme", "notes.txt", "a note\n", "ra/readme");
  const made = await by.rest.pulls.create({ ...repo, title: "Longer readme", head: "ra/readme", base: "main" });
  return { pull_number: made.data.number, head };
}

let clock = SEED_TIME;
const at = (iso: string) => void (clock = new Date(iso));
test.before.each(() => void (clock = SEED_TIME));

test("a review is submitted at once in GitHub's shape: APPROVED, CHANGES_REQUESTED, COMMENTED, of the head commit; listed oldest first, paginated", () =>
  template.use(
    async (t) => {
      const { pull_number, head } = await openPull(t);
      const pull = { ...repo, pull_number };
      at("2026-02-01T09:00:00Z");
      const changes = await t.stranger.rest.pulls.createReview({ ...pull, event: "REQUEST_CHANGES", body: "Please shorten it" });
      assert.is(changes.status, 200, "GitHub answers a created review with 200");
      assert.is(changes.data.state, "CHANGES_REQUESTED");
      assert.is(changes.data.body, "Please shorten it");
      assert.is(changes.data.user?.login, "stranger");
      assert.is(changes.data.author_association, "NONE");
      assert.is(changes.data.commit_id, head, "the pull request's head when it was submitted");
      assert.is(changes.data.submitted_at, "2026-02-01T09:00:00Z");
      assert.match(changes.data.html_url, new RegExp(`/demo/widgets/pull/${pull_number}#pullrequestreview-${changes.data.id}$`));
      assert.match(changes.data.pull_request_url, new RegExp(`/repos/demo/widgets/pulls/${pull_number}$`));
      assert.equal(changes.data._links, { html: { href: changes.data.html_url }, pull_request: { href: changes.data.pull_request_url } });
      const approval = await t.stranger.rest.pulls.createReview({ ...pull, event: "APPROVE" });
      assert.equal([approval.data.state, approval.data.body], ["APPROVED", ""], "an approval needs no body; GitHub keeps it empty, not null");
      const note = await t.owner.rest.pulls.createReview({ ...pull, event: "COMMENT", body: "Thanks" });
      assert.equal([note.data.state, note.data.author_association], ["COMMENTED", "COLLABORATOR"]);

      const listed = await t.owner.rest.pulls.listReviews(pull);
      assert.equal(listed.data.map((r) => r.state), ["CHANGES_REQUESTED", "APPROVED", "COMMENTED"], "oldest first");
      const paged = await t.owner.rest.pulls.listReviews({ ...pull, per_page: 2, page: 2 });
      assert.equal(paged.data.map((r) => r.id), [note.data.id]);
      assert.match(paged.headers.link ?? "", /rel="prev"/);
      assert.is((await failure(t.owner.rest.pulls.listReviews({ ...repo, pull_number: 1 }))).status, 404, "an issue has no reviews");
    },
    { now: () => clock },
  ));

test("GitHub's refusals, in its words: approving or requesting changes on one's own pull request, REQUEST_CHANGES or COMMENT saying nothing, no event", () =>
  template.use(async (t) => {
    const { pull_number } = await openPull(t);
    const pull = { ...repo, pull_number };
    const approve = await failure(t.owner.rest.pulls.createReview({ ...pull, event: "APPROVE" }));
    assert.equal([approve.status, approve.data.message, approve.data.errors], [422, "Unprocessable Entity", ["Review Can not approve your own pull request"]]);
    const change = await failure(t.owner.rest.pulls.createReview({ ...pull, event: "REQUEST_CHANGES", body: "Mine" }));
    assert.equal(change.data.errors, ["Review Can not request changes on your own pull request"]);
    for (const event of ["REQUEST_CHANGES", "COMMENT"] as const) {
      const silent = await failure(t.stranger.rest.pulls.createReview({ ...pull, event, body: "  " }));
      assert.is(silent.status, 422, `${event} with a blank body`);
    }
    const pending = await failure(t.stranger.request("POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews", { ...pull, body: "Draft" }));
    assert.is(pending.status, 422, "a pending review is not kept");
    const sideways = await failure(t.stranger.request("POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews", { ...pull, event: "SHRUG" } as never));
    assert.is(sideways.status, 422);
    assert.is((await t.owner.rest.pulls.listReviews(pull)).data.length, 0, "nothing refused was kept");
    const comment = await t.stranger.rest.pulls.createReview({ ...pull, event: "COMMENT", comments: [{ path: "notes.txt", line: 1, body: "Nice" }] });
    assert.is(comment.data.state, "COMMENTED", "a COMMENT with comments needs no body");
  }));

test("comments given with a review become review comments of it, placed in the diff: path, line, side, position and diff_hunk; a line or path outside the diff is 422", () =>
  template.use(async (t) => {
    const { pull_number, head } = await openPull(t);
    const pull = { ...repo, pull_number };
    const review = await t.stranger.rest.pulls.createReview({
      ...pull,
      event: "COMMENT",
      body: "Two notes",
      comments: [
        { path: "README.md", line: 3, body: "A third line?" },
        { path: "README.md", line: 1, side: "LEFT", body: "The title stays" },
      ],
    });
    const comments = (await t.owner.rest.pulls.listReviewComments(pull)).data;
    assert.equal(
      comments.map((c) => [c.pull_request_review_id, c.path, c.line, c.side, c.position, c.body, c.commit_id, c.original_commit_id, c.user?.login]),
      [
        [review.data.id, "README.md", 3, "RIGHT", 5, "A third line?", head, head, "stranger"],
        [review.data.id, "README.md", 1, "LEFT", 1, "The title stays", head, head, "stranger"],
      ],
    );
    assert.is(comments[0].diff_hunk, "@@ -1,3 +1,3 @@\n # widgets\n-\n-A repository on the sandbox forge.\n+line two\n+line three", "the hunk down to the commented line");
    assert.is(comments[1].diff_hunk, "@@ -1,3 +1,3 @@\n # widgets");
    assert.match(comments[0].html_url, new RegExp(`/demo/widgets/pull/${pull_number}#discussion_r${comments[0].id}$`));
    assert.match(comments[0].url, new RegExp(`/repos/demo/widgets/pulls/comments/${comments[0].id}$`));
    assert.equal(comments[0]._links.html.href, comments[0].html_url);

    const line = await failure(t.stranger.rest.pulls.createReview({ ...pull, event: "COMMENT", body: "x", comments: [{ path: "README.md", line: 9, body: "Beyond" }] }));
    assert.equal([line.status, line.data.errors], [422, ["Line could not be resolved"]]);
    const path = await failure(t.stranger.rest.pulls.createReview({ ...pull, event: "COMMENT", body: "x", comments: [{ path: "nothing.txt", line: 1, body: "Where" }] }));
    assert.equal([path.status, path.data.errors], [422, ["Path could not be resolved"]]);
    assert.is((await t.owner.rest.pulls.listReviews(pull)).data.length, 1, "a review with a comment that cannot be placed is not kept");
    assert.is((await t.owner.rest.pulls.get(pull)).data.review_comments, 2);
  }));

test("a single review comment gets a COMMENTED review of its own: 201 with Location; a commit outside the pull request or a line outside the diff is 422", () =>
  template.use(async (t) => {
    const { pull_number, head } = await openPull(t);
    const pull = { ...repo, pull_number };
    const made = await t.owner.rest.pulls.createReviewComment({ ...pull, body: "Typo here", commit_id: head, path: "notes.txt", line: 1 });
    assert.is(made.status, 201);
    assert.is(made.headers.location, made.data.url);
    assert.equal([made.data.side, made.data.position, made.data.diff_hunk], ["RIGHT", 1, "@@ -0,0 +1 @@\n+a note"]);
    const reviews = (await t.owner.rest.pulls.listReviews(pull)).data;
    assert.equal(reviews.map((r) => [r.id, r.state, r.body, r.user?.login]), [[made.data.pull_request_review_id, "COMMENTED", "", "owner"]]);

    const main = (await t.owner.rest.git.getRef({ ...repo, ref: "heads/main" })).data.object.sha;
    const outside = await failure(t.owner.rest.pulls.createReviewComment({ ...pull, body: "x", commit_id: main, path: "notes.txt", line: 1 }));
    assert.equal([outside.status, outside.data.errors[0].field], [422, "commit_id"]);
    const line = await failure(t.owner.rest.pulls.createReviewComment({ ...pull, body: "x", commit_id: head, path: "notes.txt", line: 2 }));
    assert.equal([line.status, line.data.errors], [422, [{ resource: "PullRequestReviewComment", code: "custom", field: "pull_request_review_thread.line", message: "could not be resolved" }]]);
    const missing = await failure(t.owner.request("POST /repos/{owner}/{repo}/pulls/{pull_number}/comments", { ...pull, body: "x", path: "notes.txt", line: 1 } as never));
    assert.equal(missing.data.errors, [{ resource: "PullRequestReviewComment", code: "missing_field", field: "commit_id" }]);
  }));

test("review comments, per pull request and for the repository: ascending id unless sorted; sort and direction; since", () =>
  template.use(
    async (t) => {
      const { pull_number, head } = await openPull(t);
      const pull = { ...repo, pull_number };
      const bodies = async (params: Record<string, string> = {}, all = false) =>
        (all ? await t.owner.rest.pulls.listReviewCommentsForRepo({ ...repo, ...params }) : await t.owner.rest.pulls.listReviewComments({ ...pull, ...params })).data.map((c) => c.body);
      at("2026-02-01T10:00:00Z");
      await t.owner.rest.pulls.createReviewComment({ ...pull, body: "first", commit_id: head, path: "notes.txt", line: 1 });
      at("2026-02-02T10:00:00Z");
      await t.owner.rest.pulls.createReviewComment({ ...pull, body: "second", commit_id: head, path: "README.md", line: 2 });
      assert.equal(await bodies(), ["first", "second"]);
      assert.equal(await bodies({}, true), ["first", "second"]);
      assert.equal(await bodies({ sort: "created" }), ["second", "first"], "a sort without direction is newest first");
      assert.equal(await bodies({ sort: "created", direction: "asc" }), ["first", "second"]);
      assert.equal(await bodies({ direction: "desc" }), ["first", "second"], "direction is ignored without sort, as GitHub documents");
      assert.equal(await bodies({ since: "2026-02-02T00:00:00Z" }, true), ["second"]);
      assert.equal((await t.owner.rest.pulls.listReviewCommentsForRepo({ ...repo, per_page: 1, page: 2 })).data.map((c) => c.body), ["second"]);
      assert.is((await failure(t.owner.rest.pulls.listReviewCommentsForRepo({ ...repo, since: "whenever" }))).status, 422);
    },
    { now: () => clock },
  ));

test("every review and review comment updates the pull request, so a list sorted by updated moves it first, and a conditional list answers 200 again", () =>
  template.use(
    async (t) => {
      const { pull_number, head } = await openPull(t);
      makeBranch(t.seeded.repository.clone_url, "ra/later", "later.txt");
      const later = (await t.owner.rest.pulls.create({ ...repo, title: "Later", head: "ra/later", base: "main" })).data.number;
      const order = async () => (await t.owner.rest.pulls.list({ ...repo, sort: "updated", direction: "desc" })).data.map((p) => p.number);
      at("2026-02-01T10:00:00Z");
      await t.owner.rest.pulls.update({ ...repo, pull_number: later, body: "touched" });
      assert.equal(await order(), [later, pull_number]);
      const before = await t.owner.rest.pulls.listReviews({ ...repo, pull_number });
      assert.is((await failure(t.owner.rest.pulls.listReviews({ ...repo, pull_number, headers: { "if-none-match": before.headers.etag } }))).status, 304);

      at("2026-02-02T10:00:00Z");
      await t.stranger.rest.pulls.createReview({ ...repo, pull_number, event: "APPROVE" });
      assert.equal(await order(), [pull_number, later], "the review moved it");
      assert.is((await t.owner.rest.pulls.get({ ...repo, pull_number })).data.updated_at, "2026-02-02T10:00:00Z");
      const after = await t.owner.rest.pulls.listReviews({ ...repo, pull_number, headers: { "if-none-match": before.headers.etag } });
      assert.is(after.status, 200, "a new review changes the list's answer");

      at("2026-02-03T10:00:00Z");
      await t.owner.rest.pulls.update({ ...repo, pull_number: later, body: "touched again" });
      const comments = await t.owner.rest.pulls.listReviewComments({ ...repo, pull_number });
      at("2026-02-04T10:00:00Z");
      await t.owner.rest.pulls.createReviewComment({ ...repo, pull_number, body: "One more", commit_id: head, path: "notes.txt", line: 1 });
      assert.equal(await order(), [pull_number, later], "the review comment moved it");
      const again = await t.owner.rest.pulls.listReviewComments({ ...repo, pull_number, headers: { "if-none-match": comments.headers.etag } });
      assert.equal([again.status, again.data.length], [200, 1]);
    },
    { now: () => clock },
  ));

test("a forge state written before reviews, checks, statuses and dependencies were kept is read with none of them", () =>
  template.use(async (t) => {
    const { pull_number } = await openPull(t);
    const state = JSON.parse(readFileSync(statePath(t.dir), "utf8"));
    for (const kept of ["reviews", "review_comments", "check_runs", "statuses", "dependencies"]) delete state.repos[0][kept];
    writeFileSync(statePath(t.dir), JSON.stringify(state));
    assert.equal((await t.owner.rest.pulls.listReviews({ ...repo, pull_number })).data, []);
    assert.is((await t.stranger.rest.pulls.createReview({ ...repo, pull_number, event: "APPROVE" })).status, 200);
    assert.is((await t.owner.rest.issues.get({ ...repo, issue_number: 1 })).data.issue_dependencies_summary?.total_blocked_by, 0);
  }));

test("placeInDiff counts a position through every later hunk header, and finds a deleted line on the LEFT only", () => {
  const diff = ["diff --git a/f b/f", "--- a/f", "+++ b/f", "@@ -1,2 +1,2 @@", " one", "-two", "+TWO", "@@ -10,2 +10,3 @@ section", " ten", "+ten and a half", " eleven"].join("\n");
  assert.equal(placeInDiff(diff, 2, "LEFT"), { position: 2, diff_hunk: "@@ -1,2 +1,2 @@\n one\n-two" });
  assert.equal(placeInDiff(diff, 2, "RIGHT"), { position: 3, diff_hunk: "@@ -1,2 +1,2 @@\n one\n-two\n+TWO" });
  assert.equal(placeInDiff(diff, 11, "RIGHT")?.position, 6, "the second hunk's header is position 4");
  assert.equal(placeInDiff(diff, 11, "LEFT")?.position, 7, "old line 11 is the context line after the addition");
  assert.is(placeInDiff(diff, 5, "RIGHT"), undefined, "a line between hunks is not in the diff");
  assert.is(placeInDiff("", 1, "RIGHT"), undefined);
});

test.run();
