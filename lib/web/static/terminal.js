/*
 * The item page's terminal, live and read-only: the worker's output, as the server's terminal
 * feed sends it (lib/web/terminal-feed.ts, as server-sent events by lib/web/terminal-events.ts),
 * rendered by xterm.js (the global `Terminal` of /static/xterm.js, loaded before this file).
 *
 * It looks for <div id="terminal" data-stream="/api/items/<id>/terminal">. Events: `reset`
 * clears the terminal and writes the text, `data` writes it after what is shown, `note` is
 * shown beside the terminal (in the element marked data-terminal-note, made after the
 * terminal when the page has none), `end` says the feed is over: no reconnecting.
 * Every event's data is a JSON string. Nothing typed reaches the worker: stdin is disabled
 * and nothing is ever sent back to the server.
 */
(function () {
  "use strict";

  var element = document.getElementById("terminal");
  if (!element || !element.dataset.stream || typeof Terminal !== "function") return;

  adoptScriptStyles();

  var term = new Terminal({
    // The feed sends CR LF itself (a log's LF is translated on the server, a pane's rows are joined with CR LF).
    convertEol: false,
    disableStdin: true,
    scrollback: 5000,
    cursorBlink: false,
    cols: 120,
    rows: 32,
    // A worker's output may carry OSC 8 hyperlinks (text from an issue, say): none is ever followed from here.
    linkHandler: { activate: function () {}, allowNonHttpProtocols: false },
  });
  term.open(element);

  var note = element.parentNode.querySelector("[data-terminal-note]");
  if (!note) {
    note = document.createElement("p");
    note.className = "terminal-note";
    note.setAttribute("data-terminal-note", "");
    note.setAttribute("role", "status");
    note.setAttribute("aria-live", "polite");
    element.insertAdjacentElement("afterend", note);
  }

  /** Sets the note's text (as text, never markup: it may hold what a worker wrote). */
  function showNote(text) {
    note.textContent = text;
    note.hidden = text === "";
  }
  showNote("");

  /** An event's text; undefined (the event ignored) when its data is not a JSON string. */
  function textOf(event) {
    try {
      var text = JSON.parse(event.data);
      return typeof text === "string" ? text : undefined;
    } catch (error) {
      return undefined;
    }
  }

  var source = new EventSource(element.dataset.stream);

  // After a reconnect (EventSource makes them itself) the server starts again with a reset.
  source.addEventListener("reset", function (event) {
    var text = textOf(event);
    if (text === undefined) return;
    showNote("");
    term.reset();
    term.write(text);
  });

  source.addEventListener("data", function (event) {
    var text = textOf(event);
    if (text !== undefined) term.write(text);
  });

  source.addEventListener("note", function (event) {
    var text = textOf(event);
    if (text !== undefined) showNote(text);
  });

  // The feed ended (the session is over): a reconnect would only show the same again.
  source.addEventListener("end", function () {
    source.close();
    element.setAttribute("data-ended", "");
  });

  /**
   * xterm.js styles its screen (cell sizes, colours) with <style> elements it writes at run
   * time, which the page's Content-Security-Policy (style-src 'self') rightly refuses. The
   * pages have no <style> of their own, so every one a script appends is xterm's: it is kept
   * out of the document and its text, as xterm changes it, goes to a constructed style sheet
   * of the document's instead, which the policy allows.
   */
  function adoptScriptStyles() {
    if (!("adoptedStyleSheets" in document) || typeof CSSStyleSheet !== "function") return;
    var appendChild = Node.prototype.appendChild;
    Node.prototype.appendChild = function (child) {
      if (!(child instanceof HTMLStyleElement)) return appendChild.call(this, child);
      var sheet = new CSSStyleSheet();
      var copy = function () {
        sheet.replaceSync(child.textContent || "");
      };
      copy();
      new MutationObserver(copy).observe(child, { childList: true, characterData: true, subtree: true });
      document.adoptedStyleSheets = document.adoptedStyleSheets.concat([sheet]);
      return child;
    };
  }
})();
