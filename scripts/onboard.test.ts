import { test } from "uvu";
import * as assert from "uvu/assert";
import { forgeConfig, quickOptions, testStore } from "../lib/testing/github-kit.ts";
import { connectGitHub } from "../lib/boundaries/github.ts";
import { parse } from "../lib/cli.ts";
import { UsageError } from "../lib/errors.ts";
import { git } from "../lib/testing/fixtures.ts";
import { forgeTemplate } from "../lib/testing/forge.ts";
import { findRepo, loadForgeData, saveForgeData } from "../lib/forge/state.ts";
import { command, onboardOptions, run } from "./onboard.ts";
import { ReapprovalNeededError } from "../lib/repos/onboard.ts";
import { rejects } from "../lib/testing/rejects.ts";

const template = forgeTemplate();
test.after(() => template.remove());

test("onboard prints what it recorded, then that nothing changed, then a reapproval naming the change", () =>
  template.use(async (t) => {
    const config = await forgeConfig(t);
    const clone = config.repos["demo/widgets"].path;
    git(t.tmp, "clone", "--quiet", t.seeded.repository.clone_url, clone);
    const store = await testStore(t);
    try {
      const github = await connectGitHub(config, store, quickOptions());
      const onboard = async (...argv: string[]) => {
        let text = "";
        await run(onboardOptions(parse(command, ["demo/widgets", ...argv])), { config, store, github, write: (chunk) => (text += chunk) });
        return text;
      };
      const first = await onboard();
      assert.match(first, /^onboarded   demo\/widgets\n/);
      assert.match(first, `\nclone       ${clone}\norigin      ${t.seeded.repository.clone_url}\n`);
      assert.match(first, 'settings    allow_merge_commit true, allow_rebase_merge false, allow_squash_merge true, archived false, default_branch "main"');
      assert.match(first, 'recorded    at ');
      assert.match(await onboard(), /^unchanged   demo\/widgets: onboarded at \S+, settings as approved\n/);
      const data = loadForgeData(t.dir);
      findRepo(data, "demo", "widgets")!.private = true;
      saveForgeData(t.dir, data);
      assert.match(await onboard("--reapprove"), /^reapproved  demo\/widgets: private false -> true, visibility "public" -> "private"\n/);
      const json = JSON.parse(await onboard("--json"));
      assert.equal([json.repo, json.outcome, json.state, json.path, json.fingerprint.private], ["demo/widgets", "unchanged", "onboarded", clone, true]);
      // For a script: --yes approves a change as --reapprove does, never stopping for it.
      findRepo(data, "demo", "widgets")!.private = false;
      saveForgeData(t.dir, data);
      await rejects(onboard(), ReapprovalNeededError);
      assert.match(await onboard("--yes"), /^reapproved  demo\/widgets: private true -> false, visibility "private" -> "public"\n/);
    } finally {
      store.close();
    }
  }));

test("a repository not written owner/name is a usage error with the help", () => {
  for (const bad of ["widgets", "demo/widgets/extra", "demo/widgets#3", "https://github.com/demo/widgets"]) {
    assert.throws(() => onboardOptions(parse(command, [bad])), (e: unknown) => e instanceof UsageError && e.help?.startsWith("Usage: robot-army onboard") === true);
  }
});

test.run();
