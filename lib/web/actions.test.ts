/**
 * The dashboard's buttons over real HTTP, on a real store: each does what its command does and
 * answers in its words, as the web session; a forged or read-only request changes nothing; a
 * verb that could lose work needs its confirmation; the same form twice acts once. The real
 * browser presses them at a phone's size in browser.test.ts.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { hostName } from "../config.ts";
import { withTmuxWorkers } from "../testing/tmux-workers.ts";
import { waitFor } from "../testing/wait.ts";
import { defaultConfig } from "../config.ts";
import type { Config } from "../config.ts";
import { isPaused } from "../dispatch/controls.ts";
import { listKeeps } from "../ending/keeps.ts";
import { queryAudit } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import { atTime, makeItem, withStore } from "../testing/items.ts";
import { getItem } from "../work-items/queries.ts";
import { recordSession } from "../work-items/sessions.ts";
import { transition } from "../work-items/transition.ts";
import { retrySaid } from "../dispatch/verbs/owner-verbs.ts";
import { webApp } from "./app.ts";
import { webContext } from "./context.ts";
import { webAccess } from "./security.ts";
import { listen } from "./serve.ts";

const config: Config = { ...(await defaultConfig()), worker: { ...(await defaultConfig()).worker, binary: "sh", profile: "generic" } };
const WEB = "web (no login) from 127.0.0.1";

/** Items 1 and 4 failed, 2 interrupted, 3 active with an open session. */
function world(store: Store): void {
  atTime("2026-01-15T10:00:00Z", () => {
    makeItem(store, { issue: 1, state: "failed" });
    const interrupted = makeItem(store, { issue: 2, state: "active" });
    transition(store, interrupted.id, "interrupted", { reason: "its session was lost" });
    const active = makeItem(store, { issue: 3, state: "active" });
    recordSession(store, {
      id: "5e551011-0000-4000-8000-000000000003", item: active.id, name: "ra-widgets-3", host: "testhost", launcher: "process",
      marker: "", worktree: "/nonexistent/worktree", branch: "robot-army/issue-3", started_at: "2026-01-15T10:00:00Z", simulated: false,
    });
    makeItem(store, { issue: 4, state: "failed" });
  });
}

/** Serves the dashboard over `stateDir` (read-only when asked) on a free loopback port for `fn`. */
async function withDashboard(stateDir: string, fn: (base: string) => Promise<void>, options: { readOnly?: boolean; secret?: Uint8Array } = {}): Promise<void> {
  const ctx = webContext(config, stateDir, join(stateDir, "sessions"), options);
  const access = webAccess(config, "127.0.0.1", 0);
  const server = await listen(webApp(ctx, { ...access, secret: options.secret ?? access.secret }), "127.0.0.1", 0);
  try {
    await fn(server.url.replace(/\/$/, ""));
  } finally {
    await server.close();
    ctx.close();
  }
}

/** The CSRF token a page's forms carry. */
async function csrfOf(base: string): Promise<string> {
  const page = await (await fetch(`${base}/items/1`)).text();
  const token = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
  assert.ok(token, "no form with a CSRF token");
  return token;
}

/** A form POST as the dashboard's script sends it (an answer in JSON), or as a browser does with `html`. */
function post(base: string, action: string, fields: Record<string, string>, options: { html?: boolean; origin?: string } = {}): Promise<Response> {
  return fetch(base + action, {
    method: "POST", redirect: "manual",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: options.origin ?? base, Accept: options.html ? "text/html" : "application/json" },
    body: new URLSearchParams(fields).toString(),
  });
}

const key = () => globalThis.crypto.randomUUID();

test("a button does what its command does, answers in its words, and the audit log names the web session", () =>
  withStore(async (store, stateDir) => {
    world(store);
    await withDashboard(stateDir, async (base) => {
      const csrf = await csrfOf(base);
      const pressed = await post(base, "/items/1/retry", { csrf, once: key() });
      assert.is(pressed.status, 200);
      assert.equal(await pressed.json(), { ok: true, code: 0, lines: ["work item 1 (demo/widgets#1): failed -> ready"], repeated: false });
      assert.is(getItem(store, 1)!.state, "ready");
      const moved = queryAudit(store, { kind: "state.work_item", item: 1 }).at(-1)!;
      assert.equal([moved.body.to, moved.body.actor], ["ready", WEB]);
      // What `robot-army retry` prints (the same function) says the same of item 4, and its records name no web session.
      assert.equal((await retrySaid({ store, config, stateDir }, 4)).lines, ["work item 4 (demo/widgets#4): failed -> ready"]);
      assert.is(queryAudit(store, { kind: "state.work_item", item: 4 }).at(-1)!.body.actor, undefined);
      // A refusal is the command's own, with its status: nothing moved.
      const refused = await post(base, "/items/3/retry", { csrf, once: key() });
      assert.is(refused.status, 409);
      assert.equal((await refused.json() as { lines: string[] }).lines, ["Work item 3 is active, not failed; retry only puts a failed item back in the queue"]);
      const paused = await post(base, "/dispatch/pause", { csrf, once: key(), reason: "release freeze" });
      assert.equal((await paused.json() as { lines: string[] }).lines, ['paused (release freeze): no worker session is dispatched until "robot-army unpause"']);
      assert.ok(isPaused(store));
      assert.is(queryAudit(store, { kind: "control.pause" }).at(-1)!.body.actor, WEB);
    });
  }));

test("a browser's form comes back to its page, which shows the answer; a refusal is a page of its own", () =>
  withStore(async (store, stateDir) => {
    world(store);
    await withDashboard(stateDir, async (base) => {
      const csrf = await csrfOf(base);
      const once = key();
      const pressed = await post(base, "/items/3/keep", { csrf, once, back: "/items/3" }, { html: true });
      assert.is(pressed.status, 303);
      assert.is(pressed.headers.get("location"), `/items/3?said=${once}`);
      const page = await (await fetch(base + pressed.headers.get("location")!, { headers: { Accept: "text/html" } })).text();
      assert.match(page, /<pre class="said-lines ok">kept: item 3 \(demo\/widgets#3/);
      assert.match(page, `name="back" value="/items/3"`, "the page's forms come back to it without the answer");
      // A back that resolves elsewhere (a dot segment before a second slash) comes back to the first page instead.
      const tricked = await post(base, "/items/3/unkeep", { csrf, once: key(), back: "/.//evil.example" }, { html: true });
      assert.equal([tricked.status, tricked.headers.get("location")?.replace(/\?said=.*$/, "")], [303, "/"]);
      const refused = await post(base, "/items/3/retry", { csrf, once: key(), back: "/items/3" }, { html: true });
      assert.is(refused.status, 409);
      assert.match(await refused.text(), /<h1>Not done<\/h1><pre class="said-lines refused">Work item 3 is active, not failed/);
    });
  }));

test("the same form sent twice, one after the other or at once, acts once and answers both with the first answer", () =>
  withStore(async (store, stateDir) => {
    world(store);
    await withDashboard(stateDir, async (base) => {
      const csrf = await csrfOf(base);
      const once = key();
      const first = await (await post(base, "/items/3/keep", { csrf, once })).json() as { lines: string[]; repeated: boolean };
      const again = await (await post(base, "/items/3/keep", { csrf, once })).json() as { lines: string[]; repeated: boolean };
      assert.match(first.lines[0], /^kept: item 3/);
      assert.equal([again.lines, again.repeated], [first.lines, true]);
      // A double tap: both on their way before either is answered.
      const tap = key();
      const both = await Promise.all([1, 2].map(() => post(base, "/items/2/unhold", { csrf, once: tap }).then((r) => r.json())));
      assert.equal(both.map((b) => (b as { repeated: boolean }).repeated).sort(), [false, true]);
      assert.is(queryAudit(store, { kind: "keep.placed" }).length, 1);
      assert.is(listKeeps(store).length, 1);
      // A key answers only the action it was made for: sent to another, it is another press.
      const shared = key();
      await post(base, "/items/2/hold", { csrf, once: shared });
      const other = await (await post(base, "/items/2/unhold", { csrf, once: shared })).json() as { lines: string[]; repeated: boolean };
      assert.equal([other.repeated, other.lines[0].startsWith("unheld: item 2")], [false, true]);
      // A new press (a new key) acts again, and says what is so now.
      const later = await (await post(base, "/items/3/keep", { csrf, once: key() })).json() as { lines: string[] };
      assert.match(later.lines[0], /^already kept since /);
    });
  }));

test("a forged request changes nothing: no CSRF token, a wrong one, another Origin", () =>
  withStore(async (store, stateDir) => {
    world(store);
    await withDashboard(stateDir, async (base) => {
      const csrf = await csrfOf(base);
      for (const [fields, origin] of [[{ once: key() }, base], [{ csrf: "forged", once: key() }, base], [{ csrf, once: key() }, "http://evil.example"]] as const) {
        const response = await post(base, "/items/1/retry", fields, { origin });
        assert.is(response.status, 403, JSON.stringify(fields));
      }
      assert.is(getItem(store, 1)!.state, "failed");
      assert.equal(queryAudit(store, { kind: "state.work_item", item: 1 }).filter((r) => r.body.actor !== undefined), []);
    });
  }));

test("cancel, abandon, reset and restart act only with their confirmation, whose page says what the worktree holds", () =>
  withStore(async (store, stateDir) => {
    world(store);
    await withDashboard(stateDir, async (base) => {
      const csrf = await csrfOf(base);
      for (const verb of ["abandon", "reset", "restart", "cancel"]) {
        const unconfirmed = await post(base, `/items/2/${verb}`, { csrf, once: key() });
        assert.is(unconfirmed.status, 409, verb);
        assert.is((await unconfirmed.json() as { confirm: string }).confirm, `/items/2/confirm/${verb}`);
      }
      const browser = await post(base, "/items/2/abandon", { csrf, once: key(), back: "/" }, { html: true });
      assert.equal([browser.status, browser.headers.get("location")], [303, "/items/2/confirm/abandon?back=%2F"]);
      assert.is(getItem(store, 2)!.state, "interrupted", "nothing acted before the confirmation");
      const page = await (await fetch(`${base}/items/2/confirm/abandon?back=%2F`, { headers: { Accept: "text/html" } })).text();
      assert.match(page, "<h1>abandon item 2?</h1>");
      assert.match(page, "gives the item up for good");
      assert.match(page, '<input type="hidden" name="confirm" value="2">');
      assert.match(page, "It never had a worktree.");
      // A confirmation for another item does not confirm this one.
      assert.is((await post(base, "/items/2/abandon", { csrf, once: key(), confirm: "1" })).status, 409);
      const confirmed = await post(base, "/items/2/abandon", { csrf, once: key(), confirm: "2", reason: "done by hand" });
      assert.equal((await confirmed.json() as { lines: string[] }).lines, ["work item 2 (demo/widgets#2): interrupted -> abandoned (done by hand)"]);
      assert.equal([getItem(store, 2)!.state, queryAudit(store, { kind: "state.work_item", item: 2 }).at(-1)!.body.actor], ["abandoned", WEB]);
      assert.is((await fetch(`${base}/items/2/confirm/keep`)).status, 404, "keep needs no confirmation");
    });
  }));

test("a read-only dashboard draws no buttons and refuses every action, nothing changed", () =>
  withStore(async (store, stateDir) => {
    world(store);
    // Both servers share their CSRF key: the token the first one's page gave is one the read-only one takes.
    const secret = new Uint8Array(32).fill(7);
    let csrf = "";
    await withDashboard(stateDir, async (base) => {
      csrf = await csrfOf(base);
    }, { secret });
    await withDashboard(stateDir, async (base) => {
      for (const path of ["/", "/items/1", "/items/3", "/active", "/anomalies"]) {
        const page = await (await fetch(base + path, { headers: { Accept: "text/html" } })).text();
        assert.not.match(page, "<form", path);
        assert.not.match(page, 'class="button"', path);
      }
      // A token it would take, and yet: refused.
      for (const action of ["/items/1/retry", "/items/3/keep", "/dispatch/pause", "/repos/demo/widgets/hold"]) {
        const response = await post(base, action, { csrf, once: key() });
        assert.is(response.status, 403, action);
        assert.match((await response.json() as { error: string }).error, "read-only");
      }
      assert.equal([getItem(store, 1)!.state, isPaused(store), listKeeps(store).length], ["failed", false, 0]);
    }, { readOnly: true, secret });
  }));

test("the send box types a line into an interactive worker's pane as `robot-army send` does, as the web session; a headless worker has no box and is refused", () =>
  withTmuxWorkers(async (w) => {
    await withStore(async (store, stateDir) => {
      world(store);
      const typed = join(w.dir, "typed.txt");
      const launched = await w.launch(5, "ra-widgets-5", ["sh", "-c", `IFS= read -r line; printf '%s\\n' "$line" > '${typed}'; exec sleep 30`], store.path);
      const item = makeItem(store, { issue: 5, state: "active" });
      recordSession(store, {
        id: launched.sessionId, item: item.id, name: launched.sessionName, host: hostName(config), launcher: "tmux", marker: launched.marker,
        worktree: "/nonexistent/worktree-5", branch: "robot-army/issue-5", started_at: "2026-01-15T10:00:00Z", simulated: false, terminal: launched.terminal,
      });
      // The dashboard reads the workers' records where they are, and reaches their terminal as the launch recorded it.
      const ctx = webContext(config, stateDir, w.sessionRoot);
      const server = await listen(webApp(ctx, webAccess(config, "127.0.0.1", 0)), "127.0.0.1", 0);
      const base = server.url.replace(/\/$/, "");
      try {
        const page = await (await fetch(`${base}/items/5`, { headers: { Accept: "text/html" } })).text();
        assert.match(page, /<form method="post" action="\/items\/5\/send"[^>]*>.*<input type="text" name="text" maxlength="2000"/);
        const csrf = await csrfOf(base);
        const sent = await post(base, "/items/5/send", { csrf, once: key(), text: "yes, the second option" });
        assert.equal((await sent.json() as { lines: string[] }).lines, [`typed 22 characters into ra-widgets-5 (tmux window ${launched.window}) for work item 5, and pressed Enter`]);
        await waitFor("the worker to read the line", () => existsSync(typed) && readFileSync(typed, "utf8") === "yes, the second option\n");
        const audited = queryAudit(store, { kind: "session.send", item: 5 });
        assert.equal(audited.map((r) => [r.phase, r.body.length, r.body.actor]), [["intent", 22, WEB], ["outcome", undefined, WEB]]);
        // Item 3's worker is headless: no box on its page, and a send refused in the command's words.
        assert.not.match(await (await fetch(`${base}/items/3`, { headers: { Accept: "text/html" } })).text(), 'name="text"');
        const refused = await post(base, "/items/3/send", { csrf, once: key(), text: "hello" });
        assert.is(refused.status, 409);
        const why = (await refused.json() as { lines: string[] }).lines[0];
        assert.match(why, 'runs headless (launcher "process")', why);
      } finally {
        await server.close();
        ctx.close();
      }
    });
  }));

test.run();
