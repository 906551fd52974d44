/**
 * `/repos/<owner>/<name>/approve`: what changed in a repository since the owner approved it, before
 * they approve it again (as `robot-army onboard <repo> --diff`, then `--reapprove`): its settings
 * that differ, as GitHub says them now, and git's diff of its agent files (hooks and settings that
 * run code in a worker) from the approved commit of the base branch to the one now. Its one
 * button approves the agent files of exactly that commit (`commit`) and the settings shown (a
 * digest, `settings`), so what was shown is what is approved: anything moved on meanwhile, the
 * approval is refused (lib/repos/onboard.ts). The page itself fetches the base branch, as
 * `--diff` does, and changes nothing.
 */
import type { Hono } from "hono";
import { html, raw } from "hono/html";
import { agentFilesDiff } from "../../repos/agent-diff.ts";
import { AGENT_FILE_KEY, describeChanges, fingerprintChanges, fingerprintOf, settingsDigest } from "../../repos/fingerprint.ts";
import { getRepoRecord } from "../../repos/records.ts";
import type { WebContext, WebEnv } from "../context.ts";
import { freshnessOf, layout } from "../layout.ts";
import { localPath, NotFound } from "../page.ts";
import { none, postButton } from "./_parts.ts";

/** Mounts the approval page. */
export function approveRoutes(app: Hono<WebEnv>, ctx: WebContext): void {
  app.get("/repos/:owner/:name/approve", async (c) => {
    const name = `${c.req.param("owner")}/${c.req.param("name")}`;
    const store = await ctx.store();
    const record = store ? getRepoRecord(store, name) : undefined;
    if (!store || !record) throw new NotFound(`Repository ${name} is not onboarded: "robot-army onboard ${name}" shows its agent files and approves them`);
    const found = await agentFilesDiff(store, ctx.config, name);
    // The settings as GitHub says them now, as an approval would record them: shown, and held to by their digest.
    const repository = await (await ctx.dispatchDeps()).github.getRepository(name);
    const now = fingerprintOf(repository, ctx.config.repos[name].path);
    const settings = describeChanges(fingerprintChanges(record.fingerprint, now).filter((change) => !change.setting.startsWith(AGENT_FILE_KEY)));
    const back = localPath(c.req.query("back") ?? "/");
    const view = { csrf: c.get("csrf"), here: back, actions: !ctx.readOnly };
    // A commit id: 40 or 64 hex digits, nothing to escape.
    const fields = raw(`<input type="hidden" name="commit" value="${/^[0-9a-f]{40,64}$/.test(found.commit) ? found.commit : ""}"><input type="hidden" name="settings" value="${settingsDigest(now)}">`);
    const nothing = found.changed.length === 0 && !settings;
    const body = html`<section class="confirm approve">
<h1>approve ${name} again?</h1>
<p class="does">Its agent files run code in every worker started in it (hooks, settings, instructions): approving says you have read what changed. Until then nothing is dispatched to it.</p>
<dl class="facts">
<dt>settings</dt><dd>${settings || "as you approved them"}</dd>
<dt>approved</dt><dd>${found.approved ? html`origin/${found.base} at <code>${found.approved}</code>${found.approvedInClone ? "" : " (no longer in the clone: each file is shown whole)"}` : "before robot-army read agent files: each file is shown whole"}</dd>
<dt>now</dt><dd>origin/${found.base} at <code>${found.commit}</code></dd>
<dt>changed</dt><dd>${found.changed.length ? found.changed.join(", ") : "no agent file"}</dd>
</dl>
${found.diff ? html`<pre class="diff">${found.diff}</pre>` : none("No agent file differs.")}
${nothing ? none("Nothing differs from what you approved.") : html`<p class="do">${postButton(`/repos/${name}/reapprove`, `yes, approve ${name} as shown`, view, "danger", fields)} <a class="button" href="${back}">no, go back</a></p>`}
</section>`;
    return c.html(layout(`approve ${name}?`, null, freshnessOf(ctx), body));
  });
}
