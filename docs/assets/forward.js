/* Inside the Model: the forward-pass page's head gallery. Selecting a head opens its large view
   in place (without JavaScript the same link opens the view's SVG file); ‹ › and the arrow keys
   move between heads, Escape closes. A link to #head-L-H opens that head.
   Material re-runs page scripts on instant navigation: subscribe once, bind each gallery once. */
(function () {
  "use strict";
  if (window.itmForwardLoaded) return;
  window.itmForwardLoaded = true;

  function text(cell) {
    var parts = [
      "previous-token " + cell.dataset.prev,
      "induction " + cell.dataset.induction,
      "first-token " + cell.dataset.first
    ];
    var kinds = cell.dataset.kinds ? " — " + cell.dataset.kinds.split(" ").join(", ") : "";
    return "Scores: " + parts.join(" · ") + kinds;
  }

  function setup(root) {
    var gallery = root.querySelector(".itm-gallery");
    var view = root.querySelector(".itm-head-view");
    if (!gallery || !view || gallery.dataset.bound) return;
    gallery.dataset.bound = "1";
    var cells = Array.prototype.slice.call(gallery.querySelectorAll("a.itm-head"));
    var title = view.querySelector(".itm-head-view__title");
    var scores = view.querySelector(".itm-head-view__scores");
    var image = view.querySelector(".itm-head-view__image");
    var link = view.querySelector(".itm-head-view__open a");
    var current = -1;

    function open(index, focus) {
      if (current >= 0) cells[current].classList.remove("is-open");
      current = (index + cells.length) % cells.length;
      var cell = cells[current];
      var name = cell.dataset.head.split(".");
      cell.classList.add("is-open");
      title.textContent = "Block " + name[0] + ", head " + name[1];
      scores.textContent = text(cell);
      image.src = cell.getAttribute("href");
      image.alt = "Attention of block " + name[0] + ", head " + name[1] +
        ": queries down the left, keys along the top, darker is more weight.";
      link.href = cell.getAttribute("href");
      view.hidden = false;
      if (history.replaceState) history.replaceState(history.state, "", "#" + cell.id);
      if (focus) view.focus({ preventScroll: true });
      view.scrollIntoView({ block: "nearest" });
    }

    function close() {
      if (current < 0) return;
      var cell = cells[current];
      cell.classList.remove("is-open");
      view.hidden = true;
      current = -1;
      if (history.replaceState) {
        history.replaceState(history.state, "", location.pathname + location.search);
      }
      cell.focus();
    }

    function openId(id) {
      for (var i = 0; i < cells.length; i++) {
        if (cells[i].id === id) { open(i, false); return true; }
      }
      return false;
    }

    cells.forEach(function (cell, index) {
      cell.addEventListener("click", function (event) {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
        event.preventDefault();
        open(index, true);
      });
    });
    view.querySelector(".itm-head-view__prev").addEventListener("click", function () { open(current - 1, false); });
    view.querySelector(".itm-head-view__next").addEventListener("click", function () { open(current + 1, false); });
    view.querySelector(".itm-head-view__close").addEventListener("click", close);
    view.addEventListener("keydown", function (event) {
      if (event.key === "Escape") { event.preventDefault(); close(); }
      else if (event.key === "ArrowLeft") { open(current - 1, false); }
      else if (event.key === "ArrowRight") { open(current + 1, false); }
    });
    // One tab stop for the whole gallery (144 heads for GPT-2 small): the arrow keys move
    // between heads (up and down between blocks), Home and End to a block's first and last
    // head; Enter opens the focused head. Without JavaScript every head is a plain link.
    var perRow = parseInt(gallery.dataset.heads, 10) || 1;
    var focusAt = 0;
    function rove(index) {
      cells[focusAt].tabIndex = -1;
      focusAt = Math.max(0, Math.min(cells.length - 1, index));
      cells[focusAt].tabIndex = 0;
      cells[focusAt].focus();
    }
    cells.forEach(function (cell, index) {
      cell.tabIndex = index === 0 ? 0 : -1;
      cell.addEventListener("focus", function () {
        if (focusAt !== index) { cells[focusAt].tabIndex = -1; focusAt = index; cell.tabIndex = 0; }
      });
    });
    gallery.addEventListener("keydown", function (event) {
      var at = cells.indexOf(document.activeElement), row = Math.floor(at / perRow) * perRow;
      if (at < 0) return;
      var to = {
        ArrowRight: at + 1, ArrowLeft: at - 1, ArrowDown: at + perRow, ArrowUp: at - perRow,
        Home: row, End: row + perRow - 1
      }[event.key];
      if (to === undefined) return;
      event.preventDefault();
      rove(to);
    });
    gallery.itmOpenId = openId;
    if (location.hash) openId(decodeURIComponent(location.hash.slice(1)));
  }

  function init() {
    setup(document.querySelector("article") || document.body);
  }

  window.addEventListener("hashchange", function () {
    var gallery = document.querySelector(".itm-gallery");
    if (gallery && gallery.itmOpenId && location.hash) {
      gallery.itmOpenId(decodeURIComponent(location.hash.slice(1)));
    }
  });

  if (typeof document$ !== "undefined") {
    document$.subscribe(init);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
