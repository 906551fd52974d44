import { test } from "uvu";
import * as assert from "uvu/assert";
import { PreconditionError } from "../errors.ts";
import { withStore } from "../testing/items.ts";
import { baseBranchOf, knownBaseBranch } from "./base-branch.ts";
import { recordApproval } from "./records.ts";

const repos = (base?: string) => ({ repos: { "demo/widgets": { path: "/src/widgets", max_sessions: 1, priority: 0, ...(base ? { base_branch: base } : {}) } } });

test("the base branch: the owner's base_branch, else the default branch approved at onboarding, else refused naming onboard", () =>
  withStore((store) => {
    const refused = (() => {
      try {
        baseBranchOf(store, repos(), "demo/widgets");
      } catch (error) {
        return error;
      }
    })();
    assert.instance(refused, PreconditionError);
    assert.match((refused as Error).message, 'run "robot-army onboard demo/widgets", or set [repos."demo/widgets"] base_branch');
    assert.is(knownBaseBranch(store, repos(), "demo/widgets"), undefined);
    assert.is(baseBranchOf(store, repos("develop"), "demo/widgets"), "develop", "configured, it needs no onboarding");

    recordApproval(store, "demo/widgets", "/src/widgets", { default_branch: "trunk", private: false, path: "/src/widgets" });
    assert.is(baseBranchOf(store, repos(), "demo/widgets"), "trunk");
    assert.is(baseBranchOf(store, repos("develop"), "demo/widgets"), "develop", "the owner's setting wins over GitHub's default");
  }));

test.run();
