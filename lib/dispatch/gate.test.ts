import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { findRepo, loadForgeData, saveForgeData } from "../forge/state.ts";
import { getItem } from "../work-items/queries.ts";
import { hold, pause } from "./controls.ts";
import { dispatchReady } from "./dispatch.ts";
import { gate } from "./gate.ts";
import { verbTemplate, withWorld } from "../testing/verbs.ts";

const template = verbTemplate();
test.after(() => template.remove());

test("force lifts the owner's brakes (pause, hold, cap) and nothing else", () =>
  withWorld(template, async ({ store, deps }) => {
    await dispatchReady(deps);
    const item = getItem(store, 2)!;
    // Item 1's worker fills the repository's one slot.
    const cap = await gate(deps, item);
    assert.equal([cap?.brake, cap?.everyItem], [true, false]);
    assert.match(cap!.reason, /demo\/widgets runs 1 of 1/);
    pause(store, { reason: "lunch" });
    hold(store, { item: 2 });
    assert.equal((await gate(deps, item))!.brake, true);
    assert.match((await gate(deps, item))!.reason, /^paused since/);
    assert.is(await gate(deps, item, { force: true }), undefined);
  }));

test("force never lifts a missing worker program or capacity that cannot be observed", () =>
  withWorld(template, async ({ store, deps }) => {
    const item = getItem(store, 1)!;
    const missing = { ...deps, config: { ...deps.config, worker: { ...deps.config.worker, binary: "/nonexistent-robot-army-test/agent" } } };
    assert.equal(await gate(missing, item, { force: true }), {
      reason: "the worker program /nonexistent-robot-army-test/agent does not exist (worker.binary)", brake: false, everyItem: true,
    });
    mkdirSync(deps.sessionRoot, { recursive: true });
    writeFileSync(join(deps.sessionRoot, "broken.json"), "{ not json");
    const unknown = await gate(deps, item, { force: true });
    assert.equal([unknown?.brake, unknown?.everyItem], [false, true]);
    assert.match(unknown!.reason, /^capacity cannot be observed: /);
  }));

test("a repository whose settings changed since it was approved is refused with the way out, forced or not; one never onboarded too", () =>
  withWorld(template, async ({ t, store, deps }) => {
    const item = getItem(store, 1)!;
    const data = loadForgeData(t.dir);
    findRepo(data, "demo", "widgets")!.private = true;
    saveForgeData(t.dir, data);
    const reapproval = { reason: 'repository demo/widgets needs reapproval; "robot-army onboard demo/widgets --reapprove"', brake: false, everyItem: false };
    assert.equal(await gate(deps, item), reapproval);
    assert.equal(await gate(deps, item, { force: true }), reapproval);
    store.statement("DELETE FROM repos").run();
    assert.equal((await gate(deps, item, { force: true }))?.reason, 'repository demo/widgets is not onboarded; "robot-army onboard demo/widgets"');
  }));

test.run();
