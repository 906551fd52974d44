/**
 * The dashboard's buttons, answered: each runs the very function its command runs
 * (lib/dispatch/verbs/owner-verbs.ts), under the same caps, pauses, holds and refusals, and
 * answers with the lines the command prints. Each runs as the web session that pressed it
 * (`asActor`: every audit record it writes names that session).
 *
 * Safe to press from a phone:
 * - the guard (security.ts) has already checked the CSRF token and Origin of every POST, and
 *   the login beyond loopback; a read-only dashboard refuses every action (app.ts);
 * - the verbs that stop a worker or could lose work (verbs.ts CONFIRMED) act only with the
 *   confirmation their page asks for (`confirm` = the item's id): without it a request is
 *   refused, or a browser sent to that page;
 * - every form carries a one-time key (`once`): a second request with the same key (a double
 *   tap, a resubmitted form) is answered with the first one's answer and acts no more. The
 *   answers are kept in memory, the latest ANSWERS_KEPT.
 *
 * A browser's form gets a 303 back to the page it came from, which shows the answer
 * (`?said=<key>`); a script (Accept: application/json, dashboard.js) gets the answer as JSON.
 */
import type { Context, Hono } from "hono";
import { hostName } from "../config.ts";
import { spoolDir } from "../sessions/spool.ts";
import { RobotArmyError } from "../errors.ts";
import { redact } from "../redact.ts";
import { asActor } from "../store/audit.ts";
import type { Store } from "../store/open.ts";
import {
  abandonSaid, acknowledgeSaid, cancelSaid, holdSaid, keepSaid, pauseSaid, reapproveSaid, relaunchSaid, resetSaid, retrySaid, sendSaid, unholdSaid,
  unkeepSaid, unpauseSaid,
} from "../dispatch/verbs/owner-verbs.ts";
import type { Said } from "../dispatch/verbs/owner-verbs.ts";
import { PreconditionError } from "../errors.ts";
import type { WebContext, WebEnv } from "./context.ts";
import { localPath, NotFound, wholeNumber } from "./page.ts";
import { CONFIRMED, isItemVerb } from "./verbs.ts";
import { html } from "hono/html";
import { freshnessOf, layout, saidLines } from "./layout.ts";
import type { ItemVerb } from "./verbs.ts";

/** How many answers are kept for their one-time keys (and the pages that show them). */
export const ANSWERS_KEPT = 500;

/** What an action answered: the command's lines and exit code, or the refusal's words and the HTTP status it maps to. */
export interface Answer {
  ok: boolean;
  status: 200 | 404 | 409 | 500;
  lines: string[];
  code: number;
}

/** The answers by one-time key: a key seen again is answered from here, never acted on again. */
export class Answers {
  readonly #byKey = new Map<string, Promise<Answer>>();
  readonly #settled = new Map<string, Answer>();
  readonly #names = new Map<string, string>();

  /** The answer to `key`: the first request's, whether it is still running or done; `act` runs only for a key not seen. */
  once(key: string | null, act: () => Promise<Answer>): { answer: Promise<Answer>; repeated: boolean } {
    if (key === null) return { answer: act(), repeated: false };
    const known = this.#byKey.get(key);
    if (known) return { answer: known, repeated: true };
    const answer = act();
    this.#byKey.set(key, answer);
    void answer.then((settled) => this.#settled.set(key, settled));
    // The oldest go first: a key is a few seconds' worth of protection, not a record (the audit log is that).
    while (this.#byKey.size > ANSWERS_KEPT) {
      const oldest = this.#byKey.keys().next().value!;
      this.#byKey.delete(oldest);
      this.#settled.delete(oldest);
      this.#names.delete(oldest.slice(oldest.lastIndexOf(" ") + 1));
    }
    return { answer, repeated: false };
  }

  /** The settled answer a page's `?said=` names (`name`), for the page the browser came back to. */
  said(name: string | null | undefined): Answer | undefined {
    const key = name ? this.#names.get(name) : undefined;
    return key ? this.#settled.get(key) : undefined;
  }

  /** A key's name for a page's address: its one-time key alone, never the path it was posted to. */
  name(key: string): string {
    const name = key.slice(key.lastIndexOf(" ") + 1);
    this.#names.set(name, key);
    return name;
  }
}

/** A form's one-time key: random, 16 to 64 of `A-Za-z0-9_-`; anything else is no key. */
function onceKey(value: unknown): string | null {
  return typeof value === "string" && /^[A-Za-z0-9_-]{16,64}$/.test(value) ? value : null;
}

/** Mounts every action on `app`. */
export function actionRoutes(app: Hono<WebEnv>, ctx: WebContext, answers: Answers): void {
  app.post("/items/:id/:verb", async (c) => {
    const id = wholeNumber(c.req.param("id"));
    const verb = c.req.param("verb");
    if (id === null || !isItemVerb(verb)) throw new NotFound(`No action "${verb}" on work item ${c.req.param("id")}`);
    const form = await formOf(c);
    if (CONFIRMED[verb] && form.confirm !== String(id)) {
      const page = `/items/${id}/confirm/${verb}`;
      if (wantsJson(c)) return c.json({ error: `"${verb}" ${CONFIRMED[verb]}; it needs your confirmation: send confirm=${id}`, confirm: page }, 409);
      return c.redirect(`${page}?back=${encodeURIComponent(localPath(form.back))}`, 303);
    }
    return await answer(c, ctx, answers, form, () => itemAction(ctx, verb, id, form));
  });
  app.post("/anomalies/:id/acknowledge", async (c) => {
    const id = wholeNumber(c.req.param("id"));
    if (id === null) throw new NotFound(`No anomaly ${c.req.param("id")}`);
    return await answer(c, ctx, answers, await formOf(c), async () => acknowledgeSaid(await ctx.store(), id).said);
  });
  app.post("/dispatch/pause", async (c) => {
    const form = await formOf(c);
    return await answer(c, ctx, answers, form, async () => pauseSaid(await mustStore(ctx), text(form.reason)));
  });
  app.post("/dispatch/unpause", async (c) => answer(c, ctx, answers, await formOf(c), async () => unpauseSaid(await ctx.store())));
  app.post("/repos/:owner/:name/reapprove", async (c) => {
    const repo = `${c.req.param("owner")}/${c.req.param("name")}`;
    const form = await formOf(c);
    // Only what the approval page showed: the commit of the agent files the owner read, and a digest of the settings.
    if (typeof form.commit !== "string" || !/^[0-9a-f]{40,64}$/.test(form.commit)) {
      if (wantsJson(c)) return c.json({ error: `Approving ${repo} needs the commit its approval page showed: send commit=<sha>`, confirm: `/repos/${repo}/approve` }, 409);
      return c.redirect(`/repos/${repo}/approve?back=${encodeURIComponent(localPath(form.back))}`, 303);
    }
    // The page's form sends the settings' digest; a script that sends none approves the settings as they are, as `onboard --reapprove` does.
    const settings = typeof form.settings !== "string" ? undefined : /^[0-9a-f]{64}$/.test(form.settings) ? form.settings : "not a digest";
    const shown = { agentCommit: form.commit, settingsDigest: settings };
    return await answer(c, ctx, answers, form, async () => {
      const deps = await ctx.dispatchDeps();
      return await reapproveSaid(deps.store, deps.github, ctx.config, repo, shown);
    });
  });
  app.post("/repos/:owner/:name/:verb{hold|unhold}", async (c) => {
    const repo = `${c.req.param("owner")}/${c.req.param("name")}`;
    const form = await formOf(c);
    return await answer(c, ctx, answers, form, async () => c.req.param("verb") === "hold"
      ? holdSaid(await mustStore(ctx), { repo }, text(form.reason))
      : unholdSaid(await ctx.store(), { repo }));
  });
}

/** Runs an item verb as its command would, with what the form gave. */
async function itemAction(ctx: WebContext, verb: ItemVerb, id: number, form: Form): Promise<Said> {
  const store = await mustStore(ctx);
  switch (verb) {
    case "resume":
    case "restart":
      return await relaunchSaid(await ctx.dispatchDeps(), verb, id);
    case "reset":
      // --force is taken only at a terminal: from here, never.
      return await resetSaid(await ctx.dispatchDeps(), id, false);
    case "retry":
      return await retrySaid({ store, config: ctx.config, stateDir: ctx.stateDir }, id);
    case "cancel":
      return await cancelSaid(store, { sessionRoot: ctx.sessionRoot, spoolDir: spoolDir({ ...process.env, RA_STATE_DIR: ctx.stateDir }), host: hostName(ctx.config) }, id);
    case "abandon":
      return abandonSaid(store, ctx.sessionRoot, id, text(form.reason));
    case "keep":
      return keepSaid(store, ctx.config, id);
    case "unkeep":
      return unkeepSaid(store, id);
    case "hold":
      return holdSaid(store, { item: id }, text(form.reason));
    case "unhold":
      return unholdSaid(store, { item: id });
    case "send":
      return await sendSaid({ store, sessionRoot: ctx.sessionRoot, host: hostName(ctx.config) }, id, typeof form.text === "string" ? form.text : "");
  }
}

/** Runs the action once per key, as the web session, and answers the way the request asked. */
async function answer(c: Context<WebEnv>, ctx: WebContext, answers: Answers, form: Form, run: () => Promise<Said>): Promise<Response> {
  // A key answers only the action it was made for: the same key sent to another is another press.
  const once = onceKey(form.once);
  const key = once === null ? null : `${c.req.path} ${once}`;
  const actor = c.get("actor");
  const { answer: pending, repeated } = answers.once(key, () => asActor(actor, () => settle(run)));
  const done = await pending;
  if (wantsJson(c)) return c.json({ ok: done.ok, code: done.code, lines: done.lines, repeated }, done.status);
  // Refused, or acted with a code that is not 0 (a reset that kept the work): the answer on a page of its own.
  if (done.status !== 200 || (!done.ok && key === null)) {
    const body = html`<section class="${done.ok ? "said" : "error"}"><h1>${done.ok ? "Done" : "Not done"}</h1>${saidLines(done)}<p><a href="${localPath(form.back)}">back</a></p></section>`;
    return c.html(layout(done.ok ? "done" : "not done", null, freshnessOf(ctx), body, [], undefined, { still: true }), done.status);
  }
  const back = new URL(localPath(form.back), "http://here");
  if (key !== null) back.searchParams.set("said", answers.name(key));
  // What the URL made of it is followed only while it is still a path on this site.
  return c.redirect(localPath(back.pathname + back.search), 303);
}

/** The verb's answer, or its refusal in its own words. */
async function settle(run: () => Promise<Said>): Promise<Answer> {
  try {
    const said = await run();
    return { ok: said.code === 0, status: 200, lines: said.lines.map((line) => redact(line)), code: said.code };
  } catch (error) {
    const message = redact(error instanceof Error ? error.message : String(error));
    if (error instanceof NotFound) return { ok: false, status: 404, lines: [message], code: 3 };
    if (error instanceof PreconditionError || error instanceof RobotArmyError) return { ok: false, status: 409, lines: [message], code: (error as RobotArmyError).exitCode ?? 1 };
    return { ok: false, status: 500, lines: [`The action failed: ${message.split("\n")[0]}`], code: 1 };
  }
}

type Form = Record<string, unknown>;

/** The request's form (the guard read it already for its CSRF field; Hono keeps it); none for a body of another type. */
async function formOf(c: Context<WebEnv>): Promise<Form> {
  const type = c.req.header("content-type") ?? "";
  if (!/^(application\/x-www-form-urlencoded|multipart\/form-data)/i.test(type)) return {};
  return await c.req.parseBody() as Form;
}

async function mustStore(ctx: WebContext): Promise<Store> {
  const store = await ctx.store();
  // With no store yet, nothing has been recorded: no item to act on.
  if (!store) throw new PreconditionError(`Nothing is recorded in ${ctx.stateDir} yet, so there is nothing to change`);
  return store;
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() ? value.trim() : undefined;
}

function wantsJson(c: Context<WebEnv>): boolean {
  return !(c.req.header("Accept") ?? "").includes("text/html");
}

