"use strict";
(function () {
  // Value formatters, chosen by each chart's data-unit.
  function dur(v) {
    if (typeof v !== "number") return v;
    var a = Math.abs(v);
    if (a >= 1000) return (v / 1000).toFixed(2) + " s";
    if (a >= 1 || a === 0) return v.toFixed(a >= 100 ? 0 : 2) + " ms";
    return (v * 1000).toFixed(1) + " µs";
  }
  function mem(v) {
    if (typeof v !== "number") return v;
    return Math.abs(v) >= 1024 ? (v / 1024).toFixed(2) + " GiB" : v.toFixed(Math.abs(v) >= 100 ? 0 : 1) + " MiB";
  }
  function pct(v) { return typeof v === "number" ? v.toFixed(1) + "%" : v; }
  var units = { ms: dur, MiB: mem, "%": pct };

  var charts = [];
  document.querySelectorAll("div.chart").forEach(function (el) {
    var src = document.getElementById(el.id + "-opt");
    if (!src) return;
    var opt = JSON.parse(src.textContent);
    var f = units[el.dataset.unit], fx = units[el.dataset.xunit];
    opt.tooltip = Object.assign({}, opt.tooltip, { confine: true });
    if (f) opt.tooltip.valueFormatter = f;
    function label(axes, fmt) {
      if (!fmt) return;
      [].concat(axes || []).forEach(function (ax) {
        if (ax && ax.type !== "category" && !ax.data) {
          ax.axisLabel = Object.assign({}, ax.axisLabel, { formatter: fmt });
          delete ax.name;
        }
      });
    }
    label(opt.yAxis, f);
    label(opt.xAxis, fx);
    delete opt.toolbox;
    // Pie labels only for slices wide enough to hold them; the table beside the pie lists all.
    [].concat(opt.series || []).forEach(function (s) {
      if (s.type === "pie") { s.minShowLabelAngle = 12; s.avoidLabelOverlap = true; }
    });
    var chart = echarts.init(el, null, { renderer: "canvas" });
    chart.setOption(opt);
    charts.push(chart);
  });
  window.addEventListener("resize", function () { charts.forEach(function (c) { c.resize(); }); });
  window.gnnprofCharts = charts;

  // Sortable tables: click a header (or press Enter on it) to sort by that column; numeric cells
  // sort by their data-v value.
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.tabIndex = 0;
      function sort() {
        var desc = th.dataset.dir !== "desc";
        Array.prototype.forEach.call(heads, function (h) { delete h.dataset.dir; });
        th.dataset.dir = desc ? "desc" : "asc";
        var numeric = th.classList.contains("num");
        var rows = Array.prototype.slice.call(table.tBodies[0].rows);
        rows.sort(function (a, b) {
          var x = a.cells[col], y = b.cells[col], c;
          if (numeric) c = parseFloat(x.dataset.v || "0") - parseFloat(y.dataset.v || "0");
          else c = x.textContent.localeCompare(y.textContent);
          return desc ? -c : c;
        });
        rows.forEach(function (r) { table.tBodies[0].appendChild(r); });
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") sort(); });
    });
  });

  // Filters: rows whose text does not contain the query are hidden.
  document.querySelectorAll("input[data-filter]").forEach(function (input) {
    var table = document.getElementById(input.dataset.filter);
    var count = document.getElementById(input.dataset.filter + "-count");
    input.addEventListener("input", function () {
      var q = input.value.toLowerCase(), shown = 0;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        row.hidden = q !== "" && row.textContent.toLowerCase().indexOf(q) < 0;
        if (!row.hidden) shown++;
      });
      if (count) count.textContent = q === "" ? "" : shown + " shown";
    });
  });

  // A link to a finding shown as evidence opens the details it sits in.
  function openTarget() {
    var el = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    for (; el; el = el.parentElement) if (el.tagName === "DETAILS") el.open = true;
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
