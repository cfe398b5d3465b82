/* Inside the Model: the walkthrough widget (docs/walkthrough/attention.md, and the rotary step
   of docs/llama/walkthrough.md).
   The page is complete without it: every step and its grids are rendered at build time.
   This script turns the steps into a stepper (list, buttons, arrow keys, #step-N in the URL),
   redraws the grids for the selected head from the build's JSON, breaks the selected row down
   in a side panel, switches toy values for a trained head's (a second JSON of the same shape,
   fetched when chosen) or for GPT-2 sizes, shows the GPT-2 size the reader chose
   (the build prints every size's figures; the choice is Material's linked-tab choice, shared
   with the size tabs of every other page), and lights the engine's code lines of the current
   step. Keep fmt(), cellColour() and blend() in step with generator/walkthrough/grids.py.
   Subscribed once to Material's document$, so it survives instant navigation; each widget is
   set up once (data-wt-ready). */
(function () {
  "use strict";
  if (window.itmWalkthroughLoaded) return; // re-run by instant navigation: already subscribed
  window.itmWalkthroughLoaded = true;

  var POSITIVE = [33, 102, 172], NEGATIVE = [178, 24, 43], STRENGTH = 0.6;

  /* -- formatting, shared with the build ------------------------------------------------- */
  function fmt(v) {
    if (v === null) return "\u2212\u221e";
    var text = v.toFixed(2);
    if (text === "-0.00") text = "0.00";
    return text.replace("-", "\u2212");
  }
  function hex(rgb) {
    return "#" + rgb.map(function (c) { return ("0" + c.toString(16)).slice(-2); }).join("");
  }
  function mix(colour, amount) {
    return hex(colour.map(function (c) { return Math.floor(255 + (c - 255) * amount + 0.5); }));
  }
  function cellColour(v, scale) {
    var strength = scale > 0 ? STRENGTH * Math.min(1, Math.abs(v) / scale) : 0;
    return mix(v >= 0 ? POSITIVE : NEGATIVE, strength);
  }
  function blend(weights, colours) {
    var rgb = [0, 0, 0];
    weights.forEach(function (w, j) {
      for (var i = 0; i < 3; i++) rgb[i] += w * parseInt(colours[j].substr(1 + 2 * i, 2), 16);
    });
    return hex(rgb.map(function (c) { return Math.min(255, Math.floor(c + 0.5)); }));
  }
  function esc(text) {
    return String(text).replace(/[&<>"]/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c];
    });
  }

  /* -- grids ------------------------------------------------------------------------------ */
  function matrixOf(data, key, head) {
    return data.per_head.indexOf(key) >= 0 ? data.trace[key][head] : data.trace[key];
  }
  function columnLabels(data, key, n) {
    var kind = data.matrices[key].columns, dh = data.config.d_head, out = [];
    for (var c = 0; c < n; c++) {
      if (kind === "tokens") out.push([data.tokens[c], "key token " + data.tokens[c]]);
      else if (kind === "head-dims") {
        var h = Math.floor(c / dh), k = (c % dh) + 1; // heads from 0
        out.push(["h" + h + "\u00b7" + k, "head " + h + ", column " + k]);
      } else if (kind === "pairs") { // one column per pair of dimensions, from 0 as θ_i counts
        out.push(["\u03b8" + subscript(c), "pair " + c]);
      } else if (kind === "pair-dims") { // dimension c and c + n/2 make pair c mod n/2
        var half = n / 2, second = c >= half;
        out.push([(c % half) + (second ? "\u2032" : ""),
                  "pair " + (c % half) + ", " + (second ? "second" : "first") + " half"]);
      } else out.push([String(c + 1), "column " + (c + 1)]);
    }
    return out;
  }
  function subscript(n) {
    return String(n).replace(/\d/g, function (c) { return String.fromCharCode(0x2080 + +c); });
  }
  /* Each token's chip as the page drew it (walkthrough_token.html, which a site may override),
     read from the server-rendered grids before the first render replaces any of them. */
  function pageChips(root, n) {
    var chips = [];
    for (var i = 0; i < n; i++) {
      var drawn = root.querySelector('.itm-wt__toy tbody tr[data-row="' + i + '"] > th');
      chips.push(drawn && drawn.innerHTML.trim() ? drawn.innerHTML : null);
    }
    return chips;
  }
  function chip(data, i) {
    if (data.chips && data.chips[i]) return data.chips[i];
    return '<span class="itm-wt-tok"><span class="itm-wt-dot" style="background:' +
      data.colours[i] + '" aria-hidden="true"></span>' + esc(data.tokens[i]) + "</span>";
  }
  /* A trained head's rows are d_head (or d_model) numbers long: the grids and the panel print
     the first data.shown of them and say how many there are. */
  function cut(data, values) {
    return data.shown && values.length > data.shown ? values.slice(0, data.shown) : values;
  }
  function table(data, key, head, selected) {
    var meta = data.matrices[key];
    var m = matrixOf(data, key, head).map(function (row) {
      return meta.columns === "tokens" ? row : cut(data, row); // a token grid is printed whole
    });
    var width = (data.full && data.full[key]) || m[0].length;
    var masked = meta.masked ? data.trace.masked[head] : null;
    var cols = columnLabels(data, key, m[0].length);
    var scale = 0, blended = key === "heads";
    m.forEach(function (row) { row.forEach(function (v) {
      if (v !== null) scale = Math.max(scale, Math.abs(v)); }); });
    var where = data.per_head.indexOf(key) >= 0 ?
      (data.label ? "head " + data.label : "head " + head) : "all heads";
    var printed = width > m[0].length ? ", columns 1\u2013" + m[0].length + " shown" : "";
    var html = '<table class="itm-wt-grid" data-matrix="' + key + '" data-head="' + head + '">' +
      '<caption><span class="itm-wt-grid__sym">' + esc(meta.symbol) + "</span> " +
      esc(meta.caption) + " \u00b7 " + where + " \u00b7 [" + m.length + " \u00d7 " +
      width + "]" + printed + '</caption><thead><tr><td class="itm-wt-grid__corner"></td>';
    cols.forEach(function (c) {
      html += '<th scope="col" aria-label="' + esc(c[1]) + '">' + esc(c[0]) + "</th>";
    });
    if (blended) html += '<th scope="col">colour</th>';
    html += "</tr></thead><tbody>";
    m.forEach(function (row, i) {
      var sel = i === selected;
      html += '<tr data-row="' + i + '"' + (sel ? ' class="is-selected"' : "") +
        '><th scope="row"><button type="button" class="itm-wt-rowbtn" aria-pressed="' + sel +
        '" aria-label="Break down row ' + esc(data.tokens[i]) + '">' + chip(data, i) +
        "</button></th>";
      row.forEach(function (v, j) {
        var isMasked = masked !== null && masked[i][j] === null;
        var text = isMasked && v === 0 ? "0" : fmt(v);
        var label = "row " + data.tokens[i] + ", " + cols[j][1] + ": " + text;
        html += "<td" + (isMasked ? ' class="is-masked"' :
          ' style="background:' + cellColour(v, scale) + '"') +
          (v === null ? "" : ' data-v="' + v + '"') + ' aria-label="' + esc(label) + '">' +
          text + "</td>";
      });
      if (blended) {
        html += '<td class="itm-wt-blend"><span class="itm-wt-swatch" style="background:' +
          blend(data.trace.weights[head][i], data.colours) +
          '" role="img" aria-label="colour blend of row ' + esc(data.tokens[i]) + '"></span></td>';
      }
      html += "</tr>";
    });
    return html + "</tbody></table>";
  }

  /* -- the row panel: one row of the current step, broken down ---------------------------- */
  var SHOWN = 0; // the current data's printed columns (0: all), set by render()
  function vector(values, cls, width) {
    var shown = SHOWN && values.length > SHOWN ? values.slice(0, SHOWN) : values;
    var more = (width || values.length) - shown.length;
    return '<span class="itm-wt-vec' + (cls ? " " + cls : "") + '">' + shown.map(function (v) {
      return '<span data-v="' + v + '">' + fmt(v) + "</span>";
    }).join("") + (more > 0 ? "<span>\u2026 " + more + " more</span>" : "") + "</span>";
  }
  function rowsTable(head, rows, foot) {
    return '<table class="itm-wt-ptable"><thead><tr>' + head.map(function (h) {
      return '<th scope="col">' + h + "</th>";
    }).join("") + "</tr></thead><tbody>" + rows.join("") + "</tbody>" +
      (foot ? "<tfoot>" + foot + "</tfoot>" : "") + "</table>";
  }
  function panel(s) {
    var d = s.data, h = s.head, i = s.row, key = d.steps[s.step - 1].key, t = d.trace;
    var n = d.tokens.length, root = Math.sqrt(d.config.d_head), out = "";
    // Positions count from 0, as the steps' words, the mask (j ≤ i) and the forward pass do.
    var title = "<h3>Position " + i + ": " + chip(d, i) + "</h3>";
    function each(fn) { var rows = []; for (var j = 0; j < n; j++) rows.push(fn(j)); return rows; }
    function tok(j) { return '<th scope="row">' + chip(d, j) + "</th>"; }
    var name = d.label ? "head " + d.label : "head " + h;
    if (key === "projections") {
      out = "<p>This token's row of X (after ln_1), times " + name +
        "'s columns of W<sub>Q</sub>, W<sub>K</sub> and W<sub>V</sub>" +
        (d.label ? ", plus their biases" : "") + ":</p>" +
        "<p>x = " + vector(d.x[i], "", d.full && d.full.x) + "</p><p>q = " + vector(t.q[h][i]) + "</p><p>k = " +
        vector(t.k[h][i]) + "</p><p>v = " + vector(t.v[h][i]) + "</p>";
    } else if (key === "scores") {
      out = "<p>Each score is the dot product of this query, q = " + vector(t.q[h][i]) +
        ", with one token's key.</p>" + rowsTable(["key", "q \u00b7 k", "score"], each(function (j) {
          var terms = t.q[h][i].map(function (q, c) { return fmt(q) + "\u00d7" + fmt(t.k[h][j][c]); });
          var sum = terms.length > 4 && SHOWN ?
            terms.slice(0, 2).join(" + ") + " + \u2026 (" + terms.length + " products)" :
            terms.join(" + ");
          return "<tr>" + tok(j) + "<td>" + sum + "</td><td data-v=\"" +
            t.scores[h][i][j] + '">' + fmt(t.scores[h][i][j]) + "</td></tr>";
        }));
    } else if (key === "scale") {
      out = "<p>Every score is divided by \u221a" + d.config.d_head + " = " + root + ".</p>" +
        rowsTable(["key", "score", "\u00f7 " + root], each(function (j) {
          return "<tr>" + tok(j) + "<td>" + fmt(t.scores[h][i][j]) + "</td><td data-v=\"" +
            t.scaled[h][i][j] + '">' + fmt(t.scaled[h][i][j]) + "</td></tr>";
        }));
    } else if (key === "causal-mask") {
      out = "<p>Position " + i + " keeps keys 0 to " + i + "; later keys become \u2212\u221e.</p>" +
        rowsTable(["key", "scaled", "masked"], each(function (j) {
          return "<tr>" + tok(j) + "<td>" + fmt(t.scaled[h][i][j]) + "</td><td>" +
            (j > i ? "\u2212\u221e (j > i)" : fmt(t.masked[h][i][j])) + "</td></tr>";
        }));
    } else if (key === "softmax") {
      var exps = t.masked[h][i].map(function (m) { return m === null ? 0 : Math.exp(m); });
      var sum = exps.reduce(function (a, b) { return a + b; }, 0);
      out = "<p>exp of each masked score, divided by their sum; e<sup>\u2212\u221e</sup> = 0.</p>" +
        rowsTable(["key", "score", "exp", "weight"], each(function (j) {
          return "<tr>" + tok(j) + "<td>" + fmt(t.masked[h][i][j]) + "</td><td>" +
            (exps[j] === 0 ? "0" : fmt(exps[j])) + '</td><td data-v="' + exps[j] / sum + '">' +
            (exps[j] === 0 ? "0" : fmt(exps[j] / sum)) + "</td></tr>";
        }), '<tr><th scope="row">sum</th><td></td><td class="itm-wt-sum" data-v="' + sum + '">' +
          fmt(sum) + "</td><td>" + fmt(1) + "</td></tr>");
    } else if (key === "weighted-sum") {
      var w = t.weights[h][i], total = t.v[h][0].map(function () { return 0; });
      var rows = [];
      for (var j = 0; j <= i; j++) {
        var part = t.v[h][j].map(function (v, c) { total[c] += w[j] * v; return w[j] * v; });
        rows.push("<tr>" + tok(j) + "<td>" + fmt(w[j]) + "</td><td>" + vector(t.v[h][j]) +
          "</td><td>" + vector(part) + "</td></tr>");
      }
      out = "<p>Each visible token's value row, times its weight, summed. Tokens after this one " +
        "have weight 0.</p>" + rowsTable(["token", "weight", "value v", "weight \u00d7 v"], rows,
          '<tr><th scope="row">sum</th><td><span class="itm-wt-swatch" role="img" ' +
          'aria-label="colour blend" style="background:' + blend(w, d.colours) +
          '"></span></td><td colspan="2">' + vector(total, "itm-wt-result") + "</td></tr>") +
        "<p>The swatch is the tokens' colours blended with the same weights.</p>";
    } else if (key === "pairs" || key === "rotate") {
      out = rotaryPanel(d, h, i, key === "rotate");
    } else if (key === "angles") {
      out = "<p>Position " + d.positions[i] + ": pair i turns by " + d.positions[i] +
        " \u00d7 \u03b8<sub>i</sub>.</p>" + rowsTable(["pair", "\u03b8<sub>i</sub>", "angle",
          "cos", "sin"], d.rates.map(function (rate, p) {
          var a = t.angles[i][p];
          return "<tr><th scope=\"row\">" + p + "</th><td>" + rate + '</td><td data-v="' + a +
            '">' + fmt(a) + "</td><td>" + fmt(Math.cos(a)) + "</td><td>" + fmt(Math.sin(a)) +
            "</td></tr>";
        }));
    } else {
      out = "<p>The heads' output rows side by side, multiplied by W<sub>O</sub>:</p><p>" +
        vector(t.merged[i], "", d.full && d.full.merged) + "</p><p>\u2192 " +
        vector(t.projected[i], "itm-wt-result", d.full && d.full.projected) +
        "</p><p>This row is then added to the token's residual stream.</p>";
    }
    return title + out;
  }

  /* The rotary steps: one row's query and key, pair by pair; rotated, with each pair's angle
     and the rotated pair beside it (both from the build's JSON), and the lengths kept. */
  function rotaryPanel(d, h, i, rotated) {
    var t = d.trace, half = d.config.d_head / 2;
    function pair(v, p) { return "(" + fmt(v[p]) + ", " + fmt(v[p + half]) + ")"; }
    function length(v) {
      return fmt(Math.sqrt(v.reduce(function (a, x) { return a + x * x; }, 0)));
    }
    var rows = [];
    for (var p = 0; p < half; p++) {
      var cells = rotated ?
        [fmt(t.angles[i][p]), pair(t.q[h][i], p) + " \u2192 " + pair(t.q_rotated[h][i], p),
         pair(t.k[h][i], p) + " \u2192 " + pair(t.k_rotated[h][i], p)] :
        [pair(t.q[h][i], p), pair(t.k[h][i], p)];
      rows.push('<tr><th scope="row">' + p + "</th><td>" + cells.join("</td><td>") + "</td></tr>");
    }
    var head = rotated ? ["pair", "angle", "q \u2192 q\u0303", "k \u2192 k\u0303"] :
      ["pair", "q (x, y)", "k (x, y)"];
    var lengths = rotated ? "<p>Lengths are kept: |q| = " + length(t.q[h][i]) + ", |q\u0303| = " +
      length(t.q_rotated[h][i]) + "; |k| = " + length(t.k[h][i]) + ", |k\u0303| = " +
      length(t.k_rotated[h][i]) + ".</p>" : "";
    return "<p>Position " + d.positions[i] + (rotated ? ": each pair turned by its angle." :
      ": dimension i and i + " + half + " make pair i.") + "</p>" + rowsTable(head, rows) + lengths;
  }

  /* -- the GPT-2 size: Material's linked content tabs remember the label last chosen -------- */
  function storedTabs() {
    try { return (typeof __md_get === "function" && __md_get("__tabs")) || []; }
    catch (e) { return []; }
  }
  function modelFromTabs(select) {
    var labels = storedTabs(), options = Array.prototype.slice.call(select.options);
    for (var i = 0; i < labels.length; i++) {
      var hit = options.filter(function (o) { return o.textContent.trim() === labels[i]; })[0];
      if (hit) return hit.value;
    }
    return select.value;
  }
  function storeModel(select) {
    var label = select.options[select.selectedIndex].textContent.trim();
    if (typeof __md_set !== "function") return;
    __md_set("__tabs", [label].concat(storedTabs().filter(function (l) { return l !== label; })));
  }
  function showModel(s) {
    s.root.querySelectorAll("[data-wt-model]").forEach(function (el) {
      el.hidden = el.dataset.wtModel !== s.model;
    });
  }

  /* -- state and rendering ---------------------------------------------------------------- */
  function stepFromHash(count) {
    var match = /^#step-(\d+)(?:-title)?$/.exec(location.hash); // the step or its heading
    var n = match ? parseInt(match[1], 10) : 0;
    return n >= 1 && n <= count ? n : 0;
  }

  /* The reader's view, step and head, kept for this page in the tab's session: a link that
     makes Material draw the page again (an anchor in the code, another page and Back, a
     reload) brings the walkthrough back as the reader left it. */
  function storeKey() { return "itm-wt:" + location.pathname; }
  function remember(s) {
    try {
      sessionStorage.setItem(storeKey(),
        JSON.stringify({ scale: s.scale, step: s.step, head: s.head }));
    } catch (e) { /* storage refused: the page still works, it only forgets */ }
  }
  function recalled() {
    try { return JSON.parse(sessionStorage.getItem(storeKey()) || "{}") || {}; }
    catch (e) { return {}; }
  }

  function render(s) {
    s.data = s.scale === "trained" && s.trained ? s.trained : s.toy;
    var d = s.data, step = d.steps[s.step - 1], root = s.root;
    var head = s.scale === "trained" ? 0 : s.head; // a trained head's data holds that head only
    SHOWN = d.shown || 0;
    root.dataset.scale = s.scale;
    s.article.dataset.wtScale = s.scale; // the title's "block 0 · head 0" is the toy's too
    root.querySelectorAll(".itm-wt__step").forEach(function (sec) {
      var current = sec.dataset.step === String(s.step);
      sec.classList.toggle("is-current", current);
      if (current) {
        sec.querySelector(".itm-wt__toy").innerHTML = step.show.map(function (key) {
          return table(d, key, head, s.row);
        }).join("");
      }
    });
    root.querySelectorAll("[data-wt-step]").forEach(function (a) {
      if (a.dataset.wtStep === String(s.step)) a.setAttribute("aria-current", "step");
      else a.removeAttribute("aria-current");
    });
    root.querySelector(".itm-wt__where").textContent =
      "Step " + s.step + " of " + d.steps.length + ": " + step.title;
    root.querySelector('[data-wt-go="-1"]').disabled = s.step === 1;
    root.querySelector('[data-wt-go="1"]').disabled = s.step === d.steps.length;
    s.article.querySelectorAll("[data-wt-head-label]").forEach(function (el) {
      el.textContent = String(s.head);
    });
    var box = root.querySelector("[data-wt-panel]"); // moves beside the current step's grids
    root.querySelector(".itm-wt__step.is-current .itm-wt__work").appendChild(box);
    box.hidden = s.scale === "big";
    box.innerHTML = panel({ data: d, head: head, row: s.row, step: s.step });
    keyInView(root, d);
    lightLines(s, step.lines, "is-step");
    remember(s);
    document.dispatchEvent(new Event("itm:layout")); // site.js: which formulas scroll now
  }

  /* A grid wider than the screen (a trained head's, on a phone) scrolls so that the key column
     the words name is in view; its row labels stay at the left edge (sticky, walkthrough.css). */
  function keyInView(root, d) {
    if (d.focus === null || d.focus === undefined) return;
    var box = root.querySelector(".itm-wt__step.is-current .itm-wt__toy");
    var grid = box && box.querySelector("table.itm-wt-grid");
    if (!grid || d.matrices[grid.dataset.matrix].columns !== "tokens") return;
    var th = grid.querySelectorAll("thead th")[d.focus];
    var labels = grid.querySelector("tbody th");
    if (!th || !labels || box.scrollWidth <= box.clientWidth) return;
    var edge = box.getBoundingClientRect(), cell = th.getBoundingClientRect();
    var start = edge.left + labels.getBoundingClientRect().width;
    if (cell.right > edge.right) box.scrollLeft += cell.right - edge.right + cell.width / 2;
    else if (cell.left < start) box.scrollLeft -= start - cell.left;
  }

  function lightLines(s, lines, cls) {
    s.article.querySelectorAll("." + cls).forEach(function (el) { el.classList.remove(cls); });
    if (!lines) return;
    for (var n = lines[0]; n <= lines[1]; n++) {
      var line = document.getElementById("__span-" + s.data.code_block + "-" + n);
      if (line) line.classList.add(cls);
    }
  }

  /* Show step n. A step the reader moves to is a history entry of its own (Back returns to the
     step before); one the history moves to (Back, Forward) is not pushed again. */
  function go(s, n, focus, fromHistory) {
    var had = document.activeElement;
    var was = s.step;
    s.step = Math.max(1, Math.min(s.data.steps.length, n));
    if (!fromHistory && s.step !== was) history.pushState(null, "", "#step-" + s.step);
    else if (!fromHistory) history.replaceState(history.state, "", "#step-" + s.step);
    render(s);
    var title = s.root.querySelector("#step-" + s.step + "-title");
    var row = had && had.closest && had.closest(".itm-wt-rowbtn");
    if (row) { // the same row's button in the new step's grid, else the step's title
      var again = s.root.querySelector('.itm-wt__step.is-current tr[data-row="' +
        row.closest("tr").dataset.row + '"] .itm-wt-rowbtn');
      (again && again.offsetParent !== null ? again : title).focus({ preventScroll: true });
    // A button that has just been disabled (Next on the last step) would drop focus to <body>.
    } else if (focus || (had && had.disabled)) title.focus({ preventScroll: true });
    reveal(s);
  }

  /* Bring the step (with the step list and the Previous/Next bar above it) to the top when
     its grids would otherwise start below the fold. */
  function reveal(s) {
    var work = s.root.querySelector(".itm-wt__step.is-current .itm-wt__work");
    var top = work.getBoundingClientRect().top;
    if (top < 0 || top > window.innerHeight * 0.6) toSteps(s);
  }

  /* The step list just under the site's sticky header, all of it in view: scrolled to the
     Previous/Next bar instead, the list ended half under the header. */
  function toSteps(s) {
    var header = document.querySelector(".md-header");
    var below = header ? header.getBoundingClientRect().bottom : 0;
    var list = s.root.querySelector(".itm-wt__steps");
    var gap = parseFloat(getComputedStyle(document.documentElement).fontSize) * 0.4;
    window.scrollTo({ top: window.scrollY + list.getBoundingClientRect().top - below - gap,
                      behavior: "instant" });
  }

  /* A key pressed inside something that scrolls sideways (a code block, a wide table, a row
     of tab labels) scrolls it: ← and → are its keys there, not the stepper's. */
  function scrollsSideways(el) {
    for (; el && el !== document.body; el = el.parentElement) {
      if (el.scrollWidth > el.clientWidth + 1 &&
          /auto|scroll/.test(getComputedStyle(el).overflowX)) return true;
    }
    return false;
  }

  function start(root, data) {
    var models = root.querySelector("[data-wt-model-select]");
    var kept = recalled(), heads = root.querySelectorAll("[data-wt-head] option").length;
    var keptStep = kept.step >= 1 && kept.step <= data.steps.length ? kept.step : 1;
    // A link to a step (#step-N) scrolls to it once shown; a plain visit stays on the opening.
    var linked = stepFromHash(data.steps.length);
    var s = {
      root: root, data: data, toy: data, trained: null,
      article: root.closest("article") || document.body,
      step: linked || keptStep,
      head: kept.head >= 0 && kept.head < heads ? kept.head : 0, row: -1,
      scale: "", model: modelFromTabs(models)
    };
    root.querySelector("[data-wt-head]").value = String(s.head);
    var keptScale = kept.scale &&
      root.querySelector('input[name="itm-wt-scale"][value="' + kept.scale + '"]');
    if (keptScale) keptScale.checked = true;
    // Every entry of the history names its step, so Back to the page's first one finds it too.
    if (!location.hash) history.replaceState(history.state, "", "#step-" + s.step);
    data.chips = pageChips(root, data.tokens.length);
    models.value = s.model;
    showModel(s);
    root._wt = s;
    root.classList.add("is-live");
    root.querySelectorAll("[data-wt-controls], [data-wt-nav]").forEach(function (el) {
      el.hidden = false;
    });
    root.querySelectorAll(".itm-wt__title").forEach(function (el) { el.tabIndex = -1; });
    root.addEventListener("click", function (ev) {
      var link = ev.target.closest("[data-wt-step]");
      var button = ev.target.closest("[data-wt-go]");
      var row = ev.target.closest(".itm-wt__toy tbody tr");
      if (link) {
        ev.preventDefault();
        ev.stopPropagation(); // not an instant-navigation link: Material listens on body
        go(s, parseInt(link.dataset.wtStep, 10), true);
      } else if (button) {
        go(s, s.step + parseInt(button.dataset.wtGo, 10), false);
      } else if (row) {
        s.row = parseInt(row.dataset.row, 10);
        render(s);
        var again = root.querySelector(".itm-wt__step.is-current tbody tr[data-row=\"" + s.row +
          '"] .itm-wt-rowbtn');
        if (again && ev.target.closest(".itm-wt-rowbtn")) again.focus();
      }
    });
    root.addEventListener("keydown", function (ev) {
      var btn = ev.target.closest && ev.target.closest(".itm-wt-rowbtn");
      if (!btn || (ev.key !== "ArrowDown" && ev.key !== "ArrowUp")) return;
      ev.preventDefault();
      var n = s.data.tokens.length;
      s.row = (s.row + (ev.key === "ArrowDown" ? 1 : n - 1)) % n;
      var table = btn.closest("table").dataset.matrix;
      render(s);
      root.querySelector('.itm-wt__step.is-current table[data-matrix="' + table +
        '"] tr[data-row="' + s.row + '"] .itm-wt-rowbtn').focus();
    });
    root.querySelector("[data-wt-head]").addEventListener("change", function (ev) {
      s.head = parseInt(ev.target.value, 10); // heads are numbered from 0, as on the forward pass
      render(s);
    });
    models.addEventListener("change", function () {
      s.model = models.value;
      showModel(s);
      storeModel(models); // every other page's size tabs follow, as they follow each other
    });
    root.querySelectorAll('input[name="itm-wt-scale"]').forEach(function (input) {
      input.addEventListener("change", function () {
        choose(s, input.value).catch(function (error) {
          console.warn("walkthrough: no trained head:", error);
        });
      });
    });
    /* Hovering a step (in the list or in the code panel's list) lights its code lines. */
    s.article.querySelectorAll("[data-wt-step], [data-step-key]").forEach(function (el) {
      var step = data.steps.filter(function (st, i) {
        return el.dataset.stepKey === st.key || el.dataset.wtStep === String(i + 1);
      })[0];
      el.addEventListener("mouseenter", function () { lightLines(s, step.lines, "is-hover"); });
      el.addEventListener("mouseleave", function () { lightLines(s, null, "is-hover"); });
    });
    // The toy's note and the colour legend follow the steps once one step is shown at a time:
    // the first step's grids then fit the first screen.
    var layout = root.querySelector(".itm-wt__layout");
    root.querySelectorAll(":scope > .itm-wt-note, :scope > .itm-wt-legend").forEach(function (el) {
      root.insertBefore(el, layout.nextSibling);
      layout = el;
    });
    // The first view is the radio the page checks: the trained head, when there is one, whose
    // pattern means something; the toy if its data cannot be had.
    var first = root.querySelector('input[name="itm-wt-scale"]:checked');
    var shown = first && first.value !== "toy" ? choose(s, first.value) : Promise.reject(null);
    shown.catch(function (error) {
      if (error) console.warn("walkthrough: no trained head, the toy shown:", error);
      var toy = root.querySelector('input[name="itm-wt-scale"][value="toy"]');
      if (toy) toy.checked = true;
      return choose(s, "toy");
    }).then(function () {
      if (linked) toSteps(s);
      root.dataset.wtReady = "ready";
      root.dataset.wtReadyAt = String(Math.round(performance.now()));
    });
  }

  /* Show the toy, the trained head (its JSON fetched the first time) or GPT-2's sizes. */
  function choose(s, scale) {
    var root = s.root;
    var ready = scale !== "trained" || s.trained ? Promise.resolve() :
      fetch(new URL(root.dataset.trainedSrc, location.href)).then(function (response) {
        if (!response.ok) throw new Error(response.status + " " + response.url);
        return response.json();
      }).then(function (trained) {
        trained.chips = Array.prototype.map.call( // the note's chips, as the page drew them
          root.querySelectorAll("[data-wt-trained-chips] .itm-wt-tok"),
          function (chip) { return chip.outerHTML; });
        s.trained = trained;
      });
    return ready.then(function () {
      if ((scale === "trained") !== (s.scale === "trained")) s.row = -1; // a new set of rows
      s.scale = scale;
      if (s.row < 0) s.row = (scale === "trained" ? s.trained : s.toy).tokens.length - 1;
      render(s);
      root.dataset.wtScaleReady = scale;
    });
  }

  function current() {
    var root = document.querySelector(".itm-wt");
    return root && root._wt;
  }

  function init() {
    var root = document.querySelector(".itm-wt[data-src]");
    if (!root || root.dataset.wtReady) return;
    root.dataset.wtReady = "loading";
    fetch(new URL(root.dataset.src, location.href))
      .then(function (response) {
        if (!response.ok) throw new Error(response.status + " " + response.url);
        return response.json();
      })
      .then(function (data) { start(root, data); })
      .catch(function (error) {
        root.dataset.wtReady = "failed"; // the static page stays as it is
        console.warn("walkthrough: no data, static page kept:", error);
      });
  }

  /* Global listeners, added once: arrow keys step, the hash picks a step. */
  document.addEventListener("keydown", function (ev) {
    var s = current();
    if (!s || ev.altKey || ev.ctrlKey || ev.metaKey || ev.shiftKey) return;
    if (ev.key !== "ArrowLeft" && ev.key !== "ArrowRight") return;
    if (ev.target.closest && ev.target.closest("input, select, textarea, [contenteditable]")) return;
    if (scrollsSideways(ev.target)) return;
    ev.preventDefault();
    go(s, s.step + (ev.key === "ArrowRight" ? 1 : -1), false);
  });
  window.addEventListener("hashchange", function () {
    var s = current(), n = s && stepFromHash(s.data.steps.length);
    if (n && n !== s.step) go(s, n, false, true);
  });

  if (typeof document$ !== "undefined") document$.subscribe(init);
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
