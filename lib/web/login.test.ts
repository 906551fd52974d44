import { test } from "uvu";
import * as assert from "uvu/assert";
import { Buffer } from "node:buffer";
import { request as httpRequest } from "node:http";
import { browserTest, launchBrowser } from "../testing/browser.ts";
import { TEST_TOKEN, loginCsrf, pageCsrf, send, testAccess, withGuardedApp } from "../testing/web-requests.ts";
import type { GuardedApp } from "../testing/web-requests.ts";
import { sessionCookieValue } from "./security.ts";
import type { WebAccess } from "./security.ts";

const withTokenApp = (fn: (app: GuardedApp, access: WebAccess) => Promise<void>) => withGuardedApp(testAccess({ token: TEST_TOKEN }), fn);

/** POST /login as the browser's form sends it: with the form's CSRF token and this server's Origin. */
const logIn = async (app: GuardedApp, token: string, extra: { next?: string; headers?: Record<string, string> } = {}) => {
  const csrf = await loginCsrf(app);
  const form: Record<string, string> = { csrf, token, ...(extra.next === undefined ? {} : { next: extra.next }) };
  return await send(app, "/login", { form, headers: { Origin: `http://${app.host}`, ...extra.headers } });
};

const sessionOf = (cookies: string[]) => {
  const cookie = cookies.find((c) => c.startsWith("ra_session="));
  assert.ok(cookie, `a session cookie among ${JSON.stringify(cookies)}`);
  return cookie!.split(";")[0];
};

test("the login page: a small form posting to /login with a password field, the CSRF field and the dashboard's stylesheet; no inline script or style", () =>
  withTokenApp(async (app) => {
    const page = await send(app, "/login?next=/items/3");
    assert.is(page.status, 200);
    assert.match(String(page.headers["content-type"]), "text/html");
    assert.match(page.body, '<form method="post" action="/login">');
    assert.match(page.body, /<input type="password" name="token"/);
    assert.match(page.body, /<input type="hidden" name="csrf" value="[A-Za-z0-9_-]{43}">/);
    assert.match(page.body, '<input type="hidden" name="next" value="/items/3">');
    assert.match(page.body, '<link rel="stylesheet" href="/static/dashboard.css">');
    assert.not.match(page.body, /<script|<style|\sstyle=|\son[a-z]+=/i);
    assert.not.match(page.body, "wrong token");
  }));

test("a hostile next is never embedded nor followed: the form carries / instead", () =>
  withTokenApp(async (app) => {
    for (const next of ['/"><script>x</script>', "//evil.example/", "https://evil.example/", "/\\evil.example", "/\t/evil.example"]) {
      const page = await send(app, `/login?next=${encodeURIComponent(next)}`);
      assert.match(page.body, '<input type="hidden" name="next" value="/">', next);
      assert.not.match(page.body, "evil.example");
      assert.not.match(page.body, "<script>");
    }
  }));

test("the right token sets an HttpOnly, SameSite=Strict, Path=/ session cookie for seven days (not the token) and redirects 303 to /; the cookie then opens the pages", () =>
  withTokenApp(async (app, access) => {
    const response = await logIn(app, TEST_TOKEN);
    assert.is(response.status, 303);
    assert.is(response.headers.location, "/");
    assert.is(response.cookies.length, 1);
    const [cookie] = response.cookies;
    const attributes = cookie.split(";").map((a) => a.trim());
    for (const attribute of ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=604800"]) assert.ok(attributes.includes(attribute), `${attribute} in ${cookie}`);
    assert.not.ok(attributes.includes("Secure"), "no Secure over plain http (the browser would drop it)");
    assert.not.match(cookie, TEST_TOKEN);
    const session = sessionOf(response.cookies);
    assert.is(session, `ra_session=${sessionCookieValue(TEST_TOKEN, access.secret)}`);
    const page = await send(app, "/", { headers: { Cookie: session } });
    assert.is(page.status, 200);
    assert.is((await send(app, "/static/app.js", { headers: { Cookie: session } })).status, 200);
    assert.is((await send(app, "/api/things", { headers: { Cookie: session } })).status, 200, "the browser's own API calls go by the cookie");
  }));

test("logging in with a stale cookie (the token changed) sets only the new cookie", () =>
  withTokenApp(async (app, access) => {
    const csrf = await loginCsrf(app);
    const stale = `ra_session=${sessionCookieValue("the-old-token-0123456789", access.secret)}`;
    const response = await send(app, "/login", { form: { csrf, token: TEST_TOKEN }, headers: { Origin: `http://${app.host}`, Cookie: stale } });
    assert.is(response.status, 303);
    assert.equal(response.cookies.map((c) => c.split(";")[0]), [`ra_session=${sessionCookieValue(TEST_TOKEN, access.secret)}`]);
  }));

test("the cookie is Secure when the login came over https (a proxy's X-Forwarded-Proto)", () =>
  withTokenApp(async (app) => {
    // The browser at the proxy's https end sends that origin.
    const response = await logIn(app, TEST_TOKEN, { headers: { "X-Forwarded-Proto": "https", Origin: `https://${app.host}` } });
    assert.is(response.status, 303);
    assert.ok(response.cookies[0].split(";").map((a) => a.trim()).includes("Secure"), response.cookies[0]);
  }));

test("after logging in, a form's POST needs the CSRF token of that session: the login form's token no longer serves", () =>
  withTokenApp(async (app) => {
    const anonymous = await loginCsrf(app);
    const session = sessionOf((await logIn(app, TEST_TOKEN)).cookies);
    const csrf = await pageCsrf(app, session);
    assert.is.not(csrf, anonymous);
    const origin = `http://${app.host}`;
    assert.is((await send(app, "/poke", { form: { csrf: anonymous, note: "x" }, headers: { Cookie: session, Origin: origin } })).status, 403);
    const poked = await send(app, "/poke", { form: { csrf, note: "x" }, headers: { Cookie: session, Origin: origin } });
    assert.equal([poked.status, poked.body], [200, "poked: x"]);
  }));

test("a wrong token shows the form again with \"wrong token\" and 401, and sets no cookie", () =>
  withTokenApp(async (app) => {
    const response = await logIn(app, "not-the-token", { next: "/queue" });
    assert.is(response.status, 401);
    assert.match(response.body, "wrong token");
    assert.match(response.body, '<form method="post" action="/login">');
    assert.match(response.body, '<input type="hidden" name="next" value="/queue">', "the way back is kept");
    assert.equal(response.cookies, []);
  }));

test("success goes to next when it is a path on this server, never to another host", () =>
  withTokenApp(async (app) => {
    assert.is((await logIn(app, TEST_TOKEN, { next: "/items/3?tab=log" })).headers.location, "/items/3?tab=log");
    for (const next of ["//evil.example/", "https://evil.example/", "/\\evil.example", "javascript:alert(1)", "/\n/evil.example", "", "/.//evil.example", "/a/..//evil.example", "/%2e//evil.example", "/%2E%2e/x", "/a//b"]) {
      assert.is((await logIn(app, TEST_TOKEN, { next })).headers.location, "/", JSON.stringify(next));
    }
    // Once resolved as a browser resolves it, a path with a dot segment could name another host: never followed.
    assert.is(new URL("/.//evil.example", "http://robot.lan").host, "robot.lan");
    assert.is(new URL("/.//evil.example", "http://robot.lan").pathname, "//evil.example");
  }));

test("the login POST needs its CSRF token and this server's Origin like every POST, even with the right token", () =>
  withTokenApp(async (app) => {
    const csrf = await loginCsrf(app);
    const origin = `http://${app.host}`;
    assert.is((await send(app, "/login", { form: { token: TEST_TOKEN }, headers: { Origin: origin } })).status, 403, "no CSRF token");
    assert.is((await send(app, "/login", { form: { token: TEST_TOKEN, csrf } })).status, 403, "no Origin");
    assert.is((await send(app, "/login", { form: { token: TEST_TOKEN, csrf }, headers: { Origin: "http://evil.example" } })).status, 403, "a foreign Origin");
    assert.is((await send(app, "/login", { form: { token: TEST_TOKEN, csrf }, headers: { Origin: origin } })).status, 303);
  }));

test("five wrong tokens in the form within a minute: the sixth try, right or wrong, is refused with 429 and Retry-After; the owner logged in before stays in", () =>
  withTokenApp(async (app) => {
    const owner = sessionOf((await logIn(app, TEST_TOKEN)).cookies);
    for (let attempt = 1; attempt <= 5; attempt++) assert.is((await logIn(app, `guess-${attempt}`)).status, 401, `try ${attempt}`);
    // The form is shown (it is no guess), but its POST is refused even with the right token: were
    // the right one let in while limited, a guesser would learn which of its guesses was right.
    const limited = await logIn(app, TEST_TOKEN);
    assert.is(limited.status, 429);
    assert.match(limited.body, "too many wrong tokens");
    assert.ok(Number(limited.headers["retry-after"]) > 0 && Number(limited.headers["retry-after"]) <= 60, String(limited.headers["retry-after"]));
    assert.equal(limited.cookies, []);
    assert.is((await send(app, "/", { headers: { Cookie: owner } })).status, 200, "the session cookie still opens the pages");
    const csrf = await pageCsrf(app, owner);
    const poked = await send(app, "/poke", { form: { csrf, note: "still in" }, headers: { Cookie: owner, Origin: `http://${app.host}` } });
    assert.equal([poked.status, poked.body], [200, "poked: still in"], "and its forms");
  }));

test("POST /logout clears the cookie and goes to /login; it needs the CSRF token too", () =>
  withTokenApp(async (app) => {
    const session = sessionOf((await logIn(app, TEST_TOKEN)).cookies);
    const csrf = await pageCsrf(app, session);
    const origin = `http://${app.host}`;
    assert.is((await send(app, "/logout", { form: {}, headers: { Cookie: session, Origin: origin } })).status, 403);
    const out = await send(app, "/logout", { form: { csrf }, headers: { Cookie: session, Origin: origin } });
    assert.is(out.status, 303);
    assert.is(out.headers.location, "/login");
    assert.match(out.cookies.join("\n"), /^ra_session=; Max-Age=0.*HttpOnly.*SameSite=Strict/m);
  }));

test("with no token (loopback) there is nothing to log in to: /login sends the browser on", () =>
  withGuardedApp(testAccess(), async (app) => {
    assert.is((await send(app, "/login?next=/queue")).headers.location, "/queue");
    const csrf = await pageCsrf(app);
    const posted = await send(app, "/login", { form: { csrf, token: "anything" }, headers: { Origin: `http://${app.host}` } });
    assert.equal([posted.status, posted.headers.location, posted.cookies], [303, "/", []]);
  }));

browserTest(test)("in a real browser: the login form, a wrong token, the right one, back to the page asked for, and its form's POST accepted", () =>
  withTokenApp(async (app) => {
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(`http://${app.host}/?from=test`);
      assert.is(page.url(), `http://${app.host}/login?next=%2F%3Ffrom%3Dtest`);
      await page.fill('input[name="token"]', "a-wrong-guess");
      const wrong = await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]).then(([response]) => response);
      assert.is(wrong?.status(), 401);
      assert.match(await page.textContent("body") ?? "", "wrong token");
      await page.fill('input[name="token"]', TEST_TOKEN);
      await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
      assert.is(page.url(), `http://${app.host}/?from=test`);
      const [cookie] = await page.context().cookies();
      assert.equal([cookie.name, cookie.httpOnly, cookie.sameSite, cookie.path], ["ra_session", true, "Strict", "/"]);
      // The page's own form: the browser sends its Origin (a no-referrer policy would make it "null").
      const poked = await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]).then(([response]) => response);
      assert.is(poked?.status(), 200);
      assert.is(await page.textContent("body"), "poked: from the page");
    } finally {
      await browser.close();
    }
  }));

test("wrong tokens sent at once are counted as they arrive: of 30 parallel guesses five are judged, the rest refused with 429", () =>
  withTokenApp(async (app) => {
    const csrf = await loginCsrf(app);
    // Every guess's head first, its body only once all 30 are in: a limit counted after the body is read would judge them all.
    let release: () => void = () => {};
    const bodies = new Promise<void>((resolve) => (release = resolve));
    const guesses = Array.from({ length: 30 }, (_, n) => new Promise<number>((resolve, reject) => {
      const body = new URLSearchParams({ csrf, token: `guess-${n}` }).toString();
      const req = httpRequest({
        host: "127.0.0.1", port: app.port, path: "/login", method: "POST", setHost: false,
        headers: { Host: app.host, Origin: `http://${app.host}`, "Content-Type": "application/x-www-form-urlencoded", "Content-Length": String(Buffer.byteLength(body)) },
      }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.flushHeaders();
      void bodies.then(() => req.end(body));
    }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    release();
    const statuses = await Promise.all(guesses);
    assert.equal([statuses.filter((s) => s === 401).length, statuses.filter((s) => s === 429).length], [5, 25], statuses.join(" "));
  }));

test("a right token takes back the try counted for it: four wrong, the right one, and a fifth wrong are all judged", () =>
  withTokenApp(async (app) => {
    for (let n = 0; n < 4; n++) assert.is((await logIn(app, `wrong-${n}`)).status, 401);
    assert.is((await logIn(app, TEST_TOKEN)).status, 303);
    assert.is((await logIn(app, "wrong-again")).status, 401, "the right login was not counted as a wrong try");
    assert.is((await logIn(app, "and-again")).status, 429);
  }));

/** Sends only the head of a POST /login whose body would be `length` bytes (or chunked), and reads the answer. */
function headOnly(app: GuardedApp, headers: Record<string, string>): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port: app.port, path: "/login", method: "POST", headers: { Host: app.host, Origin: `http://${app.host}`, ...headers }, setHost: false }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, ms: performance.now() - started });
      req.destroy();
    });
    req.on("error", (error) => (error.message.includes("socket hang up") ? undefined : reject(error)));
    // A server that waits for the rest of the body never answers: that is the failure this looks for.
    setTimeout(() => {
      req.destroy();
      reject(new Error("no answer in 5 s: the server is reading the body it should have refused"));
    }, 5_000).unref();
    // The head and a few bytes; the rest of the announced body never comes.
    req.write("token=x&");
  });
}

test("a body larger than a form is refused with 413 before it is read, whichever way the CSRF token comes; one of unknown length with 411", () =>
  withTokenApp(async (app) => {
    const csrf = await loginCsrf(app);
    const huge = String(200 * 1024 * 1024);
    const inHeader = await headOnly(app, { "X-CSRF-Token": csrf, "Content-Type": "application/x-www-form-urlencoded", "Content-Length": huge });
    assert.is(inHeader.status, 413, "the token in a header no longer skips the limit");
    assert.is((await headOnly(app, { "Content-Type": "application/x-www-form-urlencoded", "Content-Length": huge })).status, 413);
    assert.is((await headOnly(app, { "X-CSRF-Token": csrf, "Content-Type": "text/plain", "Transfer-Encoding": "chunked" })).status, 411);
    assert.ok(inHeader.ms < 2_000, "answered at once, without waiting for the body");
  }));

test.run();
