import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { forgeConfig, quickOptions, testStore } from "../testing/github-kit.ts";
import { connectGitHub } from "../boundaries/github.ts";
import type { GitHubRepository } from "../boundaries/github-types.ts";
import type { Config } from "../config.ts";
import { PreconditionError } from "../errors.ts";
import { git } from "../testing/fixtures.ts";
import { rejects } from "../testing/rejects.ts";
import { forgeTemplate } from "../testing/forge.ts";
import type { TestForge } from "../testing/forge.ts";
import { findRepo, loadForgeData, saveForgeData } from "../forge/state.ts";
import type { ForgeRepo } from "../forge/state.ts";
import { queryAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { AgentFilesUnreadable } from "./agent-files.ts";
import { ReapprovalNeededError, checkFingerprint, mayDispatch, onboardRepository, readBaseAgentFiles } from "./onboard.ts";
import { getRepoRecord } from "./records.ts";

const template = forgeTemplate();
test.after(() => template.remove());

/** A forge, a real clone of demo/widgets at the path the config names, a store and a connection. */
function withOnboarding(fn: (o: { t: TestForge; config: Config; store: Store; github: Awaited<ReturnType<typeof connectGitHub>>; clone: string }) => Promise<void>) {
  return template.use(async (t) => {
    const config = await forgeConfig(t);
    const clone = config.repos["demo/widgets"].path;
    git(t.tmp, "clone", "--quiet", t.seeded.repository.clone_url, clone);
    const store = await testStore(t);
    try {
      await fn({ t, config, store, github: await connectGitHub(config, store, quickOptions()), clone });
    } finally {
      store.close();
    }
  });
}

/** Changes demo/widgets on the forge behind its back (the forge reloads its state file). */
function changeForgeRepo(t: TestForge, change: (repo: ForgeRepo) => void): void {
  const data = loadForgeData(t.dir);
  change(findRepo(data, "demo", "widgets")!);
  saveForgeData(t.dir, data);
}

async function refusal(call: Promise<unknown>): Promise<PreconditionError> {
  try {
    await call;
  } catch (error) {
    assert.instance(error, PreconditionError, `unexpected error: ${(error as Error).stack}`);
    assert.is((error as PreconditionError).exitCode, 3);
    return error as PreconditionError;
  }
  throw new Error("Expected a refusal, and the call succeeded");
}

const repoAudit = (store: Store) => queryAudit(store, { kind: "repo" }).map((r) => r.kind);

test("onboarding a clone of the forge's repository records its fingerprint and an audit record", () =>
  withOnboarding(async ({ config, store, github, clone }) => {
    const result = await onboardRepository(store, github, config, "demo/widgets");
    assert.is(result.outcome, "onboarded");
    const record = getRepoRecord(store, "demo/widgets")!;
    assert.equal([record.state, record.path, record.seen], ["onboarded", clone, null]);
    assert.equal(
      [record.fingerprint.default_branch, record.fingerprint.private, record.fingerprint.path, record.fingerprint.visibility],
      ["main", false, clone, "public"],
    );
    const [audit] = queryAudit(store, { kind: "repo.onboarded" });
    assert.equal([audit.repo, audit.body.path, audit.body.fingerprint], ["demo/widgets", clone, record.fingerprint]);
    assert.ok(mayDispatch(store, "demo/widgets"));
  }));

test("onboarding again with the same settings changes nothing and writes nothing", () =>
  withOnboarding(async ({ config, store, github }) => {
    await onboardRepository(store, github, config, "demo/widgets");
    const again = await onboardRepository(store, github, config, "demo/widgets");
    assert.is(again.outcome, "unchanged");
    assert.equal(repoAudit(store), ["repo.onboarded"]);
  }));

test("a clone whose origin is another repository is refused, naming origin and what was expected", () =>
  withOnboarding(async ({ t, config, store, github }) => {
    const other = join(t.tmp, "other");
    mkdirSync(other);
    git(other, "init", "--quiet");
    git(other, "remote", "add", "origin", "https://github.com/someone/gadgets.git");
    const wrong = { ...config, repos: { "demo/widgets": { ...config.repos["demo/widgets"], path: other } } };
    const error = await refusal(onboardRepository(store, github, wrong, "demo/widgets"));
    assert.is(
      error.message,
      `Clone "${other}" is not demo/widgets: its origin is "https://github.com/someone/gadgets.git", expected "${t.seeded.repository.clone_url}"`,
    );
    assert.is(getRepoRecord(store, "demo/widgets"), undefined, "nothing is recorded");
    assert.equal(repoAudit(store), []);
  }));

test("a repository missing from the config, a missing clone, a plain folder, a subfolder and a clone without origin are refused", () =>
  withOnboarding(async ({ t, config, store, github, clone }) => {
    const at = (path: string) => ({ ...config, repos: { "demo/widgets": { ...config.repos["demo/widgets"], path } } });
    assert.match((await refusal(onboardRepository(store, github, config, "demo/gadgets"))).message,
      /^Repository "demo\/gadgets" is not in the config \(it names "demo\/widgets"\): add a \[repos."demo\/gadgets"\] table/);
    assert.match((await refusal(onboardRepository(store, github, at(join(t.tmp, "gone")), "demo/widgets"))).message, /is missing: ".*gone" does not exist/);
    mkdirSync(join(t.tmp, "plain"));
    assert.match((await refusal(onboardRepository(store, github, at(join(t.tmp, "plain")), "demo/widgets"))).message, /is not a git repository/);
    mkdirSync(join(clone, "src"));
    assert.match((await refusal(onboardRepository(store, github, at(join(clone, "src")), "demo/widgets"))).message, /must be the top of a git repository: ".*src" is inside/);
    git(clone, "remote", "remove", "origin");
    assert.match((await refusal(onboardRepository(store, github, config, "demo/widgets"))).message, /has no remote "origin"/);
    assert.equal(repoAudit(store), []);
  }));

test("each spelling of a GitHub origin is taken for the repository, read from a real clone", () =>
  withOnboarding(async ({ config, store, clone }) => {
    const repository: GitHubRepository = {
      full_name: "demo/widgets", default_branch: "main", private: false, settings: {},
      clone_url: "https://github.com/demo/widgets.git", html_url: "https://github.com/demo/widgets",
    };
    const github = { getRepository: async () => repository };
    for (const origin of ["https://github.com/demo/widgets.git", "https://github.com/demo/widgets", "git@github.com:demo/widgets.git", "ssh://git@github.com/demo/widgets"]) {
      git(clone, "remote", "set-url", "origin", origin);
      // Past the origin check, onboarding fetches the base branch to read its agent files:
      // github.com is not reached from a test, so that is where it stops, and nothing is recorded.
      const error = await onboardRepository(store, github, config, "demo/widgets").then(() => undefined, (e: Error) => e);
      assert.instance(error, AgentFilesUnreadable);
      assert.match(error!.message, /^The agent files of "demo\/widgets" on origin\/main could not be read: Cannot fetch branch "main"/);
      assert.is(getRepoRecord(store, "demo/widgets"), undefined);
    }
    git(clone, "remote", "set-url", "origin", "git@github.com:demo/widgets-fork.git");
    assert.match((await refusal(onboardRepository(store, github, config, "demo/widgets"))).message, /its origin is "git@github.com:demo\/widgets-fork.git"/);
  }));

test("changed settings make the repository need reapproval, stop dispatch, and --reapprove records them", () =>
  withOnboarding(async ({ t, config, store, github }) => {
    await onboardRepository(store, github, config, "demo/widgets");
    changeForgeRepo(t, (repo) => void (repo.private = true));
    const error = await refusal(onboardRepository(store, github, config, "demo/widgets"));
    assert.instance(error, ReapprovalNeededError);
    assert.match(error.message, /changed since it was onboarded at .*: private false -> true, visibility "public" -> "private"; nothing is dispatched to it until "robot-army onboard demo\/widgets --reapprove"/);
    const waiting = getRepoRecord(store, "demo/widgets")!;
    assert.equal([waiting.state, waiting.fingerprint.private, waiting.seen?.private], ["needs_reapproval", false, true]);
    assert.not.ok(mayDispatch(store, "demo/widgets"));
    const [flagged] = queryAudit(store, { kind: "repo.needs_reapproval" });
    assert.equal(flagged.body.changes, [{ setting: "private", from: false, to: true }, { setting: "visibility", from: "public", to: "private" }]);

    await refusal(onboardRepository(store, github, config, "demo/widgets"));
    assert.equal(repoAudit(store), ["repo.onboarded", "repo.needs_reapproval"], "refusing again records nothing new");

    const result = await onboardRepository(store, github, config, "demo/widgets", { reapprove: true });
    assert.equal([result.outcome, result.changes.map((c) => c.setting)], ["reapproved", ["private", "visibility"]]);
    const approved = getRepoRecord(store, "demo/widgets")!;
    assert.equal([approved.state, approved.fingerprint.private, approved.seen], ["onboarded", true, null]);
    assert.ok(mayDispatch(store, "demo/widgets"));
    assert.equal(repoAudit(store), ["repo.onboarded", "repo.needs_reapproval", "repo.reapproved"]);
  }));

test("checkFingerprint: unchanged writes nothing; a change is audited once; a never-onboarded repository is not read", () =>
  withOnboarding(async ({ t, config, store, github, clone }) => {
    const refuseReads = {
      getRepository: async (): Promise<GitHubRepository> => {
        throw new Error("a repository never onboarded is not read");
      },
    };
    assert.equal(await checkFingerprint(store, refuseReads, { name: "demo/widgets", path: clone }), { name: "demo/widgets", state: "not_onboarded", changes: [], changedNow: false });
    await onboardRepository(store, github, config, "demo/widgets");
    assert.equal(await checkFingerprint(store, github, { name: "demo/widgets", path: clone }), { name: "demo/widgets", state: "onboarded", changes: [], changedNow: false });
    changeForgeRepo(t, (repo) => void (repo.default_branch = "trunk"));
    const changed = await checkFingerprint(store, github, { name: "demo/widgets", path: clone });
    assert.equal([changed.state, changed.changedNow, changed.changes], ["needs_reapproval", true, [{ setting: "default_branch", from: "main", to: "trunk" }]]);
    const again = await checkFingerprint(store, github, { name: "demo/widgets", path: clone });
    assert.equal([again.state, again.changedNow], ["needs_reapproval", false]);
    assert.equal(repoAudit(store), ["repo.onboarded", "repo.needs_reapproval"]);
  }));

test("the agent files are read after a fetch of the base branch, or, told not to fetch (a dry run), at origin/<base> as last fetched, the clone left as it was", () =>
  withOnboarding(async ({ t, clone }) => {
    const before = git(clone, "rev-parse", "refs/remotes/origin/main").trim();
    // A commit lands on the forge's main after the clone was made.
    const other = join(t.tmp, "other");
    git(t.tmp, "clone", "--quiet", t.seeded.repository.clone_url, other);
    git(other, "commit", "--quiet", "--allow-empty", "-m", "Later on main");
    git(other, "push", "--quiet", "origin", "main");
    const unfetched = await readBaseAgentFiles({ name: "demo/widgets", path: clone, base: "main" }, { fetch: false });
    assert.is(unfetched.commit, before);
    assert.is(git(clone, "rev-parse", "refs/remotes/origin/main").trim(), before, "nothing fetched into the clone");
    const fetched = await readBaseAgentFiles({ name: "demo/widgets", path: clone, base: "main" });
    assert.is(fetched.commit, git(other, "rev-parse", "HEAD").trim());
    await rejects(readBaseAgentFiles({ name: "demo/widgets", path: clone, base: "never-fetched" }, { fetch: false }), AgentFilesUnreadable);
  }));

test("checkFingerprint: a moved clone is a change; settings changed back still wait for the owner", () =>
  withOnboarding(async ({ t, config, store, github, clone }) => {
    await onboardRepository(store, github, config, "demo/widgets");
    const moved = await checkFingerprint(store, github, { name: "demo/widgets", path: join(t.tmp, "elsewhere") });
    assert.equal(moved.changes, [{ setting: "path", from: clone, to: join(t.tmp, "elsewhere") }]);
    const back = await checkFingerprint(store, github, { name: "demo/widgets", path: clone });
    assert.equal([back.state, back.changes, back.changedNow], ["needs_reapproval", [], true]);
    const error = await refusal(onboardRepository(store, github, config, "demo/widgets"));
    assert.match(error.message, /they changed and are back as approved/);
    assert.is((await onboardRepository(store, github, config, "demo/widgets", { reapprove: true })).outcome, "reapproved");
  }));

test.run();
