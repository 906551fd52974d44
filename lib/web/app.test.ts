import { test } from "uvu";
import * as assert from "uvu/assert";
import { join } from "node:path";
import { defaultConfig } from "../config.ts";
import type { Config } from "../config.ts";
import { listKeeps } from "../ending/keeps.ts";
import { rememberSecret } from "../redact.ts";
import { recordApproval } from "../repos/records.ts";
import { raiseAnomaly } from "../store/anomalies.ts";
import { appendAudit, queryAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { atTime, makeItem, withStore } from "../testing/items.ts";
import { recordSession } from "../work-items/sessions.ts";
import { keepFeedback } from "../intake/feedback.ts";
import { transition } from "../work-items/transition.ts";
import { pause } from "../dispatch/controls.ts";
import { notifiableSince } from "../notify/events.ts";
import { statusReport } from "../reports/status.ts";
import { webApp } from "./app.ts";
import { webContext } from "./context.ts";
import { BODY_SHOWN, LOG_PAGE_SIZE } from "./pages/log.ts";
import { webAccess } from "./security.ts";
import { listen } from "./serve.ts";
import type { Listening } from "./serve.ts";

const config: Config = { ...(await defaultConfig()), worker: { ...(await defaultConfig()).worker, binary: "sh", profile: "generic" } };

/** A store with one item in each state the pages show: failed, interrupted, active with a session, and an anomaly. */
function world(store: Store): void {
  atTime("2026-01-15T10:00:00Z", () => {
    makeItem(store, { issue: 1, state: "failed", title: "Broken <b>build</b>" });
    const interrupted = makeItem(store, { issue: 2, state: "active" });
    transition(store, interrupted.id, "interrupted", { reason: "its session was lost" });
    const active = makeItem(store, { issue: 3, state: "active", title: "Add a widget" });
    recordSession(store, {
      id: "5e551011-0000-4000-8000-000000000003", item: active.id, name: "ra-widgets-3", host: "testhost", launcher: "process",
      marker: "", worktree: "/nonexistent/worktree", branch: "robot-army/issue-3", started_at: "2026-01-15T10:00:00Z", simulated: false,
    });
    raiseAnomaly(store, { kind: "orphan_worktree", detail: "a worktree no item claims: /w/x", repo: "demo/widgets" });
  });
}

/** Serves the dashboard over `stateDir` on a free loopback port for `fn`. */
async function withDashboard(stateDir: string, fn: (base: string, server: Listening) => Promise<void>, using: Config = config): Promise<void> {
  const ctx = webContext(using, stateDir, join(stateDir, "sessions"));
  const server = await listen(webApp(ctx, webAccess(using, "127.0.0.1", 0)), "127.0.0.1", 0);
  try {
    await fn(server.url.replace(/\/$/, ""), server);
  } finally {
    await server.close();
    ctx.close();
  }
}

async function json(url: string): Promise<Record<string, unknown>> {
  const response = await fetch(url);
  assert.is(response.status, 200, url);
  return await response.json() as Record<string, unknown>;
}

/** The CSRF token a page's forms carry. */
async function csrfOf(url: string): Promise<string> {
  const page = await (await fetch(url)).text();
  const token = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
  assert.ok(token, `no form with a CSRF token on ${url}`);
  return token;
}

/** Presses a button: a form POST as a browser sends it. */
function press(base: string, action: string, csrf: string, back: string): Promise<Response> {
  return fetch(base + action, {
    method: "POST", redirect: "manual",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: base, Accept: "text/html" },
    body: new URLSearchParams({ csrf, back }).toString(),
  });
}

test("what needs you: the failed item with its reason, the interrupted one, the open anomaly, each with what to run, as a page and as JSON", () =>
  withStore(async (store, stateDir) => {
    world(store);
    await withDashboard(stateDir, async (base) => {
      const data = await json(`${base}/api/needs`) as { cards: Array<{ kind: string; item: { id: number } | null; what: string; commands: string[] }>; daemon: { verdict: string } };
      assert.equal(data.cards.map((c) => [c.kind, c.item?.id ?? null]), [["failed", 1], ["interrupted", 2], ["anomaly", null]]);
      assert.is(data.cards[0].what, "worktree could not be made: disk full");
      assert.equal(data.cards[1].commands, ["robot-army resume 2", "robot-army restart 2", "robot-army show 2"]);
      assert.is(data.daemon.verdict, "NEVER STARTED");
      const page = await (await fetch(`${base}/`)).text();
      assert.match(page, /<article class="card failed" data-item="1"/);
      assert.match(page, /worktree could not be made: disk full/);
      // A title from GitHub is text, never markup.
      assert.match(page, /Broken &lt;b&gt;build&lt;\/b&gt;/);
      assert.not.match(page, /<b>build/);
      assert.match(page, /<p id="freshness" data-live/);
    });
  }));

test("one \"needs you\": status's JSON, the dashboard's cards and the commands notifications suggest are the same, anomalies and the pause included", () =>
  withStore(async (store, stateDir) => {
    world(store);
    atTime("2026-01-15T10:05:00Z", () => {
      // A worker lost as the daemon finds one: its item interrupted, which notifications tell.
      const lost = makeItem(store, { issue: 7, state: "active" });
      transition(store, lost.id, "interrupted", { reason: "worker lost: no exit record" });
      pause(store, { reason: "release freeze" });
    });
    const shown = (needs: Array<{ kind: string; item: { id: number } | null; what: string; commands: string[] }>) => needs.map((n) => [n.kind, n.item?.id ?? null, n.what, n.commands]);
    const report = statusReport(store, config, false, stateDir);
    assert.equal(shown(report.needs_you).map(([kind, item]) => [kind, item]), [["failed", 1], ["interrupted", 2], ["interrupted", 4], ["anomaly", null], ["paused", null]], "the anomaly and the pause are in status's needs too");
    await withDashboard(stateDir, async (base) => {
      const data = await json(`${base}/api/needs`) as { cards: Array<{ kind: string; item: { id: number } | null; what: string; commands: string[] }> };
      assert.equal(shown(data.cards), shown(report.needs_you));
    });
    // What the owner's notifications suggest for the interrupted item and the anomaly is what status lists for them.
    const { found } = notifiableSince(store, 0, { host: "testhost", simulated: false });
    const lost = found.find((n) => n.message.about.item === 4 && n.event === "failure")!;
    const anomaly = found.find((n) => n.event === "anomaly")!;
    assert.equal([lost.message.commands, anomaly.message.commands], [report.needs_you[2].commands, report.needs_you[3].commands]);
  }));

test("what needs you: an item awaiting review is a card with its pull request linked, and what to run", () =>
  withStore(async (store, stateDir) => {
    atTime("2026-01-15T10:00:00Z", () => {
      const item = makeItem(store, { issue: 4, state: "active" });
      recordSession(store, {
        id: "5e551011-0000-4000-8000-000000000004", item: item.id, name: "ra-widgets-4", host: "testhost", launcher: "process",
        marker: "", worktree: "/nonexistent/worktree", branch: "robot-army/issue-4", started_at: "2026-01-15T10:00:00Z", simulated: false,
      });
      // What a refresh writes (lib/intake/pull-requests.test.ts reads them from the forge).
      store.statement("INSERT INTO pull_requests (repo, number, head_branch, head_sha, state, merged_at, updated_at, html_url, seen_at) VALUES ('demo/widgets', 12, 'robot-army/issue-4', 'abc', 'open', NULL, '2026-01-15T10:00:00Z', 'https://github.example/demo/widgets/pull/12', '2026-01-15T10:00:00Z')").run();
      store.statement("INSERT INTO pull_request_refreshes VALUES ('demo/widgets', '2026-01-15T10:00:00Z')").run();
      transition(store, item.id, "awaiting_review", { reason: "worker exited 0; pull request #12 is open" });
    });
    await withDashboard(stateDir, async (base) => {
      const data = await json(`${base}/api/needs`) as { cards: Array<{ kind: string; what: string; commands: string[]; review?: unknown }> };
      assert.equal(data.cards.map((c) => [c.kind, c.what, c.commands, c.review]), [[
        "awaiting_review", "worker exited 0; pull request #12 is open", ["robot-army show 1", "robot-army resume 1"],
        { number: 12, url: "https://github.example/demo/widgets/pull/12", merged: false },
      ]]);
      const page = await (await fetch(`${base}/`)).text();
      assert.match(page, /<article class="card awaiting_review" data-item="1"/);
      assert.match(page, /<h2>awaiting your review · /);
      assert.match(page, /review <a href="https:\/\/github.example\/demo\/widgets\/pull\/12" rel="noreferrer noopener">pull request #12<\/a>/);
    });
    // Your review comes back: it waits for a worker, so the card says so and puts resume first; the item's page lists it.
    keepFeedback(store, "demo/widgets", {
      item: 1, finished: false, source: "review", github_id: "77", pull_request: 12, author: "owner", what: "requested changes on pull request #12",
      body: "Rename <b>foo</b>.", url: "https://github.example/demo/widgets/pull/12#pullrequestreview-77", created_at: "2026-01-15T10:05:00Z",
    });
    await withDashboard(stateDir, async (base) => {
      const data = await json(`${base}/api/needs`) as { cards: Array<{ kind: string; what: string; commands: string[] }> };
      assert.equal(data.cards.map((c) => [c.what, c.commands]), [[
        "feedback waits for its worker (1): @owner requested changes on pull request #12; resume gives it to the worker", ["robot-army resume 1", "robot-army show 1"],
      ]]);
      const page = await (await fetch(`${base}/items/1`)).text();
      assert.match(page, '<h2>Feedback</h2>');
      assert.match(page, '@owner <a href="https://github.example/demo/widgets/pull/12#pullrequestreview-77" rel="noreferrer noopener">requested changes on pull request #12</a>');
      assert.match(page, "waiting for its worker to be idle (or to be resumed)");
      assert.match(page, "<blockquote>Rename &lt;b&gt;foo&lt;/b&gt;.</blockquote>", "its words escaped");
    });
  }));

test("the live parts of a page come alone with fragment=1, so a refresh replaces them and nothing else", () =>
  withStore(async (store, stateDir) => {
    world(store);
    await withDashboard(stateDir, async (base) => {
      const fragment = await (await fetch(`${base}/active?fragment=1`)).text();
      assert.not.match(fragment, /<html/);
      assert.match(fragment, /<p id="freshness" data-live/);
      assert.match(fragment, /<div id="active-sessions" data-live>/);
    });
  }));

test("active sessions: one row per open session, unknown idleness shown as unknown with why, capacity used", () =>
  withStore(async (store, stateDir) => {
    world(store);
    await withDashboard(stateDir, async (base) => {
      const data = await json(`${base}/api/active`) as { sessions: Array<{ item: { id: number }; session: { name: string }; activity: { status: string; why?: string } }>; capacity: { open: number; max: number } };
      assert.equal(data.sessions.map((s) => [s.item.id, s.session.name, s.activity.status]), [[3, "ra-widgets-3", "unknown"]]);
      assert.match(data.sessions[0].activity.why!, /worker profile generic: no registry/);
      assert.equal(data.capacity, { ...data.capacity, open: 1, max: config.daemon.max_concurrent_sessions });
      const page = await (await fetch(`${base}/active`)).text();
      assert.match(page, /<tr data-item="3">/);
      assert.match(page, /class="activity unknown"/);
    });
  }));

test("keep and release from the page: the row moves to the kept section, the CLI's keeps agree, each audited as the CLI audits it", () =>
  withStore(async (store, stateDir) => {
    world(store);
    await withDashboard(stateDir, async (base) => {
      const csrf = await csrfOf(`${base}/active`);
      const kept = await press(base, "/items/3/keep", csrf, "/active");
      assert.is(kept.status, 303);
      assert.is(kept.headers.get("location"), "/active");
      assert.equal(listKeeps(store).map((k) => [k.item, k.session?.name]), [[3, "ra-widgets-3"]]);
      assert.is(queryAudit(store, { kind: "keep.placed" }).length, 1);
      const data = await json(`${base}/api/active`) as { sessions: Array<{ kept: boolean }>; kept: Array<{ item: { id: number }; session: string | null }> };
      assert.equal(data.sessions.map((s) => s.kept), [true]);
      assert.equal(data.kept.map((k) => [k.item.id, k.session]), [[3, "ra-widgets-3"]]);
      const released = await press(base, "/items/3/unkeep", csrf, "/active");
      assert.is(released.status, 303);
      assert.equal(listKeeps(store), []);
      assert.is(queryAudit(store, { kind: "keep.released" }).length, 1);
    });
  }));

test("a keep the CLI would refuse is refused with its reason, and a back address off the site is not followed", () =>
  withStore(async (store, stateDir) => {
    world(store);
    await withDashboard(stateDir, async (base) => {
      const csrf = await csrfOf(`${base}/active`);
      atTime("2026-01-15T10:05:00Z", () => transition(store, 2, "abandoned", { reason: "given up" }));
      const refused = await press(base, "/items/2/keep", csrf, "/active");
      assert.is(refused.status, 409);
      assert.match(await refused.text(), /is abandoned: it never becomes done/);
      const offsite = await press(base, "/items/3/keep", csrf, "//evil.example/");
      assert.is(offsite.status, 303);
      assert.is(offsite.headers.get("location"), "/");
      const missing = await press(base, "/items/99/keep", csrf, "/");
      assert.is(missing.status, 409);
    });
  }));

test("an anomaly acknowledged from its page leaves the open list, audited", () =>
  withStore(async (store, stateDir) => {
    world(store);
    await withDashboard(stateDir, async (base) => {
      const page = await (await fetch(`${base}/anomalies`)).text();
      const id = /<tr data-anomaly="(\d+)">/.exec(page)?.[1];
      assert.ok(id);
      const done = await press(base, `/anomalies/${id}/acknowledge`, await csrfOf(`${base}/anomalies`), "/anomalies");
      assert.is(done.status, 303);
      assert.equal((await json(`${base}/api/anomalies`)).anomalies, []);
      assert.is(((await json(`${base}/api/anomalies?all=1`)).anomalies as unknown[]).length, 1);
      assert.is(queryAudit(store, { kind: "anomaly.acknowledged" }).length, 1);
      const missing = await press(base, "/anomalies/777/acknowledge", await csrfOf(`${base}/active`), "/");
      assert.is(missing.status, 409, "refused as anomalies --acknowledge refuses it");
      assert.match(await missing.text(), "777");
    });
  }));

test("the audit log, newest first, a page at a time, filtered by kind and item", () =>
  withStore(async (store, stateDir) => {
    world(store);
    atTime("2026-01-15T11:00:00Z", () => {
      for (let n = 10; n < 10 + LOG_PAGE_SIZE; n++) makeItem(store, { issue: n, state: "ready" });
    });
    await withDashboard(stateDir, async (base) => {
      const first = await json(`${base}/api/log`) as { records: Array<{ id: number }>; older: number | null };
      const ids = first.records.map((r) => r.id);
      assert.is(ids.length, LOG_PAGE_SIZE);
      assert.equal(ids, [...ids].sort((a, b) => b - a));
      assert.is(first.older, ids.at(-1));
      const second = await json(`${base}/api/log?before=${first.older}`) as { records: Array<{ id: number }> };
      assert.ok(second.records.every((r) => r.id < first.older!));
      assert.ok(second.records.length > 0);
      const byItem = await json(`${base}/api/log?kind=state&item=1`) as { records: Array<{ kind: string; item: number }> };
      assert.ok(byItem.records.length >= 3);
      assert.ok(byItem.records.every((r) => r.kind === "state.work_item" && r.item === 1));
      const page = await (await fetch(`${base}/log?kind=state&item=1`)).text();
      assert.match(page, /<table id="log">/);
      assert.match(page, /value="state"/);
      // A long body shows its start, the whole a tap away: fifty of them keep a phone's page short.
      appendAudit(store, { kind: "session.last_lines", body: { note: "x".repeat(400) } });
      const long = await (await fetch(`${base}/log?kind=session.last_lines`)).text();
      // The start is the body's first BODY_SHOWN characters: `{"note":"` and then the x's.
      assert.match(long, new RegExp(`<details><summary><code>\\{&quot;note&quot;:&quot;x{${BODY_SHOWN - 9}}…</code></summary><code>\\{&quot;note&quot;:&quot;x{400}&quot;\\}</code></details>`));
    });
  }));

test("the log page shows the daemon's passes that changed nothing, in a row, as one row; /api/log has each", () =>
  withStore(async (store, stateDir) => {
    for (let tick = 1; tick <= 30; tick++) {
      const active = tick === 20 ? 1 : 0;
      appendAudit(store, { at: `2026-01-15T10:00:${String(tick).padStart(2, "0")}Z`, kind: "reconcile.pass", body: { tick, failed: [], dispatch: { active, waiting: 0 } } });
    }
    await withDashboard(stateDir, async (base) => {
      const api = await json(`${base}/api/log`) as { records: unknown[] };
      assert.is(api.records.length, 30);
      const page = await (await fetch(`${base}/log`, { headers: { Accept: "text/html" } })).text();
      assert.is(page.match(/<tr data-record=/g)?.length, 3, "ticks 21-30, tick 20 that dispatched, ticks 1-19");
      assert.match(page, "10 passes that changed nothing, since <time>2026-01-15T10:00:21Z</time>");
      assert.match(page, "19 passes that changed nothing, since <time>2026-01-15T10:00:01Z</time>");
      assert.match(page, '&quot;active&quot;:1');
    });
  }));

test("an item's page: state, failure, history, the commands that apply; an unknown item is a 404 page and JSON", () =>
  withStore(async (store, stateDir) => {
    world(store);
    await withDashboard(stateDir, async (base) => {
      const data = await json(`${base}/api/items/1`) as { item: { state: string; failure: string; history: unknown[] }; commands: Array<{ command: string }>; terminal: unknown };
      assert.is(data.item.state, "failed");
      assert.is(data.item.failure, "worktree could not be made: disk full");
      assert.is(data.item.history.length, 4);
      assert.equal(data.commands.map((c) => c.command), ["robot-army retry 1", "robot-army reset 1", "robot-army abandon 1", "robot-army hold 1", "robot-army hold --repo demo/widgets"]);
      assert.is(data.terminal, null);
      const active = await json(`${base}/api/items/3`) as { terminal: { session: string; stream: string } };
      assert.equal(active.terminal, { session: "ra-widgets-3", open: true, stream: "/api/items/3/terminal", send: false }, "a headless worker has no window to type into");
      const page = await (await fetch(`${base}/items/3`, { headers: { Accept: "text/html" } })).text();
      assert.match(page, /<div id="terminal" data-stream="\/api\/items\/3\/terminal">/);
      assert.match(page, /<script src="\/static\/xterm.js"><\/script>/);
      for (const path of ["/items/99", "/items/abc", "/items/0"]) {
        const response = await fetch(base + path, { headers: { Accept: "text/html" } });
        assert.is(response.status, 404, path);
      }
      const missing = await fetch(`${base}/api/items/99`);
      assert.is(missing.status, 404);
      assert.match((await missing.json() as { error: string }).error, /No work item 99/);
    });
  }));

test("the dashboard's own files are served from a fixed list, nothing else", () =>
  withStore(async (_store, stateDir) => {
    await withDashboard(stateDir, async (base) => {
      const xterm = await fetch(`${base}/static/xterm.js`);
      assert.is(xterm.status, 200);
      assert.match(xterm.headers.get("content-type") ?? "", /javascript/);
      assert.match(await xterm.text(), /Terminal/);
      assert.is((await fetch(`${base}/static/dashboard.css`)).status, 200);
      for (const path of ["/static/..%2Fapp.ts", "/static/app.ts", "/static/constructor", "/static/__proto__"]) {
        assert.is((await fetch(base + path)).status, 404, path);
      }
    });
  }));

test("with no store yet every page says there is nothing, and none is made", () =>
  withTempStateDir(async (stateDir) => {
    await withDashboard(stateDir, async (base) => {
      assert.equal((await json(`${base}/api/needs`)).cards, []);
      assert.equal((await json(`${base}/api/active`)).sessions, []);
      assert.equal((await json(`${base}/api/log`)).records, []);
      assert.is((await fetch(`${base}/items/1`)).status, 404);
    });
    const { existsSync } = await import("node:fs");
    assert.not.ok(existsSync(join(stateDir, "robot-army.db")));
  }));

test("a secret that reached the store before the redactor knew it is redacted on the way out", () =>
  withStore(async (store, stateDir) => {
    atTime("2026-01-15T10:00:00Z", () => {
      const item = makeItem(store, { issue: 5, state: "dispatching" });
      transition(store, item.id, "failed", { reason: "push failed: https://x:s3cr3t-t0ken-value@example.com" });
    });
    rememberSecret("s3cr3t-t0ken-value");
    await withDashboard(stateDir, async (base) => {
      const page = await (await fetch(`${base}/`)).text();
      const api = await (await fetch(`${base}/api/items/1`)).text();
      assert.not.match(page + api, /s3cr3t-t0ken-value/);
      assert.match(page, /\[redacted\]/);
    });
  }));

test("a store that cannot be read is one line on the page and in the JSON, never a stack trace", () =>
  withTempStateDir(async (stateDir) => {
    const { mkdirSync } = await import("node:fs");
    mkdirSync(join(stateDir, "robot-army.db"), { recursive: true });
    await withDashboard(stateDir, async (base) => {
      const api = await fetch(`${base}/api/needs`);
      assert.ok(api.status >= 400, String(api.status));
      const { error } = await api.json() as { error: string };
      assert.match(error, "robot-army.db");
      assert.not.match(error, /\n|\s+at /);
      const page = await fetch(`${base}/`, { headers: { Accept: "text/html" } });
      assert.is(page.status, api.status);
      const text = await page.text();
      assert.match(text, '<p class="why">');
      assert.match(text, "robot-army.db");
      assert.not.match(text, /\s+at \S+ \(/);
      assert.is(page.headers.get("x-content-type-options"), "nosniff", "the guard's headers are on the error page too");
    });
  }));

test("keep is offered only where a keep would take, kept is the current session's only, a simulated item says so, and a refreshed page's title follows", () =>
  withStore(async (store, stateDir) => {
    world(store);
    atTime("2026-01-15T10:05:00Z", () => {
      // Item 3's second attempt: its first row is still open (a worker left behind), the keep covers only the second.
      recordSession(store, {
        id: "5e551011-0000-4000-8000-000000000033", item: 3, name: "ra-widgets-3-2", host: "testhost", launcher: "process",
        marker: "", worktree: "/nonexistent/worktree", branch: "robot-army/issue-3", started_at: "2026-01-15T10:05:00Z", simulated: false,
      });
      makeItem(store, { issue: 4, state: "done" });
      makeItem(store, { issue: 6, state: "ready", simulated: true });
    });
    await withDashboard(stateDir, async (base) => {
      const itemPage = async (id: number) => await (await fetch(`${base}/items/${id}`, { headers: { Accept: "text/html" } })).text();
      assert.match(await itemPage(3), 'action="/items/3/keep"', "an active item can be kept");
      assert.not.match(await itemPage(4), 'action="/items/4/keep"', "a done item with no session cannot");
      assert.match(await itemPage(4), "<dd>not kept</dd>");
      assert.is((await json(`${base}/api/items/4`)).keepable, false);
      const simulated = await itemPage(5);
      assert.match(simulated, 'class="simulated"');
      assert.not.match(await itemPage(3), 'class="simulated"');
      const csrf = await csrfOf(`${base}/active`);
      assert.is((await press(base, "/items/3/keep", csrf, "/active")).status, 303);
      const rows = (await json(`${base}/api/active`)).sessions as Array<{ session: { name: string }; kept: boolean }>;
      assert.equal(rows.map((r) => [r.session.name, r.kept]), [["ra-widgets-3", false], ["ra-widgets-3-2", true]]);
      const fragment = await fetch(`${base}/active?fragment=1`);
      assert.is(decodeURIComponent(fragment.headers.get("x-page-title") ?? ""), "2 active");
    });
  }));

async function withTempStateDir(fn: (stateDir: string) => Promise<void>): Promise<void> {
  const { withTempDir } = await import("../testing/fixtures.ts");
  await withTempDir((dir) => fn(join(dir, "state")));
}


test("an item another host claimed on GitHub: the queue page lists it apart with who holds it, and its page says so with the command that releases it", () =>
  withStore(async (store, stateDir) => {
    atTime("2026-01-15T10:00:00Z", () => {
      makeItem(store, { issue: 7, state: "ready", title: "Claimed <elsewhere>" });
      // What dispatch records when GitHub refuses the claim because another host holds it (lib/work-items/issue-claims.ts).
      store.statement("INSERT INTO issue_claims (item, repo, issue, ref, sha, host, mine, action_id, seen_at, released_at) VALUES (1, 'demo/widgets', 7, 'refs/robot-army/claims/7', ?, 'laptop<b>', 0, NULL, '2026-01-15T10:00:00Z', NULL)").run("c".repeat(40));
      // Its repository is trusted here, so only the claim keeps it from the queue.
      recordApproval(store, "demo/widgets", "/nonexistent/widgets", { default_branch: "main" });
    });
    const trusting: Config = { ...config, repos: { "demo/widgets": { path: "/nonexistent/widgets", max_sessions: 1, priority: 0 } } };
    await withDashboard(stateDir, async (base) => {
      const queue = await json(`${base}/api/queue`) as { queue: unknown[]; claimed_elsewhere: Array<{ id: number; host: string; reason: string }> };
      assert.equal(queue.queue, [], "not in the queue dispatch takes first");
      assert.equal(queue.claimed_elsewhere.map((c) => [c.id, c.host]), [[1, "laptop<b>"]]);
      assert.match(queue.claimed_elsewhere[0].reason, 'claimed by laptop<b> on GitHub (refs/robot-army/claims/7 in demo/widgets); it starts here once that claim is released ("robot-army unclaim 1"');
      const page = await (await fetch(`${base}/queue`)).text();
      assert.match(page, /Claimed by another host/);
      assert.match(page, /claimed by laptop&lt;b&gt; on GitHub/);
      const item = await (await fetch(`${base}/items/1`)).text();
      assert.match(item, /<dt>claim<\/dt><dd>held by laptop&lt;b&gt; on GitHub, seen <time>2026-01-15T10:00:00Z<\/time>: nothing starts here while it stands/);
      assert.match(item, /robot-army unclaim 1/);
      assert.not.match(item, /<b>/, "a host name from GitHub is text, never markup");
    }, trusting);
  }));
test.run();
