import { test } from "uvu";
import * as assert from "uvu/assert";
import { join } from "node:path";
import { parse } from "../lib/cli.ts";
import type { CommandDef } from "../lib/cli.ts";
import { hold, pause } from "../lib/dispatch/controls.ts";
import { recordTrust } from "../lib/intake/issue-trust.ts";
import { raiseAnomaly } from "../lib/store/anomalies.ts";
import type { Store } from "../lib/store/open.ts";
import { atTime, configWithRepos, makeItem, onboard, withStore } from "../lib/testing/items.ts";
import { recordSession } from "../lib/work-items/sessions.ts";
import { transition } from "../lib/work-items/transition.ts";
import { webApp } from "../lib/web/app.ts";
import { webContext } from "../lib/web/context.ts";
import { webAccess } from "../lib/web/security.ts";
import { COMMANDS } from "./robot-army.ts";
import { run } from "./serve.ts";
import { UsageError } from "../lib/errors.ts";
import { rejects } from "../lib/testing/rejects.ts";

const base = await configWithRepos({ "demo/widgets": 0, "demo/gadgets": 0 });
const config = { ...base, github: { ...base.github, author: "owner" } };

/**
 * One item of each kind the first page shows: failed, asking its owner (needs_info),
 * interrupted, held by the owner, held for the owner's approval, in a repository not
 * onboarded here; the pause; an anomaly; and an active one with a session.
 */
function everyCard(store: Store): void {
  atTime("2026-01-15T10:00:00Z", () => {
    onboard(store, "demo/widgets");
    makeItem(store, { issue: 1, state: "failed" });
    const asking = makeItem(store, { issue: 2, state: "active" });
    transition(store, asking.id, "needs_info", { reason: "worker asks: which database, Postgres or SQLite?" });
    const lost = makeItem(store, { issue: 3, state: "active" });
    transition(store, lost.id, "interrupted", { reason: "its session was lost" });
    const held = makeItem(store, { issue: 4 });
    hold(store, { item: held.id }, { reason: "after the release" });
    const edited = makeItem(store, { issue: 5 });
    recordTrust(store, edited, { labelledBy: "owner", editedBy: ["mallory"], renamedBy: [], title: edited.title, body: edited.body }, { author: "owner", label: "robot-army" });
    makeItem(store, { repo: "demo/gadgets", issue: 6 });
    makeItem(store, { issue: 7 });
    makeItem(store, { issue: 8 });
    const active = makeItem(store, { issue: 9, state: "active" });
    recordSession(store, {
      id: "5e551011-0000-4000-8000-000000000009", item: active.id, name: "ra-widgets-9", host: "testhost", launcher: "tmux",
      marker: "m", worktree: "/nonexistent", branch: "robot-army/issue-9", started_at: "2026-01-15T10:00:00Z", simulated: false,
    });
    pause(store, { reason: "release freeze" });
    raiseAnomaly(store, { kind: "orphan_worktree", detail: "a worktree no item claims: /w/x", repo: "demo/widgets" });
  });
}

/** The dashboard's JSON at `path`, asked as the browser asks (in process: the app's own fetch handler). */
async function api(stateDir: string, path: string): Promise<Record<string, unknown>> {
  const ctx = webContext(config, stateDir, join(stateDir, "sessions"));
  try {
    const response = await webApp(ctx, webAccess(config, "127.0.0.1", 0)).request(`http://127.0.0.1${path}`, { headers: { Host: "127.0.0.1" } });
    assert.is(response.status, 200, path);
    return await response.json() as Record<string, unknown>;
  } finally {
    ctx.close();
  }
}

type Card = { kind: string; item: { id: number } | null; what: string; commands: string[] };

test("the first page has a card for each thing that waits for you, each with why, in the order status lists them", () =>
  withStore(async (store, stateDir) => {
    everyCard(store);
    const { cards } = await api(stateDir, "/api/needs") as { cards: Card[] };
    assert.equal(cards.map((c) => [c.kind, c.item?.id ?? null]), [
      ["needs_info", 2], ["failed", 1], ["interrupted", 3], ["anomaly", null], ["paused", null], ["held", 4], ["held_for_owner", 5], ["untrusted", 6],
    ]);
    const by = (kind: string) => cards.find((c) => c.kind === kind)!;
    assert.is(by("needs_info").what, "which database, Postgres or SQLite?", "the worker's question, as it asked it");
    assert.equal(by("needs_info").commands, ["robot-army attach 2", "robot-army show 2"]);
    assert.is(by("paused").what, "release freeze");
    assert.is(by("held").what, "after the release");
    assert.match(by("held_for_owner").what, 'its body was edited by mallory; "robot-army approve 5" after reading it');
    assert.is(by("untrusted").what, "demo/gadgets not onboarded");
  }));

test("the queue page lists the ready items in dispatch order, and apart from it the held, the ones held for you and the untrusted", () =>
  withStore(async (store, stateDir) => {
    everyCard(store);
    const queue = await api(stateDir, "/api/queue") as { paused: { reason: string } | null; queue: Array<{ id: number; position: number }>; held: Array<{ id: number }>; held_for_owner: Array<{ id: number }>; untrusted: Array<{ id: number }> };
    assert.is(queue.paused?.reason, "release freeze");
    assert.equal(queue.queue.map((q) => [q.position, q.id]), [[1, 7], [2, 8]]);
    assert.equal([queue.held.map((h) => h.id), queue.held_for_owner.map((h) => h.id), queue.untrusted.map((u) => u.id)], [[4], [5], [6]]);
  }));

test("every command the dashboard prints for you runs: each is a robot-army command and its options parse", () =>
  withStore(async (store, stateDir) => {
    everyCard(store);
    const printed = new Set<string>();
    for (const card of ((await api(stateDir, "/api/needs")) as { cards: Card[] }).cards) card.commands.forEach((c) => printed.add(c));
    for (const id of [1, 2, 3, 4, 9]) {
      const page = await api(stateDir, `/api/items/${id}`) as { commands: Array<{ command: string }> };
      page.commands.forEach((c) => printed.add(c.command));
    }
    assert.ok(printed.size >= 12, [...printed].join("; "));
    for (const line of printed) {
      const [program, name, ...argv] = line.split(" ");
      assert.is(program, "robot-army", line);
      const entry = COMMANDS[name];
      assert.ok(entry, `"${line}": no command ${name}`);
      const def = (await entry.load()).command;
      // A family (session, worktree) takes its subcommand first; the dashboard prints none of those yet.
      assert.ok(!("subcommands" in def), `"${line}" names a family`);
      try {
        parse(def as CommandDef, argv);
      } catch (error) {
        assert.unreachable(`"${line}" does not parse: ${(error as Error).message}`);
      }
    }
  }));

test("--render of a live terminal refuses at once, naming why, instead of streaming for ever", () =>
  withStore(async (store, stateDir) => {
    everyCard(store);
    const started = performance.now();
    // A render that streams never returns: given up on after 10 s, which fails the test.
    const rendering = run({ render: "/api/items/9/terminal" }, { config, stateDir, sessionRoot: join(stateDir, "sessions"), write: () => {}, stop: new AbortController().signal });
    const gaveUp = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("--render of a live terminal did not return in 10 s")), 10_000).unref());
    const error = await rejects(Promise.race([rendering, gaveUp]), UsageError);
    assert.match(error.message, "--render prints a page, and /api/items/9/terminal is a live stream that never ends");
    assert.ok(performance.now() - started < 5_000);
    // A page still renders.
    let page = "";
    assert.is(await run({ render: "/api/needs" }, { config, stateDir, sessionRoot: join(stateDir, "sessions"), write: (chunk) => void (page += chunk), stop: new AbortController().signal }), 0);
    assert.match(page, '"cards"');
  }));

test.run();
