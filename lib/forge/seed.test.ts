import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Octokit } from "@octokit/rest";
import { git, withTempDir } from "../testing/fixtures.ts";
import { seedForge } from "./seed.ts";
import { startForge } from "./server.ts";
import { loadForgeData } from "./state.ts";

const at = () => new Date("2026-01-15T10:00:00Z");
const mode = (path: string) => statSync(path).mode & 0o777;

test("seeding makes owner and stranger with 0600 token files, the repository, its label and its issues", () =>
  withTempDir(async (tmp) => {
    const dir = join(tmp, "forge");
    const seeded = await seedForge(dir, { now: at });
    assert.equal(seeded.repository, { full_name: "demo/widgets", clone_url: join(dir, "git/demo/widgets.git"), default_branch: "main" });
    assert.equal(seeded.users, [
      { login: "owner", token_file: join(dir, "tokens/owner"), trusted: true },
      { login: "stranger", token_file: join(dir, "tokens/stranger"), trusted: false },
    ]);
    assert.equal(seeded.issues, { labelled: [1, 2, 3], stranger: [4], unlabelled: [5] });
    assert.equal(seeded.created, { users: ["owner", "stranger"], repository: true, issues: [1, 2, 3, 4, 5] });
    for (const user of seeded.users) {
      assert.is(mode(user.token_file), 0o600, `${user.token_file} is readable by its owner only`);
      assert.match(readFileSync(user.token_file, "utf8"), /^ghp_[A-Za-z0-9]{36}$/);
    }
    assert.is(mode(join(dir, "tokens")), 0o700);
    assert.is(mode(dir), 0o700, "the forge's folder holds tokens, so it is private");
    const data = loadForgeData(dir);
    const repo = data.repos[0];
    assert.equal(repo.labels.map((l) => l.name), ["robot-army"]);
    assert.equal(repo.issues.map((i) => [i.number, i.user, i.labels]), [
      [1, "owner", ["robot-army"]],
      [2, "owner", ["robot-army"]],
      [3, "owner", ["robot-army"]],
      [4, "stranger", ["robot-army"]],
      [5, "owner", []],
    ]);
    assert.ok(repo.issues.every((i) => i.created_at === "2026-01-15T10:00:00Z"));
    assert.match(git(seeded.repository.clone_url, "log", "--format=%s", "main"), "Initial commit");
    git(tmp, "clone", "--quiet", seeded.repository.clone_url, join(tmp, "clone"));
    assert.match(readFileSync(join(tmp, "clone/README.md"), "utf8"), "# widgets");
  }));

test("seeding again adds nothing: same users, tokens, numbers and commit", () =>
  withTempDir(async (dir) => {
    const first = await seedForge(dir, { now: at });
    const tokens = first.users.map((u) => readFileSync(u.token_file, "utf8"));
    const head = git(first.repository.clone_url, "rev-parse", "main");
    const second = await seedForge(dir, { now: () => new Date("2026-02-01T00:00:00Z") });
    assert.equal(second.created, { users: [], repository: false, issues: [] });
    assert.equal(second.issues, first.issues);
    assert.equal(second.users.map((u) => readFileSync(u.token_file, "utf8")), tokens);
    assert.is(git(first.repository.clone_url, "rev-parse", "main"), head);
    const data = loadForgeData(dir);
    assert.is(data.users.length, 3, "owner, stranger and the organisation demo");
    assert.is(data.repos.length, 1);
    assert.is(data.repos[0].issues.length, 5);
    assert.is(data.repos[0].labels.length, 1);
  }));

test("seeding again repairs a token file's mode and adds only the issues a larger count asks for", () =>
  withTempDir(async (dir) => {
    const first = await seedForge(dir, { now: at });
    chmodSync(first.users[0].token_file, 0o644);
    const second = await seedForge(dir, { issues: 5, now: at });
    assert.is(mode(first.users[0].token_file), 0o600);
    assert.equal(second.created.issues, [6, 7]);
    assert.equal(second.issues.labelled, [1, 2, 3, 6, 7]);
  }));

test("a second repository shares the users; a bad repository name is refused", () =>
  withTempDir(async (dir) => {
    await seedForge(dir, { now: at });
    const other = await seedForge(dir, { repo: "acme/rockets", issues: 1, now: at });
    assert.equal(other.created, { users: [], repository: true, issues: [1, 2, 3] });
    assert.is(loadForgeData(dir).repos.length, 2);
    for (const repo of ["widgets", "a/b/c", "a/ b"]) {
      try {
        await seedForge(dir, { repo });
        assert.unreachable(`"${repo}" is not owner/name`);
      } catch (error) {
        assert.instance(error, RangeError);
        assert.match((error as Error).message, `"${repo}"`);
      }
    }
  }));

test("a running forge serves what is seeded beside it, and its tokens authenticate", () =>
  withTempDir(async (dir) => {
    const forge = await startForge({ dir });
    try {
      const seeded = await seedForge(dir, { now: at });
      const owner = new Octokit({ baseUrl: forge.url, auth: readFileSync(seeded.users[0].token_file, "utf8") });
      const list = await owner.rest.issues.listForRepo({ owner: "demo", repo: "widgets", labels: "robot-army", creator: "owner" });
      assert.equal(list.data.map((i) => i.number), [3, 2, 1]);
      await owner.rest.issues.createComment({ owner: "demo", repo: "widgets", issue_number: 1, body: "hello" });
      await seedForge(dir, { now: at });
      const comments = await owner.rest.issues.listComments({ owner: "demo", repo: "widgets", issue_number: 1 });
      assert.is(comments.data.length, 1, "reseeding beside a running forge keeps what the forge wrote");
    } finally {
      await forge.close();
    }
  }));

test("a state file that is not a forge's is refused, naming the file, and left as it was", () =>
  withTempDir(async (dir) => {
    writeFileSync(join(dir, "state.json"), "{ half a state");
    for (const attempt of [() => seedForge(dir), () => startForge({ dir })]) {
      try {
        await attempt();
        assert.unreachable("a broken state file is not an empty forge");
      } catch (error) {
        assert.match((error as Error).message, `Cannot read forge state "${join(dir, "state.json")}"`);
      }
    }
    assert.is(readFileSync(join(dir, "state.json"), "utf8"), "{ half a state");
  }));

test.run();
