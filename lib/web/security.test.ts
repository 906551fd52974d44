import { test } from "uvu";
import * as assert from "uvu/assert";
import { chmodSync, writeFileSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { parseConfig } from "../config.ts";
import { PreconditionError } from "../errors.ts";
import { withTempDir } from "../testing/fixtures.ts";
import { TEST_TOKEN, pageCsrf, send, startGuardedApp, testAccess, withGuardedApp } from "../testing/web-requests.ts";
import { MAX_IN_FLIGHT, SECURITY_HEADERS, isLoopback, sessionCookieValue, webAccess } from "./security.ts";

const assertSecured = (headers: Record<string, unknown>, what: string) => {
  const csp = String(headers["content-security-policy"]);
  for (const directive of ["script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'", "form-action 'self'"]) {
    assert.ok(csp.includes(directive), `${what}: CSP has ${directive}: ${csp}`);
  }
  assert.not.ok(csp.includes("unsafe"), `${what}: nothing unsafe in the CSP`);
  assert.is(headers["x-content-type-options"], "nosniff", what);
  assert.is(headers["referrer-policy"], "same-origin", what);
  assert.is(headers["cache-control"], "no-store", what);
};

test("isLoopback: 127.0.0.0/8, ::1 (bare or bracketed), localhost; 0.0.0.0, ::, LAN addresses and names are beyond loopback", () => {
  for (const bind of ["127.0.0.1", "127.0.0.2", "127.255.255.254", "::1", "[::1]", "localhost", "LOCALHOST", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1"]) {
    assert.ok(isLoopback(bind), bind);
  }
  for (const bind of ["0.0.0.0", "::", "[::]", "192.168.1.5", "10.0.0.1", "128.0.0.1", "fe80::1", "robot.lan", "localhost.evil.example", "", "127.0.0.1 x"]) {
    assert.not.ok(isLoopback(bind), bind);
  }
});

test("every response carries the security headers: pages, redirects, refusals, a missing route and an error", () =>
  withGuardedApp(testAccess({ token: TEST_TOKEN }), async (app) => {
    const responses = {
      "the login page": await send(app, "/login"),
      "the redirect to /login": await send(app, "/"),
      "the API's 401": await send(app, "/api/things"),
      "the foreign Host's 421": await send(app, "/", { host: "evil.example" }),
      "the missing route's 404": await send(app, "/api/nope", { headers: { Authorization: `Bearer ${TEST_TOKEN}` } }),
      "the public stylesheet": await send(app, "/static/dashboard.css"),
      "a POST's 403": await send(app, "/login", { form: { token: TEST_TOKEN } }),
    };
    for (const [what, response] of Object.entries(responses)) assertSecured(response.headers, what);
    assert.equal(Object.values(responses).map((r) => r.status), [200, 303, 401, 421, 404, 200, 403]);
  }));

test("an error in a route still carries the security headers (500)", () =>
  withGuardedApp(testAccess(), async (app) => {
    const response = await send(app, "/boom");
    assert.is(response.status, 500);
    assertSecured(response.headers, "the 500");
    assert.is(response.headers["x-frame-options"], SECURITY_HEADERS["X-Frame-Options"]);
  }));

test("a loopback server answers its own names (any case, any port) and refuses any other Host with 421 naming [web] allowed_hosts", () =>
  withGuardedApp(testAccess(), async (app) => {
    for (const host of [app.host, "127.0.0.1", "localhost", `LocalHost:${app.port}`, "[::1]", `[::1]:${app.port}`]) {
      assert.is((await send(app, "/", { host })).status, 200, host);
    }
    for (const host of ["evil.example", `evil.example:${app.port}`, "localhost.evil.example", "127.0.0.1.nip.io", "0.0.0.0", "192.168.1.5"]) {
      const refused = await send(app, "/", { host });
      assert.is(refused.status, 421, host);
      assert.match(refused.body, "[web] allowed_hosts");
      assert.is(refused.body.trim().split("\n").length, 1, "one line");
      assert.not.match(refused.body, "csrf=", "nothing of the page");
    }
  }));

test("DNS rebinding: a page on evil.example that resolves to 127.0.0.1 reads nothing, not even the API", () =>
  withGuardedApp(testAccess(), async (app) => {
    const api = await send(app, "/api/things", { host: `evil.example:${app.port}` });
    assert.is(api.status, 421);
    assert.not.match(api.body, "things");
    // The request line's own absolute URL cannot name another host either.
    assert.is((await send(app, "http://evil.example/api/things")).status, 421);
  }));

test("allowed_hosts: a name without a port is answered on any port, one with a port on that port only (a Host without one: the scheme's), in any case", () =>
  withGuardedApp(testAccess({ token: TEST_TOKEN, allowedHosts: ["robot.lan", "Dash.Example:443", "plain.example:80"] }), async (app) => {
    const bearer = { Authorization: `Bearer ${TEST_TOKEN}` };
    const status = async (host: string, headers: Record<string, string> = {}) => (await send(app, "/api/things", { host, headers: { ...bearer, ...headers } })).status;
    for (const host of ["robot.lan", "ROBOT.LAN:8787", "robot.lan:1", "dash.example:443", "DASH.EXAMPLE:0443", "plain.example", "plain.example:80"]) assert.is(await status(host), 200, host);
    assert.is(await status("dash.example", { "X-Forwarded-Proto": "https" }), 200, "https's port, through a proxy");
    for (const host of ["dash.example", "dash.example:8443", "dash.example:80", "plain.example:8080", "other.lan", "robot.lan.evil.example"]) assert.is(await status(host), 421, host);
    assert.is(await status("plain.example", { "X-Forwarded-Proto": "https" }), 421, "plain.example is allowed on port 80 only");
  }));

test("bound to 0.0.0.0: the literal addresses of this machine's interfaces and allowed_hosts, never 0.0.0.0 or localhost", () =>
  withGuardedApp(testAccess({ bind: "0.0.0.0", token: TEST_TOKEN, allowedHosts: ["robot.lan"] }), async (app) => {
    const bearer = { Authorization: `Bearer ${TEST_TOKEN}` };
    const own = Object.values(networkInterfaces()).flat().filter((a) => a !== undefined).map((a) => a!.family === "IPv6" ? `[${a!.address}]` : a!.address);
    for (const host of [...own, "robot.lan"]) assert.is((await send(app, "/api/things", { host, headers: bearer })).status, 200, host);
    for (const host of ["0.0.0.0", "localhost", "evil.example", "203.0.113.9"]) {
      assert.is((await send(app, "/api/things", { host, headers: bearer })).status, 421, host);
    }
  }));

test("bound to one LAN address: that address and allowed_hosts, not the loopback names", () =>
  withGuardedApp(testAccess({ bind: "192.0.2.10", token: TEST_TOKEN }), async (app) => {
    const bearer = { Authorization: `Bearer ${TEST_TOKEN}` };
    assert.is((await send(app, "/api/things", { host: "192.0.2.10:8787", headers: bearer })).status, 200);
    for (const host of ["127.0.0.1", "localhost", "[::1]"]) assert.is((await send(app, "/api/things", { host, headers: bearer })).status, 421, host);
  }));

test("on loopback without a token no login is needed: pages, API and static files answer", () =>
  withGuardedApp(testAccess(), async (app) => {
    assert.is((await send(app, "/")).status, 200);
    assert.equal(JSON.parse((await send(app, "/api/things")).body), { things: 2 });
    assert.is((await send(app, "/static/app.js")).status, 200);
    assert.is((await send(app, "/login")).headers.location, "/", "nothing to log in to");
  }));

test("with a token (even on loopback): a page redirects to /login with its path, the API answers 401 JSON, static files 401 but the stylesheet", () =>
  withGuardedApp(testAccess({ token: TEST_TOKEN }), async (app) => {
    const page = await send(app, "/items/7?tab=log");
    assert.is(page.status, 303);
    assert.is(page.headers.location, "/login?next=%2Fitems%2F7%3Ftab%3Dlog");
    const api = await send(app, "/api/things");
    assert.is(api.status, 401);
    assert.match(String(api.headers["content-type"]), "application/json");
    assert.type(JSON.parse(api.body).error, "string");
    assert.is(api.headers["www-authenticate"], 'Bearer realm="robot-army"');
    assert.is((await send(app, "/static/app.js")).status, 401);
    assert.is((await send(app, "/static/dashboard.css")).status, 200);
    assert.is((await send(app, "/poke", { form: { note: "x" } })).headers.location, "/login", "a POST is sent to the login without a next");
  }));

test("Authorization: Bearer with the right token opens the API (not pages); a wrong one is 401", () =>
  withGuardedApp(testAccess({ token: TEST_TOKEN }), async (app) => {
    assert.equal(JSON.parse((await send(app, "/api/things", { headers: { Authorization: `Bearer ${TEST_TOKEN}` } })).body), { things: 2 });
    assert.is((await send(app, "/api/things", { headers: { Authorization: `Bearer ${TEST_TOKEN}x` } })).status, 401);
    assert.is((await send(app, "/api/things", { headers: { Authorization: `Basic ${TEST_TOKEN}` } })).status, 401);
    assert.is((await send(app, "/", { headers: { Authorization: `Bearer ${TEST_TOKEN}` } })).status, 303, "pages go by the cookie");
    // A Bearer token is no ambient credential a browser adds: an API POST with it needs no CSRF token.
    const made = await send(app, "/api/things", { method: "POST", headers: { Authorization: `Bearer ${TEST_TOKEN}` } });
    assert.equal([made.status, made.body], [200, '{"made":true}']);
  }));

test("the session cookie is derived from the token and the server's secret, never the token itself, and changes with either", () => {
  const secret = testAccess().secret;
  const cookie = sessionCookieValue(TEST_TOKEN, secret);
  assert.is.not(cookie, TEST_TOKEN);
  assert.not.ok(cookie.includes(TEST_TOKEN));
  assert.is(sessionCookieValue(TEST_TOKEN, secret), cookie, "the same token on the same server, the same cookie");
  assert.is.not(sessionCookieValue(TEST_TOKEN + "2", secret), cookie);
  assert.is.not(sessionCookieValue(TEST_TOKEN, testAccess().secret), cookie, "another server process, another cookie");
  assert.match(cookie, /^[A-Za-z0-9_-]{43}$/);
});

test("a cookie made from the old token, or by the server before a restart, no longer opens the dashboard and is cleared", () =>
  withGuardedApp(testAccess({ token: TEST_TOKEN + "-new" }), async (app, access) => {
    const before = testAccess().secret;
    for (const stale of [sessionCookieValue(TEST_TOKEN, access.secret), sessionCookieValue(TEST_TOKEN + "-new", before)]) {
      const refused = await send(app, "/", { headers: { Cookie: `ra_session=${stale}` } });
      assert.is(refused.status, 303);
      assert.match(refused.cookies.join("\n"), /ra_session=; Max-Age=0/);
    }
    const fresh = await send(app, "/", { headers: { Cookie: `ra_session=${sessionCookieValue(TEST_TOKEN + "-new", access.secret)}` } });
    assert.is(fresh.status, 200);
  }));

test("five wrong Bearer tokens within a minute: the client's Bearers are refused with 429 and Retry-After, the right one too, until the window passes; a stale cookie is cleared, not counted; a valid cookie stays in", async () => {
  const saved = process.env.RA_NOW;
  process.env.RA_NOW = "2026-03-01T10:00:00Z";
  try {
    await withGuardedApp(testAccess({ token: TEST_TOKEN }), async (app, access) => {
      const right = { Authorization: `Bearer ${TEST_TOKEN}` };
      for (let n = 1; n <= 4; n++) assert.is((await send(app, "/api/things", { headers: { Authorization: `Bearer guess-${n}` } })).status, 401);
      // A stale cookie (a restart, a changed token) is a browser coming back, not a guess: cleared, never counted.
      for (let n = 0; n < 6; n++) {
        const stale = await send(app, "/", { headers: { Cookie: "ra_session=from-before-a-restart" } });
        assert.is(stale.status, 303);
        assert.match(String(stale.headers["set-cookie"]), "ra_session=;");
      }
      process.env.RA_NOW = "2026-03-01T10:00:20Z";
      assert.is((await send(app, "/api/things", { headers: right })).status, 200, "four wrong tries are not yet too many");
      assert.is((await send(app, "/api/things", { headers: { Authorization: "Bearer guess-5" } })).status, 401);
      const limited = await send(app, "/api/things", { headers: right });
      assert.is(limited.status, 429);
      assert.is(limited.headers["retry-after"], "40", "until the first wrong try is a minute old");
      assert.type(JSON.parse(limited.body).error, "string");
      assertSecured(limited.headers, "the 429");
      // The owner logged in already (the session cookie) shares the address with the guesser: still in.
      const session = { Cookie: `ra_session=${sessionCookieValue(TEST_TOKEN, access.secret)}` };
      assert.is((await send(app, "/api/things", { headers: session })).status, 200, "a valid cookie, the API");
      assert.is((await send(app, "/", { headers: session })).status, 200, "a valid cookie, a page");
      assert.is((await send(app, "/api/things", { headers: { ...session, ...right } })).status, 429, "a Bearer waits out the limit whatever cookie comes with it");
      assert.is((await send(app, "/")).headers.location, "/login?next=%2F", "no credential: no guess, sent to the login");
      assert.is((await send(app, "/login")).status, 200, "the login form is shown (its POST is refused: login.test.ts)");
      assert.is((await send(app, "/api/things", { headers: right, from: "127.0.0.2" })).status, 200, "another client is not limited");
      process.env.RA_NOW = "2026-03-01T10:01:00Z";
      assert.is((await send(app, "/api/things", { headers: right })).status, 200, "the first wrong try has left the window");
    });
  } finally {
    if (saved === undefined) delete process.env.RA_NOW;
    else process.env.RA_NOW = saved;
  }
});

test("a wrong Bearer beside a valid cookie is a wrong try and lets nothing in", () =>
  withGuardedApp(testAccess({ token: TEST_TOKEN }), async (app, access) => {
    const session = { Cookie: `ra_session=${sessionCookieValue(TEST_TOKEN, access.secret)}` };
    for (let n = 1; n <= 5; n++) assert.is((await send(app, "/api/things", { headers: { ...session, Authorization: `Bearer guess-${n}` } })).status, 401);
    assert.is((await send(app, "/api/things", { headers: { Authorization: `Bearer ${TEST_TOKEN}` } })).status, 429, "the five counted");
  }));

test("CSRF: a POST without the token is 403; with it but a foreign, null or missing Origin 403; with both the route runs and reads its form", () =>
  withGuardedApp(testAccess(), async (app) => {
    const csrf = await pageCsrf(app);
    const origin = `http://${app.host}`;
    const noToken = await send(app, "/poke", { form: { note: "hi" }, headers: { Origin: origin } });
    assert.is(noToken.status, 403);
    assert.match(noToken.body, "CSRF");
    assertSecured(noToken.headers, "the 403");
    assert.is((await send(app, "/poke", { form: { note: "hi", csrf: csrf + "x" }, headers: { Origin: origin } })).status, 403, "a wrong token");
    const foreign = ["http://evil.example", `http://evil.example:${app.port}`, "null",
      // Not this request's own origin, though the host is ours: another port, another scheme, another of our names.
      "http://127.0.0.1:9999", "http://127.0.0.1", `https://${app.host}`, `http://localhost:${app.port}`, `http://[::1]:${app.port}`];
    for (const headers of [{}, ...foreign.map((Origin) => ({ Origin }))] as Record<string, string>[]) {
      const refused = await send(app, "/poke", { form: { note: "hi", csrf }, headers });
      assert.is(refused.status, 403, JSON.stringify(headers));
      assert.match(refused.body, "Origin");
    }
    const poked = await send(app, "/poke", { form: { note: "hi", csrf }, headers: { Origin: origin } });
    assert.equal([poked.status, poked.body], [200, "poked: hi"]);
    const byHeader = await send(app, "/poke", { form: { note: "by header" }, host: `localhost:${app.port}`, headers: { Origin: `http://LocalHost:${app.port}`, "X-CSRF-Token": csrf } });
    assert.equal([byHeader.status, byHeader.body], [200, "poked: by header"]);
    const multipart = await send(app, "/poke", { method: "POST", headers: { Origin: origin, "Content-Type": "multipart/form-data; boundary=b", "Content-Length": "0" } });
    assert.is(multipart.status, 403, "a form that does not parse holds no token");
  }));

test("behind a TLS proxy (a token configured): a POST's Origin is https with the Host as sent; its plain-http twin is refused", () =>
  withGuardedApp(testAccess({ token: TEST_TOKEN, allowedHosts: ["dash.example"] }), async (app, access) => {
    const cookie = `ra_session=${sessionCookieValue(TEST_TOKEN, access.secret)}`;
    const proxied = { Cookie: cookie, "X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.7" };
    const csrf = await pageCsrf(app, cookie);
    const post = (origin: string) => send(app, "/poke", { host: "dash.example", form: { csrf, note: "proxied" }, headers: { ...proxied, Origin: origin } });
    assert.equal([(await post("https://dash.example")).status, (await post("https://dash.example")).body], [200, "poked: proxied"]);
    for (const origin of ["http://dash.example", "https://dash.example:8443", "https://evil.example"]) assert.is((await post(origin)).status, 403, origin);
  }));

test("with no token, a request that came through a proxy is refused (403, one line naming [web] token_file): a proxy's Host 127.0.0.1 is no proof it came from here", () =>
  withGuardedApp(testAccess(), async (app) => {
    for (const header of ["Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Real-IP", "Via"]) {
      const refused = await send(app, "/api/things", { headers: { [header]: header === "Forwarded" ? "for=203.0.113.7" : "203.0.113.7" } });
      assert.is(refused.status, 403, header);
      assert.match(refused.body, "[web] token_file");
      assert.match(refused.body, header.toLowerCase());
      assert.is(refused.body.trim().split("\n").length, 1, "one line");
      assert.not.match(refused.body, "things");
      assertSecured(refused.headers, `the 403 for ${header}`);
    }
    assert.is((await send(app, "/api/things")).status, 200, "straight from this machine it answers");
  }));

test("with a token, requests through a proxy are served as any other: the token is the door", () =>
  withGuardedApp(testAccess({ token: TEST_TOKEN }), async (app) => {
    const headers = { Authorization: `Bearer ${TEST_TOKEN}`, "X-Forwarded-For": "203.0.113.7", "X-Real-IP": "203.0.113.7", Forwarded: "for=203.0.113.7" };
    assert.is((await send(app, "/api/things", { headers })).status, 200);
  }));

test("CSRF tokens belong to one server process: another process's secret makes them stale", async () => {
  const first = await startGuardedApp(testAccess());
  const csrf = await pageCsrf(first).finally(() => first.close());
  await withGuardedApp(testAccess(), async (app) => {
    assert.is((await send(app, "/poke", { form: { csrf }, headers: { Origin: `http://${app.host}` } })).status, 403);
  });
});

test("webAccess: loopback needs no token file; beyond loopback without one it refuses to start, naming [web] token_file", async () => {
  const config = await parseConfig("", "(test)", {});
  const access = webAccess(config, "127.0.0.1", 8787);
  assert.equal([access.bind, access.port, access.token, access.allowedHosts], ["127.0.0.1", 8787, null, []]);
  assert.is(access.secret.length, 32);
  assert.is.not(Buffer.from(webAccess(config, "::1", 0).secret).toString("hex"), Buffer.from(access.secret).toString("hex"), "a fresh secret each server");
  for (const bind of ["0.0.0.0", "::", "192.168.1.5", "robot.lan"]) {
    try {
      webAccess(config, bind, 8787);
      assert.unreachable(bind);
    } catch (error) {
      assert.instance(error, PreconditionError, bind);
      assert.match((error as Error).message, "[web] token_file");
      assert.match((error as Error).message, `"${bind}"`);
    }
  }
});

test("webAccess: allowed_hosts naming a host beyond loopback needs a token file, since that name is how others reach it; loopback names need none", async () => {
  const remote = await parseConfig(`[web]\nallowed_hosts = ["localhost:8787", "robot.lan"]\n`, "(test)", {});
  assert.throws(() => webAccess(remote, "127.0.0.1", 8787), (error: Error) =>
    error instanceof PreconditionError && error.message.includes('allowed_hosts names "robot.lan"') && error.message.includes("set [web] token_file"));
  const local = await parseConfig(`[web]\nallowed_hosts = ["localhost", "127.0.0.2:8787", "[::1]"]\n`, "(test)", {});
  assert.equal(webAccess(local, "127.0.0.1", 8787).allowedHosts, ["localhost", "127.0.0.2:8787", "[::1]"]);
});

test("webAccess reads the token file whenever it is set, loopback or not, and refuses one others can read or too short a token", () =>
  withTempDir(async (dir) => {
    const file = join(dir, "web-token");
    writeFileSync(file, `${TEST_TOKEN}\n`, { mode: 0o600 });
    const config = await parseConfig(`[web]\ntoken_file = "${file}"\nallowed_hosts = ["robot.lan"]\n`, join(dir, "config.toml"), {});
    assert.is(webAccess(config, "127.0.0.1", 0).token, TEST_TOKEN);
    assert.equal(webAccess(config, "0.0.0.0", 0).allowedHosts, ["robot.lan"]);
    chmodSync(file, 0o644);
    assert.throws(() => webAccess(config, "0.0.0.0", 0), (error: Error) => error instanceof PreconditionError && /mode 0644/.test(error.message));
    writeFileSync(file, "short\n", { mode: 0o600 });
    chmodSync(file, 0o600);
    assert.throws(() => webAccess(config, "0.0.0.0", 0), (error: Error) => error instanceof PreconditionError && /at least 16/.test(error.message));
  }));

test("requests answered at once are bounded: past MAX_IN_FLIGHT the next is refused with 503 and Retry-After, and served again once they end", async () => {
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const app = await startGuardedApp(testAccess(), (routes) => routes.get("/slow", async (c) => {
    await held;
    return c.text("late");
  }));
  try {
    const slow = Array.from({ length: MAX_IN_FLIGHT }, () => send(app, "/slow"));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const refused = await send(app, "/");
    assert.is(refused.status, 503);
    assert.is(refused.headers["retry-after"], "1");
    assertSecured(refused.headers, "the 503");
    release();
    assert.ok((await Promise.all(slow)).every((r) => r.status === 200 && r.body === "late"));
    assert.is((await send(app, "/")).status, 200);
  } finally {
    release();
    await app.close();
  }
});

test.run();
