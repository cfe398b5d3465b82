/* Inside the Model: typeset math with the bundled KaTeX and tie formula symbols to diagram boxes.
   Runs on every page view, including Material's instant navigation (document$). */
(function () {
  "use strict";

  var KATEX_OPTIONS = {
    throwOnError: false,
    // \htmlData is the only command that needs trust: it tags symbols with data-light keys.
    trust: function (context) { return context.command === "\\htmlData"; },
    strict: function (errorCode) { return errorCode === "htmlExtension" ? "ignore" : "warn"; }
  };

  function typeset(root) {
    root.querySelectorAll(".arithmatex").forEach(function (el) {
      if (el.dataset.typeset) return;
      var tex = el.textContent.trim();
      var display = tex.startsWith("\\[");
      tex = tex.replace(/^\\[\[(]/, "").replace(/\\[\])]$/, "");
      katex.render(tex, el, Object.assign({ displayMode: display }, KATEX_OPTIONS));
      el.dataset.typeset = "1";
    });
    markScrolling(root);
    // KaTeX's fonts arrive after the first layout and widen the formulas: check again then.
    if (document.fonts) document.fonts.ready.then(function () { markScrolling(root); });
  }

  /* A formula wider than its column scrolls sideways: let keyboard users scroll it too. */
  function markScrolling(root) {
    root.querySelectorAll("div.arithmatex").forEach(function (el) {
      if (el.scrollWidth > el.clientWidth && !el.hasAttribute("tabindex")) {
        el.tabIndex = 0;
        el.setAttribute("role", "region");
        el.setAttribute("aria-label", "formula (scrolls sideways)");
      }
    });
  }

  /* Hovering or focusing anything tagged data-light lights everything with the same key. */
  function light(root, key, on) {
    root.querySelectorAll('[data-light="' + key + '"]').forEach(function (el) {
      el.classList.toggle("is-lit", on);
    });
  }

  function bindLights(root) {
    root.querySelectorAll("[data-light]").forEach(function (el) {
      if (el.dataset.lightBound) return;
      el.dataset.lightBound = "1";
      var key = el.getAttribute("data-light");
      ["mouseenter", "focusin"].forEach(function (type) {
        el.addEventListener(type, function () { light(root, key, true); });
      });
      ["mouseleave", "focusout"].forEach(function (type) {
        el.addEventListener(type, function () { light(root, key, false); });
      });
    });
  }

  function init() {
    var root = document.querySelector("article") || document.body;
    typeset(root);
    bindLights(root);
  }

  if (typeof document$ !== "undefined") {
    document$.subscribe(init);
  } else {
    document.addEventListener("DOMContentLoaded", init);
  }
})();
