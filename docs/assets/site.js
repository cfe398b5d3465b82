/* Inside the Model: tie formula symbols to diagram boxes, and let wide formulas scroll from the
   keyboard. The math itself is typeset during the build (generator/render/katex.py), so no math
   script runs here. Runs on every page view, including instant navigation (document$). */
(function () {
  "use strict";

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
    markScrolling(root);
    // KaTeX's fonts arrive after the first layout and widen the formulas: check again then.
    if (document.fonts) document.fonts.ready.then(function () { markScrolling(root); });
    bindLights(root);
  }

  if (typeof document$ !== "undefined") {
    document$.subscribe(init);
  } else {
    document.addEventListener("DOMContentLoaded", init);
  }
})();
