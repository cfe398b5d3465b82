/* Inside the Model: tie formula symbols to diagram boxes, and let wide formulas scroll from the
   keyboard. The math itself is typeset during the build (generator/render/katex.py), so no math
   script runs here. Runs on every page view, including instant navigation (document$). */
(function () {
  "use strict";

  /* A formula, a table or a row of tab labels wider than its column scrolls sideways: let
     keyboard users scroll it too. Tables scroll in the wrapper Material puts around them (not
     inside a scroller of ours, where the wrapper does not scroll). Each scroller is a region
     named after what it holds, so no two regions of a page share a name (axe: landmark-unique).
     The HTML makes every display formula, table and code block a tab stop, for readers without
     JavaScript (generator/render/page_html.py, katex.py); here, where widths can be measured,
     one that fits gives its tab stop back, and a table Material wrapped leaves it to the
     wrapper. */
  function markScrolling(root) {
    root.querySelectorAll(".md-typeset__table > table[tabindex]").forEach(function (table) {
      table.removeAttribute("tabindex");
    });
    [["div.arithmatex", "formula"], [".md-typeset__scrollwrap", "table"],
     [".tabbed-labels", "tab labels"], ["pre > code", ""]].forEach(function (kind) {
      root.querySelectorAll(kind[0]).forEach(function (el) {
        var scrolls = el.scrollWidth > el.clientWidth &&
          /auto|scroll/.test(getComputedStyle(el).overflowX);
        if (!scrolls) {
          if (el.offsetParent === null) return; // in a hidden tab: measured when it is shown
          if (el.dataset.itmName || el.getAttribute("tabindex") === "0") {
            el.removeAttribute("tabindex");
            el.removeAttribute("role");
            el.removeAttribute("aria-label");
            delete el.dataset.itmName;
          }
          return;
        }
        if (el.dataset.itmName || (kind[1] && el.getAttribute("aria-label"))) return;
        el.tabIndex = 0;
        if (!kind[1]) return; // code: focusable, as Material makes the blocks it has measured
        el.setAttribute("role", "region");
        el.setAttribute("aria-label", kind[1] + scrollerPlace(el) + " (scrolls sideways)");
      });
    });
    uniqueNames(root);
  }

  /* " under “Heading”": the nearest heading above an element, to tell scrollers apart. */
  function scrollerPlace(el) {
    var headings = el.closest("article, .md-content, body").querySelectorAll("h1, h2, h3");
    var above = null;
    headings.forEach(function (h) {
      if (h.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING) above = h;
    });
    var text = above ? above.textContent.replace(/¶/g, "").trim() : "";
    return text ? " under \u201c" + text + "\u201d" : "";
  }

  /* Regions that still share a name get a number: "table under “X” (scrolls sideways), 2". */
  function uniqueNames(root) {
    var seen = {};
    root.querySelectorAll('[role="region"][aria-label]').forEach(function (el) {
      var name = el.getAttribute("aria-label"), base = el.dataset.itmName || name;
      el.dataset.itmName = base;
      seen[base] = (seen[base] || 0) + 1;
      el.setAttribute("aria-label", seen[base] > 1 ? base + ", " + seen[base] : base);
    });
  }

  /* Material wraps each code block's copy button in a <nav>: a landmark per code block, all
     unnamed (axe: landmark-unique). A button needs no landmark; the search results' scrolling
     box is focusable, so it is named as a region (axe: focus-order-semantics). */
  function quietLandmarks() {
    document.querySelectorAll("nav.md-code__nav:not([role])").forEach(function (nav) {
      nav.setAttribute("role", "none");
    });
    var results = document.querySelector(".md-search__scrollwrap[tabindex]");
    if (results && !results.hasAttribute("role")) {
      results.setAttribute("role", "region");
      results.setAttribute("aria-label", "Search results");
    }
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

  /* Code tabs are titled "file.py lines": choosing a file in one set chooses the same file in
     every set of the page (Material links only labels whose whole text is equal). */
  function linkCodeTabs(root) {
    if (root.dataset.codeTabsLinked) return;
    root.dataset.codeTabsLinked = "1";
    root.addEventListener("click", function (ev) {
      var label = ev.target.closest && ev.target.closest(".tabbed-labels > label");
      var file = label && /^(\S+\.py) /.exec(label.textContent.trim());
      if (!file) return;
      root.querySelectorAll(".tabbed-labels > label").forEach(function (other) {
        if (other.textContent.trim().indexOf(file[1] + " ") !== 0) return;
        var input = document.getElementById(other.htmlFor);
        if (input && !input.checked) input.checked = true;
      });
    });
  }

  /* A map box's description (its title, a mouse-only tooltip) shown in a line under the map
     while the box is hovered or has keyboard focus. aria-hidden: the box's aria-label already
     says the same to a screen reader. */
  function describeMapBoxes(root) {
    root.querySelectorAll(".itm-map").forEach(function (map) {
      if (map.nextElementSibling && map.nextElementSibling.classList.contains("itm-map__desc")) return;
      var line = document.createElement("p");
      line.className = "itm-map__desc";
      line.setAttribute("aria-hidden", "true");
      map.insertAdjacentElement("afterend", line);
      function show(ev) {
        var box = ev.target.closest && ev.target.closest(".itm-map__box");
        line.textContent = box ? box.getAttribute("title") || "" : "";
      }
      map.addEventListener("focusin", show);
      map.addEventListener("mouseover", show);
      map.addEventListener("focusout", function () { line.textContent = ""; });
      map.addEventListener("mouseleave", function () { line.textContent = ""; });
    });
  }

  /* A script that changes a page's layout (the walkthrough drawing another view) says so with
     the event "itm:layout": what scrolls sideways may have changed. Listened to once. */
  document.addEventListener("itm:layout", function () {
    markScrolling(document.querySelector("article") || document.body);
  });

  function init() {
    var root = document.querySelector("article") || document.body;
    markScrolling(root);
    quietLandmarks();
    // A tab shown later may hold a scroller that had no width while hidden: mark it then.
    if (!root.dataset.itmTabsWatched) {
      root.dataset.itmTabsWatched = "1";
      root.addEventListener("change", function (ev) {
        if (ev.target.matches && ev.target.matches(".tabbed-set > input")) markScrolling(root);
      });
    }
    // KaTeX's fonts arrive after the first layout and widen the formulas: check again then,
    // and say so (tests wait for it before checking the page).
    var done = function () {
      markScrolling(root);
      quietLandmarks();
      document.documentElement.dataset.itmReady = "1";
    };
    if (document.fonts) document.fonts.ready.then(done); else done();
    bindLights(root);
    linkCodeTabs(root);
    describeMapBoxes(document.body);  // the header's small map sits outside the article
  }

  if (typeof document$ !== "undefined") {
    document$.subscribe(init);
  } else {
    document.addEventListener("DOMContentLoaded", init);
  }
})();
