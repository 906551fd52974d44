import { test } from "uvu";
import * as assert from "uvu/assert";
import { forgeConfig, quickOptions, testStore } from "../lib/testing/github-kit.ts";
import { connectGitHub } from "../lib/boundaries/github.ts";
import type { Config } from "../lib/config.ts";
import { git } from "../lib/testing/fixtures.ts";
import { forgeTemplate } from "../lib/testing/forge.ts";
import type { TestForge } from "../lib/testing/forge.ts";
import { findRepo, loadForgeData, saveForgeData } from "../lib/forge/state.ts";
import { onboardRepository } from "../lib/repos/onboard.ts";
import { getRepoRecord } from "../lib/repos/records.ts";
import { makeItem, onboard } from "../lib/testing/items.ts";
import { queryAudit } from "../lib/store/audit.ts";
import type { Store } from "../lib/store/open.ts";
import { run } from "./repos.ts";
import type { ReposDeps, RepoLine } from "./repos.ts";

const template = forgeTemplate();
test.after(() => template.remove());

async function repos(config: Config, store: Store | undefined, connect: ReposDeps["connect"], json = false): Promise<string> {
  let text = "";
  await run({ json }, { config, store, connect, write: (chunk) => (text += chunk) });
  return text;
}

/** A forge, a clone where the config says, and a store. */
function withForge(fn: (t: TestForge, config: Config, store: Store) => Promise<void>) {
  return template.use(async (t) => {
    const config = await forgeConfig(t);
    git(t.tmp, "clone", "--quiet", t.seeded.repository.clone_url, config.repos["demo/widgets"].path);
    const store = await testStore(t);
    try {
      await fn(t, config, store);
    } finally {
      store.close();
    }
  });
}

const noGitHub: ReposDeps["connect"] = () => Promise.reject(new Error("GitHub is not read when nothing is onboarded"));

test("a configured repository not onboarded yet says how to onboard it, without reading GitHub", () =>
  withForge(async (_t, config) => {
    const path = config.repos["demo/widgets"].path;
    assert.is(await repos(config, undefined, noGitHub), [
      'demo/widgets  not onboarded: "robot-army onboard demo/widgets" approves it',
      `  path       ${path}`,
      "  priority   0, at most 1 session",
      "  items      no live items",
      "",
    ].join("\n"));
  }));

test("an onboarded repository shows when, and its live items by state, simulated ones apart", () =>
  withForge(async (_t, config, store) => {
    const github = await connectGitHub(config, store, quickOptions());
    const { record } = await onboardRepository(store, github, config, "demo/widgets");
    makeItem(store, { issue: 1 });
    makeItem(store, { issue: 2, state: "active" });
    makeItem(store, { issue: 3, state: "abandoned" });
    makeItem(store, { issue: 4, simulated: true });
    const text = await repos(config, store, async () => github);
    assert.match(text, `demo/widgets  onboarded at ${record.onboarded_at}\n`);
    assert.match(text, "  items      2 live (ready 1, active 1); 1 simulated\n");
    const [line] = JSON.parse(await repos(config, store, async () => github, true)) as RepoLine[];
    assert.equal([line.state, line.checked, line.live_items, line.by_state, line.simulated_live_items], ["onboarded", true, 2, { ready: 1, active: 1 }, 1]);
  }));

test("settings changed on GitHub are seen by repos: the repository needs reapproval, audited", () =>
  withForge(async (t, config, store) => {
    const github = await connectGitHub(config, store, quickOptions());
    await onboardRepository(store, github, config, "demo/widgets");
    const data = loadForgeData(t.dir);
    findRepo(data, "demo", "widgets")!.default_branch = "trunk";
    saveForgeData(t.dir, data);
    const text = await repos(config, store, async () => github);
    assert.match(text, 'demo/widgets  needs reapproval: default_branch "main" -> "trunk"; "robot-army onboard demo/widgets --reapprove" approves the settings as they are\n');
    assert.is(getRepoRecord(store, "demo/widgets")!.state, "needs_reapproval");
    assert.equal(queryAudit(store, { kind: "repo." }).map((r) => r.kind), ["repo.onboarded", "repo.needs_reapproval"]);
  }));

test("when GitHub cannot be read, the recorded state is shown and says it was not checked", () =>
  withForge(async (_t, config, store) => {
    onboard(store, "demo/widgets");
    const unreachable = async (): Promise<never> => {
      throw new Error("GitHub did not answer to GET /repos/demo/widgets: connection refused");
    };
    const text = await repos(config, store, unreachable);
    assert.match(text, "demo/widgets  onboarded at ");
    assert.match(text, "  settings   not checked now: GitHub did not answer to GET /repos/demo/widgets: connection refused\n");
    const [line] = JSON.parse(await repos(config, store, unreachable, true)) as RepoLine[];
    assert.equal([line.state, line.checked, line.check_error], ["onboarded", false, "GitHub did not answer to GET /repos/demo/widgets: connection refused"]);
  }));

test("an onboarded repository the config no longer names is still listed, and no repositories at all says what to do", () =>
  withForge(async (_t, config, store) => {
    onboard(store, "demo/old");
    const text = await repos(config, store, noGitHub);
    assert.match(text, "demo/old  onboarded at ");
    assert.match(text, "  config     not in the config any more: nothing is dispatched to it\n");
    assert.match(text, "  path       /src/old\n");
    assert.not.match(text, "not checked");
    const none = { ...config, repos: {} };
    assert.match(await repos(none, undefined, noGitHub), /^no repositories: add a \[repos."owner\/name"\] table/);
  }));

test.run();
