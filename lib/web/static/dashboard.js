// robot-army's dashboard: keeps the page current without a reload. Every few seconds it
// fetches the page's live parts (the same URL with fragment=1: HTML the server escaped)
// and replaces each element marked data-live with the one of the same id. A button's form
// (marked data-action) is sent from here, its answer (the command's own words) shown in the
// page's answer box and the live parts fetched at once; its buttons are disabled while it is
// on its way, and its one-time key makes a second press act no more on the server anyway.
// Without this script every form still works, by a plain POST and a redirect back. Times are
// shown in the browser's own zone, the UTC time on hover, and a tap on one switches it.
"use strict";
(function () {
  // Fetched every few seconds; far less often while the server's change stream is open, which says when.
  var EVERY_MS = 3000;
  var WITH_STREAM_MS = 30000;
  var streaming = false;
  // The audit log's newest id when the page's data was read: a change event past it means the page is behind.
  var page = document.getElementById("page");
  var seenId = Number(page && page.dataset.logId || 0);
  var timer = null;
  var ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
  var local = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" });

  // What a part shows, its forms' one-time keys aside (each rendering makes new ones): a part is replaced only when that changed.
  function comparable(html) {
    return html.replace(/name="once" value="[^"]*"/g, "");
  }

  function fragmentUrl() {
    var url = new URL(window.location.href);
    url.searchParams.set("fragment", "1");
    url.searchParams.delete("said");
    return url.toString();
  }

  function unreachable(why) {
    var line = document.getElementById("freshness");
    if (line) {
      line.classList.add("alarm");
      line.textContent = "the dashboard cannot be reached (" + why + "); showing what was read before";
    }
  }

  // Every <time> holding a UTC time shows it in the browser's zone; the UTC time stays in its title and datetime.
  function localTimes(root) {
    root.querySelectorAll("time").forEach(function (time) {
      var utc = time.getAttribute("datetime") || time.textContent.trim();
      if (!ISO.test(utc) || time.dataset.local) return;
      time.setAttribute("datetime", utc);
      time.title = utc.replace("T", " ").replace("Z", " UTC");
      time.dataset.local = local.format(new Date(utc));
      time.textContent = time.dataset.local;
    });
  }

  document.addEventListener("click", function (event) {
    var time = event.target.closest && event.target.closest("time[data-local]");
    if (!time) return;
    time.textContent = time.textContent === time.dataset.local ? time.title : time.dataset.local;
  });

  function refresh() {
    clearTimeout(timer);
    fetch(fragmentUrl(), { credentials: "same-origin", headers: { Accept: "text/html" }, redirect: "manual" })
      .then(function (response) {
        // Logged out (the cookie gone, the token changed): the page itself goes to the login.
        if (response.type === "opaqueredirect" || response.status === 401) { window.location.reload(); return null; }
        if (!response.ok) { unreachable("status " + response.status); return null; }
        var logId = Number(response.headers.get("X-Log-Id"));
        if (logId > seenId) seenId = logId;
        var title = response.headers.get("X-Page-Title");
        if (title) document.title = decodeURIComponent(title) + " · robot-army";
        return response.text();
      })
      .then(function (text) {
        if (text === null) return;
        var doc = new DOMParser().parseFromString("<!doctype html><body>" + text, "text/html");
        doc.querySelectorAll("[data-live][id]").forEach(function (fresh) {
          var old = document.getElementById(fresh.id);
          // A part whose form is on its way is left as it is: its button stays disabled until the answer comes.
          if (!old || old.querySelector("form[data-sending]")) return;
          var seen = comparable(fresh.innerHTML);
          if (old.dataset.html !== seen) {
            var copy = document.importNode(fresh, true);
            copy.dataset.html = seen;
            localTimes(copy);
            old.replaceWith(copy);
          }
        });
      })
      .catch(function (error) { unreachable(String(error && error.message || error)); })
      .finally(schedule);
  }

  // An answer or an error shown at an address that is no page has nothing to refresh.
  var still = document.querySelector("[data-still]") !== null;

  function schedule() {
    clearTimeout(timer);
    if (!document.hidden && !still) timer = setTimeout(refresh, streaming ? WITH_STREAM_MS : EVERY_MS);
  }

  // The server's `change` events (/api/changes): the page's live parts are fetched at once.
  function listen() {
    if (still || typeof EventSource !== "function") return;
    var source = new EventSource("/api/changes");
    function heard(event) { if (Number(event.data) > seenId && !document.hidden) refresh(); }
    source.addEventListener("hello", function (event) { streaming = true; schedule(); heard(event); });
    source.addEventListener("change", heard);
    source.onerror = function () { streaming = false; schedule(); };
  }

  function say(ok, lines) {
    var box = document.getElementById("said");
    if (!box) return;
    var pre = document.createElement("pre");
    pre.className = "said-lines " + (ok ? "ok" : "refused");
    pre.textContent = lines.join("\n");
    box.replaceChildren(pre);
  }

  // A confirmation's form goes the plain way: its answer is shown on the page it came from.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.matches || !form.matches("form[data-action]") || form.closest(".confirm")) return;
    event.preventDefault();
    // One send at a time: a second press while it is on its way does nothing (the server would answer it with the first's answer anyway).
    if (form.dataset.sending) return;
    form.dataset.sending = "1";
    var buttons = form.querySelectorAll("button");
    buttons.forEach(function (b) { b.disabled = true; });
    fetch(form.action, { method: "POST", credentials: "same-origin", headers: { Accept: "application/json" }, body: new URLSearchParams(new FormData(form)) })
      .then(function (response) {
        return response.json().then(function (answer) { return { status: response.status, answer: answer }; });
      })
      .then(function (r) {
        if (r.status === 409 && r.answer.confirm) { window.location.assign(r.answer.confirm); return; }
        say(r.status === 200 && r.answer.ok, r.answer.lines || [r.answer.error || "status " + r.status]);
        var text = form.querySelector("input[name=text]");
        if (text && r.status === 200) text.value = "";
        // A form sent once is spent: its key has acted. A fresh one comes with the refreshed live parts.
        var once = form.querySelector("input[name=once]");
        if (once) once.value = (window.crypto && crypto.randomUUID) ? crypto.randomUUID() : String(Math.random()).slice(2) + String(Date.now());
      })
      .catch(function (error) { say(false, ["not sent: " + String(error && error.message || error)]); })
      .finally(function () {
        delete form.dataset.sending;
        buttons.forEach(function (b) { b.disabled = false; });
        refresh();
      });
  });

  document.querySelectorAll("[data-live][id]").forEach(function (part) { part.dataset.html = comparable(part.innerHTML); });
  localTimes(document);
  listen();
  document.addEventListener("visibilitychange", function () { if (still) return; if (!document.hidden) refresh(); else clearTimeout(timer); });
  schedule();
})();
