import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Octokit } from "@octokit/rest";
import { git } from "../testing/fixtures.ts";
import { failure, forgeTemplate } from "../testing/forge.ts";
import { EMPTY_TREE, createRef, moveRef, readRef } from "./git.ts";

const template = forgeTemplate();
test.after(() => template.remove());
const repo = { owner: "demo", repo: "widgets" };
/** The race tests write far more than GitHub's 80 content-creating requests a minute. */
const unlimited = { contentLimit: { perMinute: 100_000, perHour: 100_000 } };

/** A commit with the empty tree on top of `parent`, written through the API as robot-army writes a claim's. */
async function child(owner: Octokit, parent: string, message: string): Promise<string> {
  return (await owner.rest.git.createCommit({ ...repo, message, tree: EMPTY_TREE, parents: [parent] })).data.sha;
}

async function mainHead(owner: Octokit): Promise<string> {
  return (await owner.rest.git.getRef({ ...repo, ref: "heads/main" })).data.object.sha;
}

test("any reference is created, read, listed by prefix, fast-forwarded, refused a move that is not one, moved by force, and deleted", () =>
  template.use(async ({ owner, seeded }) => {
    const bare = seeded.repository.clone_url;
    const main = await mainHead(owner);
    const made = await owner.rest.git.createRef({ ...repo, ref: "refs/robot-army/claims/12", sha: main });
    assert.is(made.status, 201);
    assert.is(made.data.ref, "refs/robot-army/claims/12");
    assert.equal(made.data.object, { sha: main, type: "commit", url: `${made.data.url.replace(/\/refs\/.*$/, "")}/commits/${main}` });
    assert.match(made.data.url, /\/repos\/demo\/widgets\/git\/refs\/robot-army\/claims\/12$/);
    assert.is(made.headers.location, made.data.url);
    assert.is(git(bare, "rev-parse", "refs/robot-army/claims/12"), main, "the reference lives in the bare repository");

    // Octokit sends the ref encoded (robot-army%2Fclaims%2F12); a plain path names it too.
    assert.equal((await owner.rest.git.getRef({ ...repo, ref: "robot-army/claims/12" })).data, made.data);
    assert.equal((await owner.request("GET /repos/demo/widgets/git/ref/robot-army/claims/12")).data, made.data);
    const missing = await failure(owner.rest.git.getRef({ ...repo, ref: "robot-army/claims/1" }));
    assert.is(missing.status, 404);
    assert.is(missing.data.message, "Not Found");
    assert.ok(missing.data.documentation_url);

    await owner.rest.git.createRef({ ...repo, ref: "refs/robot-army/claims/13", sha: main });
    await owner.rest.git.createRef({ ...repo, ref: "refs/robot-army/hosts/alpha", sha: main });
    await owner.rest.git.createRef({ ...repo, ref: "refs/tags/v1", sha: main });
    const names = async (ref: string) => (await owner.rest.git.listMatchingRefs({ ...repo, ref })).data.map((found) => found.ref);
    assert.equal(await names("robot-army/claims"), ["refs/robot-army/claims/12", "refs/robot-army/claims/13"]);
    assert.equal(await names("robot-army/claims/1"), ["refs/robot-army/claims/12", "refs/robot-army/claims/13"], "a prefix of a name matches, as on GitHub");
    assert.equal(await names("robot-army/"), ["refs/robot-army/claims/12", "refs/robot-army/claims/13", "refs/robot-army/hosts/alpha"]);
    assert.equal(await names("tags/v1"), ["refs/tags/v1"]);
    assert.equal(await names("robot-army/nothing"), []);
    assert.is((await owner.rest.git.getRef({ ...repo, ref: "tags/v1" })).data.object.sha, main);

    const one = await child(owner, main, "one");
    const two = await child(owner, one, "two");
    const aside = await child(owner, main, "aside");
    const claim = { ...repo, ref: "robot-army/claims/12" };
    const moved = await owner.rest.git.updateRef({ ...claim, sha: one });
    assert.is(moved.status, 200);
    assert.equal(moved.data, { ...made.data, object: { ...made.data.object, sha: one, url: made.data.object.url.replace(main, one) } });
    assert.is((await owner.rest.git.updateRef({ ...claim, sha: two, force: false })).data.object.sha, two);
    const refused = await failure(owner.rest.git.updateRef({ ...claim, sha: aside }));
    assert.is(refused.status, 422);
    assert.is(refused.data.message, "Update is not a fast forward");
    assert.is(git(bare, "rev-parse", "refs/robot-army/claims/12"), two, "a refused update moves nothing");
    assert.is((await owner.rest.git.updateRef({ ...claim, sha: aside, force: true })).data.object.sha, aside);
    assert.is(git(bare, "rev-parse", "refs/robot-army/claims/12"), aside);
    assert.is((await owner.rest.git.updateRef({ ...claim, sha: aside })).data.object.sha, aside, "staying put is a fast-forward");

    assert.is((await owner.rest.git.deleteRef(claim)).status, 204);
    assert.is((await failure(owner.rest.git.getRef(claim))).status, 404);
    assert.equal(await names("robot-army/claims"), ["refs/robot-army/claims/13"]);
    for (const again of [() => owner.rest.git.deleteRef(claim), () => owner.rest.git.updateRef({ ...claim, sha: one })]) {
      const answer = await failure(again());
      assert.is(answer.status, 422);
      assert.is(answer.data.message, "Reference does not exist");
    }
  }));

test("refused: a reference that exists, a name GitHub or git refuses, an object that is no commit, refs/pull/*, and a user who cannot push", () =>
  template.use(async ({ owner, stranger }) => {
    const main = await mainHead(owner);
    const refusal = async (call: Promise<unknown>) => {
      const answer = await failure(call);
      assert.is(answer.status, 422);
      return answer.data.message;
    };
    const create = (ref: string, sha = main) => owner.rest.git.createRef({ ...repo, ref, sha });
    await create("refs/robot-army/claims/7");
    assert.is(await refusal(create("refs/robot-army/claims/7")), "Reference already exists");
    assert.is(await refusal(create("refs/heads/main")), "Reference already exists");
    assert.is(await refusal(create("refs/claims")), "Reference name must contain at least three slash-separated components.");
    assert.is(await refusal(create("heads/ra/x")), "heads/ra/x is not a valid ref name.");
    assert.is(await refusal(create("refs/heads/")), "refs/heads/ is not a valid ref name.");
    assert.is(await refusal(create("refs/heads/a..b")), "refs/heads/a..b is not a valid ref name.");
    assert.is(await refusal(create("refs/heads/x.lock")), "refs/heads/x.lock is not a valid ref name.");
    assert.is(await refusal(create("refs/robot-army/claims/8", "0".repeat(40))), "Object does not exist");
    assert.is(await refusal(create("refs/robot-army/claims/8", "HEAD")), "Object does not exist", "a revision is no object name");
    assert.is(await refusal(create("refs/robot-army/claims/8", EMPTY_TREE)), "Object does not exist", "a tree is no commit");
    assert.is(await refusal(create("refs/robot-army/claims/7/x")), "Reference update failed", "refs/x blocks refs/x/y, as in git");
    assert.is(await refusal(create("refs/pull/1/head")), "Reference update failed");
    assert.is(await refusal(owner.request("POST /repos/{owner}/{repo}/git/refs", { ...repo, ref: "refs/heads/no-sha" } as never)), 'Invalid request.\n\n"sha" wasn\'t supplied.');
    assert.is(await refusal(owner.rest.git.updateRef({ ...repo, ref: "robot-army/claims/7", sha: "1".repeat(40) })), "Object does not exist");
    assert.is(await refusal(owner.rest.git.updateRef({ ...repo, ref: "robot-army/claims/7", sha: main, force: "yes" as never })), "Invalid request.\n\nFor 'properties/force', \"yes\" is not a boolean.");
    assert.is(await refusal(owner.rest.git.deleteRef({ ...repo, ref: "heads/main" })), "Cannot delete the default branch");
    assert.is((await failure(stranger.rest.git.createRef({ ...repo, ref: "refs/robot-army/claims/9", sha: main }))).status, 403);
    assert.is((await failure(stranger.rest.git.updateRef({ ...repo, ref: "robot-army/claims/7", sha: main }))).status, 403);
    assert.is((await failure(stranger.rest.git.deleteRef({ ...repo, ref: "robot-army/claims/7" }))).status, 403);
    assert.is((await failure(stranger.rest.git.createCommit({ ...repo, message: "x", tree: EMPTY_TREE }))).status, 403);
    assert.is((await owner.rest.git.getRef({ ...repo, ref: "robot-army/claims/7" })).data.object.sha, main, "nothing refused moved it");
  }));

test("two creates of one new reference at once, 20 rounds: each round exactly one 201 and one 422 Reference already exists", () =>
  template.use(async ({ owner }) => {
    const main = await mainHead(owner);
    const shas = [main, await child(owner, main, "other")];
    for (let round = 1; round <= 20; round++) {
      const ref = `refs/robot-army/claims/${100 + round}`;
      const answers = await Promise.all(shas.map((sha) => owner.rest.git.createRef({ ...repo, ref, sha }).then((made) => ({ status: made.status, sha }), (error) => ({ status: error.status, message: error.response.data.message }))));
      const won = answers.filter((answer) => answer.status === 201);
      assert.is(won.length, 1, `round ${round}: ${JSON.stringify(answers)}`);
      assert.equal(answers.filter((answer) => answer.status !== 201), [{ status: 422, message: "Reference already exists" }], `round ${round}`);
      assert.is((await owner.rest.git.getRef({ ...repo, ref: ref.slice("refs/".length) })).data.object.sha, (won[0] as { sha: string }).sha, "the winner's commit is the one kept");
    }
  }, unlimited));

test("two fast-forwards of one reference from the same commit to two children at once, 20 rounds: each round exactly one succeeds", () =>
  template.use(async ({ owner }) => {
    const ref = "robot-army/hosts/alpha";
    let head = await mainHead(owner);
    await owner.rest.git.createRef({ ...repo, ref: `refs/${ref}`, sha: head });
    for (let round = 1; round <= 20; round++) {
      const children = [await child(owner, head, `beat ${round} a`), await child(owner, head, `beat ${round} b`)];
      const answers = await Promise.all(children.map((sha) => owner.rest.git.updateRef({ ...repo, ref, sha }).then((moved) => ({ status: moved.status, sha }), (error) => ({ status: error.status, message: error.response.data.message }))));
      const won = answers.filter((answer) => answer.status === 200) as { sha: string }[];
      assert.is(won.length, 1, `round ${round}: ${JSON.stringify(answers)}`);
      assert.equal(answers.filter((answer) => answer.status !== 200), [{ status: 422, message: "Update is not a fast forward" }], `round ${round}`);
      head = won[0].sha;
      assert.is((await owner.rest.git.getRef({ ...repo, ref })).data.object.sha, head, "the winner's commit is the head");
    }
  }, unlimited));

test("git's compare-and-swap: a ref is made only where there is none, and moved only from the value it still holds", () =>
  template.use(async ({ owner, seeded }) => {
    const bare = seeded.repository.clone_url;
    const main = await mainHead(owner);
    const next = await child(owner, main, "next");
    assert.is(await createRef(bare, "refs/robot-army/claims/3", main), true);
    assert.is(await createRef(bare, "refs/robot-army/claims/3", next), false, "an empty old value means it must not exist");
    assert.is(await moveRef(bare, "refs/robot-army/claims/3", next, next), false, "a stale old value is refused");
    assert.is((await readRef(bare, "refs/robot-army/claims/3"))?.sha, main);
    assert.is(await moveRef(bare, "refs/robot-army/claims/3", next, main), true);
    assert.equal(await readRef(bare, "refs/robot-army/claims/3"), { ref: "refs/robot-army/claims/3", sha: next, type: "commit" });
    assert.is(await readRef(bare, "refs/robot-army/claims"), undefined, "a namespace is no ref");
  }));

test("a commit with the empty tree and a parent is written for real and read back whole; bad trees and parents are refused as GitHub refuses them", () =>
  template.use(async ({ owner, seeded }) => {
    const bare = seeded.repository.clone_url;
    const main = await mainHead(owner);
    const message = "claim: issue 12\n\nheld-by: host-a (pid 4242)";
    const author = { name: "robot-army on host-a", email: "robot-army@host-a.invalid", date: "2026-01-15T10:00:00Z" };
    const made = await owner.rest.git.createCommit({ ...repo, message, tree: EMPTY_TREE, parents: [main], author });
    assert.is(made.status, 201);
    const sha = made.data.sha;
    assert.match(sha, /^[0-9a-f]{40}$/);
    assert.is(made.headers.location, made.data.url);
    assert.match(made.data.url, new RegExp(`/repos/demo/widgets/git/commits/${sha}$`));
    assert.match(made.data.html_url, new RegExp(`/demo/widgets/commit/${sha}$`));
    assert.is(made.data.message, message, "the message is kept as given");
    assert.equal(made.data.author, author);
    assert.equal(made.data.committer, author, "the committer is the author unless given");
    assert.is(made.data.tree.sha, EMPTY_TREE);
    assert.equal(made.data.parents.map((parent) => parent.sha), [main]);
    assert.equal(made.data.verification, { verified: false, reason: "unsigned", signature: null, payload: null, verified_at: null });
    assert.equal((await owner.rest.git.getCommit({ ...repo, commit_sha: sha })).data, made.data);
    assert.ok(existsSync(join(bare, "objects", EMPTY_TREE.slice(0, 2), EMPTY_TREE.slice(2))), "the empty tree is in the object store");
    assert.is(git(bare, "cat-file", "-p", `${sha}^{tree}`), "");
    assert.is(git(bare, "rev-parse", `${sha}^`), main);

    const byDefault = (await owner.rest.git.createCommit({ ...repo, message: "root", tree: EMPTY_TREE })).data;
    assert.equal(byDefault.parents, [], "no parents is a root commit");
    assert.is(byDefault.author.name, "owner", "the author is the token's user unless given");
    assert.equal(byDefault.committer, byDefault.author);
    assert.match(byDefault.author.date, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    const committer = { name: "Someone Else", email: "else@example.invalid", date: "2026-02-01T00:00:00Z" };
    assert.equal((await owner.rest.git.createCommit({ ...repo, message: "both", tree: made.data.tree.sha, parents: [sha, main], author, committer })).data.committer, committer);

    const refusal = async (body: Record<string, unknown>) => {
      const answer = await failure(owner.request("POST /repos/{owner}/{repo}/git/commits", { ...repo, ...body } as never));
      assert.is(answer.status, 422);
      return answer.data.message;
    };
    assert.is(await refusal({ message: "x", tree: "0".repeat(40) }), "Tree SHA does not exist");
    assert.is(await refusal({ message: "x", tree: main }), "Tree SHA does not exist", "a commit is no tree");
    assert.is(await refusal({ message: "x", tree: EMPTY_TREE, parents: ["0".repeat(40)] }), "Parent SHA does not exist or is not a commit object");
    assert.is(await refusal({ message: "x", tree: EMPTY_TREE, parents: [EMPTY_TREE] }), "Parent SHA does not exist or is not a commit object");
    assert.is(await refusal({ message: "x", tree: EMPTY_TREE, parents: [main.slice(0, 7)] }), "Each SHA in the 'parents' parameter must be exactly 40 characters and contain only [0-9a-f].");
    assert.is(await refusal({ tree: EMPTY_TREE }), 'Invalid request.\n\n"message" wasn\'t supplied.');
    assert.is(await refusal({ message: "x", tree: EMPTY_TREE, author: { name: "no email" } }), 'Invalid request.\n\n"email" wasn\'t supplied.');
    for (const missing of ["0".repeat(40), EMPTY_TREE, "main"]) assert.is((await failure(owner.rest.git.getCommit({ ...repo, commit_sha: missing }))).status, 404);
  }));

test.run();
