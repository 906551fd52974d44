// robot-army's dashboard: keeps the page current without a reload. Every few seconds it
// fetches the page's live parts (the same URL with fragment=1: HTML the server escaped)
// and replaces each element marked data-live with the one of the same id. Nothing else
// runs here, and nothing is ever sent to a worker.
"use strict";
(function () {
  var EVERY_MS = 3000;
  var timer = null;

  function fragmentUrl() {
    var url = new URL(window.location.href);
    url.searchParams.set("fragment", "1");
    return url.toString();
  }

  function unreachable(why) {
    var line = document.getElementById("freshness");
    if (line) {
      line.classList.add("alarm");
      line.textContent = "the dashboard cannot be reached (" + why + "); showing what was read before";
    }
  }

  function refresh() {
    fetch(fragmentUrl(), { credentials: "same-origin", headers: { Accept: "text/html" }, redirect: "manual" })
      .then(function (response) {
        // Logged out (the cookie gone, the token changed): the page itself goes to the login.
        if (response.type === "opaqueredirect" || response.status === 401) { window.location.reload(); return null; }
        if (!response.ok) { unreachable("status " + response.status); return null; }
        var title = response.headers.get("X-Page-Title");
        if (title) document.title = decodeURIComponent(title) + " · robot-army";
        return response.text();
      })
      .then(function (text) {
        if (text === null) return;
        var doc = new DOMParser().parseFromString("<!doctype html><body>" + text, "text/html");
        doc.querySelectorAll("[data-live][id]").forEach(function (fresh) {
          var old = document.getElementById(fresh.id);
          if (old && old.innerHTML !== fresh.innerHTML) old.replaceWith(document.importNode(fresh, true));
        });
      })
      .catch(function (error) { unreachable(String(error && error.message || error)); })
      .finally(schedule);
  }

  function schedule() {
    clearTimeout(timer);
    if (!document.hidden) timer = setTimeout(refresh, EVERY_MS);
  }

  document.addEventListener("visibilitychange", function () { if (!document.hidden) refresh(); else clearTimeout(timer); });
  schedule();
})();
