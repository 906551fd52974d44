import { test } from "uvu";
import * as assert from "uvu/assert";
import { forgeTemplate } from "../testing/forge.ts";
import { makeBranch } from "../testing/forge-git.ts";
import { git } from "../testing/fixtures.ts";
import { sleep, waitFor } from "../testing/wait.ts";
import { playTheOwner } from "./rehearsal-owner.ts";
import type { SeenPull } from "./rehearsal-owner.ts";

// Seeded: #1..#3 labelled by owner, #4 labelled by stranger, #5 unlabelled by owner.
const template = forgeTemplate();
test.after(() => template.remove());
const repo = { owner: "demo", repo: "widgets" };

test("the owner says each pull request as it opens and merges it through the forge's API a few seconds later; the forge closes the issue it names", () =>
  template.use(async ({ owner, seeded, forge, token }) => {
    makeBranch(seeded.repository.clone_url, "robot-army/issue-2-fix", "fix.txt");
    const pull = await owner.rest.pulls.create({ ...repo, title: "Fix pagination (#2)", head: "robot-army/issue-2-fix", base: "main", body: "Closes #2\n\nOpened by a worker." });
    const lines: string[] = [];
    const opened = Date.now();
    let seenOpen: boolean | undefined;
    const play = playTheOwner({
      apiBase: forge.url, token: token("owner"), repo: "demo/widgets", mergeAfterMs: 600, lookEveryMs: 50,
      write: (text) => lines.push(...text.split("\n").filter(Boolean)),
      beforeMerge: async (seen: SeenPull) => {
        seenOpen = (await owner.rest.pulls.get({ ...repo, pull_number: seen.number })).data.state === "open";
        return `about to merge ${seen.head.ref}`;
      },
    });
    try {
      await waitFor("the merge", () => play.merged.has(pull.data.number));
      assert.ok(Date.now() - opened >= 600, "the owner waits before merging");
      const merged = await owner.rest.pulls.get({ ...repo, pull_number: pull.data.number });
      assert.is(merged.data.merged, true);
      assert.is(merged.data.merged_by?.login, "owner", "merged with the owner's token");
      assert.is((await owner.rest.issues.get({ ...repo, issue_number: 2 })).data.state, "closed", "the issue the body names is closed");
      assert.is(seenOpen, true, "beforeMerge runs before the merge");
      assert.equal(lines, [
        `pull request opened: demo/widgets#${pull.data.number} "Fix pagination (#2)" (Closes #2)`,
        "owner (rehearsal): about to merge robot-army/issue-2-fix",
        `owner (rehearsal): merged demo/widgets#${pull.data.number} (merge commit)`,
      ]);
      await sleep(300);
      assert.is(lines.length, 3, "a merged pull request is said once and merged once");
    } finally {
      await play.stop();
    }
  }));

test("the owner merges both ways in turn: a merge commit, then a squash whose head branch it deletes, so only refs/pull/<n>/head holds its commits, then a merge commit again", () =>
  template.use(async ({ owner, seeded, forge, token }) => {
    const bare = seeded.repository.clone_url;
    const pulls: number[] = [];
    const tips: string[] = [];
    for (const issue of [1, 2, 3]) {
      const branch = `robot-army/issue-${issue}-fix`;
      tips.push(makeBranch(bare, branch, `fix-${issue}.txt`));
      pulls.push((await owner.rest.pulls.create({ ...repo, title: `Fix #${issue}`, head: branch, base: "main", body: `Closes #${issue}` })).data.number);
    }
    const lines: string[] = [];
    const play = playTheOwner({ apiBase: forge.url, token: token("owner"), repo: "demo/widgets", mergeAfterMs: 0, lookEveryMs: 50, write: (text) => lines.push(...text.split("\n").filter(Boolean)) });
    try {
      await waitFor("three merges", () => play.merged.size === 3);
    } finally {
      await play.stop();
    }
    assert.equal([...play.merged.entries()], [
      [pulls[0], { method: "merge", head: "robot-army/issue-1-fix", branchDeleted: false }],
      [pulls[1], { method: "squash", head: "robot-army/issue-2-fix", branchDeleted: true }],
      [pulls[2], { method: "merge", head: "robot-army/issue-3-fix", branchDeleted: false }],
    ]);
    assert.equal(lines.filter((line) => line.startsWith("owner (rehearsal): ")), [
      `owner (rehearsal): merged demo/widgets#${pulls[0]} (merge commit)`,
      `owner (rehearsal): merged demo/widgets#${pulls[1]} (squash)`,
      `owner (rehearsal): deleted branch robot-army/issue-2-fix: only refs/pull/${pulls[1]}/head holds its commits on the forge now`,
      `owner (rehearsal): merged demo/widgets#${pulls[2]} (merge commit)`,
    ]);
    const parents = (rev: string) => git(bare, "rev-list", "--parents", "-n", "1", rev).split(" ").length - 1;
    assert.equal([parents("main~2"), parents("main~1"), parents("main")], [2, 1, 2], "main holds a merge commit, a squash, a merge commit");
    assert.is(git(bare, "for-each-ref", "--format=%(refname)", "refs/heads/robot-army/"), "refs/heads/robot-army/issue-1-fix\nrefs/heads/robot-army/issue-3-fix", "the squashed branch is deleted, the merged ones stay");
    assert.is(git(bare, "rev-parse", `refs/pull/${pulls[1]}/head`), tips[1], "the squashed branch's commits are in its pull request's head ref");
    assert.is(git(bare, "branch", "--contains", tips[1]), "", "and on no branch");
    for (const issue of [1, 2, 3]) assert.is((await owner.rest.issues.get({ ...repo, issue_number: issue })).data.state, "closed");
  }));

test("a pull request closed by someone else is left alone; a merge the forge refuses is said once and tried again", () =>
  template.use(async ({ owner, seeded, forge, token }) => {
    makeBranch(seeded.repository.clone_url, "closed-by-hand", "a.txt");
    const closed = await owner.rest.pulls.create({ ...repo, title: "Closed by hand", head: "closed-by-hand", base: "main", body: "Closes #1" });
    await owner.rest.pulls.update({ ...repo, pull_number: closed.data.number, state: "closed" });
    // Two branches writing the same file differently: once the first is merged, the second conflicts.
    makeBranch(seeded.repository.clone_url, "first", "same.txt", "first\n");
    makeBranch(seeded.repository.clone_url, "second", "same.txt", "second\n");
    const first = await owner.rest.pulls.create({ ...repo, title: "First", head: "first", base: "main", body: "Closes #2" });
    const second = await owner.rest.pulls.create({ ...repo, title: "Second", head: "second", base: "main", body: "Closes #3" });
    const lines: string[] = [];
    let looks = 0;
    const play = playTheOwner({
      apiBase: forge.url, token: token("owner"), repo: "demo/widgets", mergeAfterMs: 0, lookEveryMs: 50,
      write: (text) => lines.push(...text.split("\n").filter(Boolean)),
      beforeMerge: (seen) => {
        if (seen.number === second.data.number) looks++;
        return undefined;
      },
    });
    try {
      await waitFor("the second merge tried again", () => looks >= 3);
      assert.ok(play.merged.has(first.data.number));
      assert.not.ok(play.merged.has(second.data.number));
      assert.not.ok(play.merged.has(closed.data.number));
      assert.is((await owner.rest.pulls.get({ ...repo, pull_number: closed.data.number })).data.merged, false);
      assert.is((await owner.rest.issues.get({ ...repo, issue_number: 1 })).data.state, "open", "nothing the owner did closed #1");
      const refusals = lines.filter((line) => line.startsWith(`owner (rehearsal): could not merge demo/widgets#${second.data.number}: 405 `));
      assert.is(refusals.length, 1, lines.join("\n"));
      assert.match(refusals[0], "trying again");
      assert.is(lines.filter((line) => line.startsWith("pull request opened:")).length, 3, "each pull request is said once, closed ones too");
    } finally {
      await play.stop();
    }
    const said = lines.length;
    await sleep(200);
    assert.is(lines.length, said, "a stopped owner says nothing more");
  }));

test("an owner whose forge is gone says nothing and stops when asked", async () => {
  const lines: string[] = [];
  const play = playTheOwner({ apiBase: "http://127.0.0.1:9", token: "none", repo: "demo/widgets", lookEveryMs: 20, write: (text) => lines.push(text) });
  await sleep(200);
  await play.stop();
  assert.equal(lines, []);
});

test.run();
