// The live view of a run in training: polls live.json (beside the page) and redraws. When the
// run is no longer running, the page reloads and becomes the run's report.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var POLL_MS = 1000;
  var etag = "", last = null;

  function $(id) { return document.getElementById(id); }
  function el(name, attrs, text) {
    var e = document.createElementNS(SVG, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function fmtAge(s) {
    if (s < 60) return Math.max(0, Math.round(s)) + " s";
    if (s < 3600) return Math.round(s / 60) + " min";
    return Math.round(s / 3600) + " h";
  }

  // curves draws the loss (left axis) and the validation accuracy (right axis, 0–1) by epoch.
  function curves(metrics) {
    var svg = $("curves"), W = 900, H = 220, L = 46, R = 46, T = 10, B = 26;
    clear(svg);
    if (!metrics.length) {
      svg.appendChild(el("text", {x: W / 2, y: H / 2, "text-anchor": "middle"}, "no finished epoch yet"));
      return;
    }
    var maxLoss = Math.max.apply(null, metrics.map(function (m) { return m.loss; })) || 1;
    var first = metrics[0].epoch, last = metrics[metrics.length - 1].epoch;
    var x = function (e) { return L + (last > first ? (e - first) / (last - first) : 0.5) * (W - L - R); };
    var yl = function (v) { return T + (1 - v / maxLoss) * (H - T - B); };
    var ya = function (v) { return T + (1 - v) * (H - T - B); };
    svg.appendChild(el("line", {x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#cbd2d9"}));
    svg.appendChild(el("text", {x: L - 6, y: yl(maxLoss) + 4, "text-anchor": "end"}, maxLoss.toPrecision(3)));
    svg.appendChild(el("text", {x: L - 6, y: yl(0), "text-anchor": "end"}, "0"));
    svg.appendChild(el("text", {x: W - R + 6, y: ya(1) + 4}, "100%"));
    svg.appendChild(el("text", {x: W - R + 6, y: ya(0)}, "0%"));
    svg.appendChild(el("text", {x: L, y: H - 6}, "epoch " + first));
    svg.appendChild(el("text", {x: W - R, y: H - 6, "text-anchor": "end"}, "epoch " + last));
    var loss = metrics.map(function (m) { return x(m.epoch) + "," + yl(m.loss); }).join(" ");
    var acc = metrics.map(function (m) { return x(m.epoch) + "," + ya(m.val_acc); }).join(" ");
    svg.appendChild(el("polyline", {id: "lossline", points: loss, fill: "none", stroke: "#e15759", "stroke-width": 2}));
    svg.appendChild(el("polyline", {id: "accline", points: acc, fill: "none", stroke: "#4e79a7", "stroke-width": 2, "stroke-dasharray": "5 3"}));
    svg.appendChild(el("text", {x: W / 2 - 90, y: T + 4, fill: "#e15759"}, "— loss"));
    svg.appendChild(el("text", {x: W / 2 - 30, y: T + 4, fill: "#4e79a7"}, "- - validation accuracy"));
  }

  // stepBars draws one horizontal bar per step, split into its roles, scaled to the longest step.
  function stepBars(roles, steps) {
    var svg = $("stepbars"), legend = $("legend"), rowH = 22, labelW = 70, W = svg.clientWidth || 900;
    clear(svg);
    clear(legend);
    // The legend names only the roles the steps shown spend time in.
    roles.forEach(function (r, k) {
      if (!steps.some(function (s) { return s.parts_ns[k] > 0; })) return;
      var s = document.createElement("span");
      s.textContent = r.role;
      s.style.setProperty("--c", r.color);
      legend.appendChild(s);
    });
    svg.setAttribute("height", Math.max(1, steps.length) * rowH + 4);
    var longest = Math.max.apply(null, steps.map(function (s) { return s.wall_ns; }).concat([1]));
    var scale = (W - labelW - 90) / longest;
    steps.forEach(function (s, i) {
      var y = i * rowH + 2, x = labelW;
      var row = el("g", {"class": "steprow", "data-step": s.number});
      row.appendChild(el("text", {x: labelW - 8, y: y + 14, "text-anchor": "end"}, "step " + s.number));
      s.parts_ns.forEach(function (ns, k) {
        if (ns <= 0 || !roles[k]) return;
        var w = ns * scale;
        var rect = el("rect", {x: x, y: y, width: Math.max(w, 0.5), height: rowH - 6, fill: roles[k].color});
        rect.appendChild(el("title", {}, roles[k].role + ": " + (ns / 1e6).toFixed(3) + " ms"));
        row.appendChild(rect);
        x += w;
      });
      row.appendChild(el("text", {x: x + 6, y: y + 14}, s.wall));
      svg.appendChild(row);
    });
  }

  function render(st) {
    $("status").textContent = st.status;
    $("status").className = "status " + st.status;
    $("steps").textContent = st.steps;
    $("epochs").textContent = st.epochs + (st.planned_epochs ? " / " + st.planned_epochs : "");
    $("progress").style.width = (st.planned_epochs ? Math.min(100, 100 * st.epochs / st.planned_epochs) : 0) + "%";
    var m = st.metrics, lastM = m[m.length - 1];
    $("loss").textContent = lastM ? lastM.loss.toPrecision(4) : "–";
    $("valacc").textContent = lastM ? (100 * lastM.val_acc).toFixed(1) + "%" : "–";
    $("meanstep").textContent = st.steps ? st.mean_step : "–";
    $("updated").textContent = fmtAge((Date.now() - Date.parse(st.updated)) / 1000) + " ago";
    curves(m);
    stepBars(st.roles || [], st.latest || []);
    var f = st.finding;
    $("finding").hidden = !f;
    if (f) {
      $("findingcard").className = "card finding " + f.severity;
      $("findingsev").className = "badge " + f.severity;
      $("findingsev").textContent = f.severity;
      $("findingtitle").textContent = f.title;
      $("findingsum").textContent = f.summary;
      $("findingcost").textContent = "— " + f.cost;
      $("findingfix").textContent = f.fix ? "Fix: " + f.fix : "";
    }
  }

  function poll() {
    fetch("live.json", {cache: "no-cache", headers: etag ? {"If-None-Match": etag} : {}})
      .then(function (resp) {
        if (resp.status === 304) return null;
        if (!resp.ok) throw new Error("live.json: HTTP " + resp.status);
        etag = resp.headers.get("ETag") || "";
        return resp.json();
      })
      .then(function (st) {
        $("note").textContent = "";
        if (!st && last) $("updated").textContent = fmtAge((Date.now() - Date.parse(last.updated)) / 1000) + " ago";
        if (st) {
          last = st;
          render(st);
          if (st.status !== "running") {
            location.reload(); // the run is over: its page is now the report
            return;
          }
        }
        setTimeout(poll, POLL_MS);
      })
      .catch(function (err) {
        $("note").textContent = String(err) + "; retrying";
        setTimeout(poll, 5 * POLL_MS);
      });
  }
  poll();
})();
