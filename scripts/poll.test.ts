import { test } from "uvu";
import * as assert from "uvu/assert";
import { forgeConfig, quickOptions, testStore } from "../lib/testing/github-kit.ts";
import { connectGitHub } from "../lib/boundaries/github.ts";
import { parse } from "../lib/cli.ts";
import type { Config } from "../lib/config.ts";
import { wireEffects } from "../lib/effects.ts";
import type { EffectLevel } from "../lib/effects.ts";
import { PreconditionError } from "../lib/errors.ts";
import { forgeTemplate } from "../lib/testing/forge.ts";
import type { TestForge } from "../lib/testing/forge.ts";
import { fingerprintOf } from "../lib/repos/fingerprint.ts";
import { recordApproval } from "../lib/repos/records.ts";
import { command, pollOptions, run } from "./poll.ts";

const template = forgeTemplate();
test.after(() => template.remove());

/** Runs `poll` with argv against the test forge; returns its exit code and output. */
async function poll(t: TestForge, argv: string[], config?: Config, level: EffectLevel = "plan") {
  config ??= await forgeConfig(t);
  const store = await testStore(t);
  try {
    const github = await connectGitHub(config, store, quickOptions());
    const path = config.repos["demo/widgets"].path;
    recordApproval(store, "demo/widgets", path, fingerprintOf(await github.getRepository("demo/widgets"), path));
    let out = "";
    const code = await run(pollOptions(parse(command, argv), config), {
      config, store, reader: github, effects: wireEffects(level, { github: github.writer }), host: "testhost", write: (text) => void (out += text),
    });
    return { code, out };
  } finally {
    store.close();
  }
}

test("without github.author poll takes nothing and says why (exit 3)", () =>
  template.use(async (t) => {
    const config = await forgeConfig(t, { author: undefined });
    assert.throws(() => pollOptions(parse(command, []), config), (e: unknown) =>
      e instanceof PreconditionError && e.exitCode === 3 && /No github.author is configured, so poll takes nothing/.test(e.message));
  }));

test("--repo must name a configured repository", () =>
  template.use(async (t) => {
    const config = await forgeConfig(t);
    assert.throws(() => pollOptions(parse(command, ["--repo", "demo/other"]), config), /Repository "demo\/other" is not in the config \(configured: demo\/widgets\)/);
    assert.equal(pollOptions(parse(command, ["--repo", "demo/widgets"]), config).repos, ["demo/widgets"]);
  }));

test("the text report: each item, the would-comment lines, the counts, the ignored issue and the queue", () =>
  template.use(async (t) => {
    const { code, out } = await poll(t, []);
    assert.is(code, 0);
    const lines = out.trimEnd().split("\n");
    assert.equal(lines, [
      `effect level plan: nothing is written to GitHub; writes are printed as "would ..."`,
      "demo/widgets#1: new work item 1, ready",
      "would comment on demo/widgets#1: robot-army queued this issue as work item 1 on testhost.",
      "demo/widgets#2: new work item 2, ready",
      "would comment on demo/widgets#2: robot-army queued this issue as work item 2 on testhost.",
      "demo/widgets#3: new work item 3, ready",
      "would comment on demo/widgets#3: robot-army queued this issue as work item 3 on testhost.",
      "demo/widgets: 3 new, 0 done, 0 abandoned, 1 ignored; 2 requests, 0 not modified",
      "  ignored 1 issue not opened by owner: #4",
      "queue: 0 ready (3 simulated left out; --include-simulated counts them)",
    ]);
  }));

test("--json: the same as data; --include-simulated counts simulated items in the queue", () =>
  template.use(async (t) => {
    const { code, out } = await poll(t, ["--json", "--include-simulated"]);
    assert.is(code, 0);
    const report = JSON.parse(out);
    assert.equal([report.effects, report.queue], [{ level: "plan", simulated: true }, { ready: 0, simulated: 3, include_simulated: true }]);
    const [repo] = report.repositories;
    assert.equal([repo.repo, repo.new, repo.ignored, repo.requests, repo.not_modified, repo.error], ["demo/widgets", 3, 1, 2, 0, null]);
    assert.ok(repo.events.some((e: { event: string; simulated?: boolean }) => e.event === "comment" && e.simulated));
  }));

test("at live the report says where the comment is", () =>
  template.use(async (t) => {
    const { out } = await poll(t, [], undefined, "live");
    assert.match(out, /^commented on demo\/widgets#1: http:\/\/127\.0\.0\.1:\d+\/demo\/widgets\/issues\/1#issuecomment-\d+$/m);
    assert.not.match(out, /effect level/);
    assert.match(out, /^queue: 3 ready$/m);
  }));

test("a repository that cannot be read is reported, the others are polled, and the exit is 1", () =>
  template.use(async (t) => {
    const base = await forgeConfig(t);
    const config: Config = { ...base, repos: { ...base.repos, "demo/nothing": { ...base.repos["demo/widgets"] } } };
    const { code, out } = await poll(t, [], config);
    assert.is(code, 1);
    assert.match(out, "demo/widgets: 3 new");
    assert.match(out, "demo/nothing: failed: GitHub answered 404 to GET /repos/demo/nothing/issues: Not Found");
  }));

test.run();
