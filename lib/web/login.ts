/**
 * The dashboard's login: a form where the owner types the token once, which sets the session
 * cookie the guard (`security.ts`) accepts, and the logout that clears it. With no token
 * configured (loopback without `[web] token_file`) there is nothing to log in to, and both
 * send the browser on to the dashboard.
 */
import type { Hono } from "hono";
import { deleteCookie, setCookie } from "hono/cookie";
import { html } from "hono/html";
import type { WebEnv } from "./context.ts";
import { localPath } from "./page.ts";
import { SESSION_COOKIE, acceptsToken, sessionCookieOptions, sessionCookieValue } from "./security.ts";
import type { WebAccess } from "./security.ts";

/**
 * Adds GET /login (the form), POST /login (a right token sets the session cookie and redirects
 * 303 to `next`, a path on this server, or /; a wrong one shows the form again with 401) and
 * POST /logout (clears the cookie). The guard runs first: it refuses a client with too many
 * wrong tokens and a POST without its CSRF token and Origin.
 */
export function loginRoutes(app: Hono<WebEnv>, access: WebAccess): void {
  app.get("/login", (c) => {
    const next = localPath(c.req.query("next"));
    if (access.token === null) return c.redirect(next, 303);
    return c.html(loginPage(c.get("csrf"), next, false));
  });

  app.post("/login", async (c) => {
    const form = await c.req.parseBody();
    const next = localPath(form.next);
    if (access.token === null) return c.redirect(next, 303);
    const presented = typeof form.token === "string" ? form.token.trim() : "";
    if (!acceptsToken(c, access, presented)) return c.html(loginPage(c.get("csrf"), next, true), 401);
    // The guard may have asked to clear a stale cookie: the new one replaces that request.
    c.header("Set-Cookie", undefined);
    setCookie(c, SESSION_COOKIE, sessionCookieValue(access.token, access.secret), sessionCookieOptions(c));
    return c.redirect(next, 303);
  });

  app.post("/logout", (c) => {
    deleteCookie(c, SESSION_COOKIE, sessionCookieOptions(c));
    return c.redirect(access.token === null ? "/" : "/login", 303);
  });
}

function loginPage(csrf: string, next: string, wrong: boolean) {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>robot-army: log in</title>
<link rel="stylesheet" href="/static/dashboard.css">
</head>
<body class="login">
<main>
<h1>robot-army</h1>
<p>This dashboard needs its token (the content of <code>[web] token_file</code>).</p>
${wrong ? html`<p class="error" role="alert">wrong token</p>` : ""}
<form method="post" action="/login">
<input type="hidden" name="csrf" value="${csrf}">
<input type="hidden" name="next" value="${next}">
<label>Token <input type="password" name="token" autocomplete="current-password" required autofocus></label>
<button type="submit">Log in</button>
</form>
</main>
</body>
</html>
`;
}
