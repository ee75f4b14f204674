// Live charts of the overview, drawn with uPlot (vendor/uplot, embedded in
// the binary). The server's sampler keeps the last half hour of samples
// (/ui/history.json), so a reload draws the whole history again; the
// charts then follow new samples at the sampling interval. Each chart has a
// time axis, a legend with every series' value under the cursor, and a
// tooltip that shows them beside it.
(function () {
  "use strict";
  var script = document.currentScript;
  var interval = Math.max(1000, parseInt(script.dataset.interval, 10) || 5000);
  var charts = [];

  // fmt writes a figure with the precision its size deserves.
  function fmt(v) {
    if (v == null || isNaN(v)) return "-";
    if (Math.abs(v) >= 1000) return Math.round(v).toLocaleString("en");
    if (Math.abs(v) >= 100) return v.toFixed(0);
    return v.toFixed(1);
  }

  // tooltip is a uPlot plugin: a box beside the cursor with the time and
  // each series' value at the point under it.
  function tooltip(unit) {
    var box;
    return {
      hooks: {
        init: function (u) {
          box = document.createElement("div");
          box.className = "chart-tip";
          box.hidden = true;
          u.over.appendChild(box);
          u.over.addEventListener("mouseleave", function () { box.hidden = true; });
        },
        setCursor: function (u) {
          var i = u.cursor.idx;
          if (i == null || u.cursor.left < 0) { box.hidden = true; return; }
          var lines = [new Date(u.data[0][i] * 1000).toLocaleTimeString()];
          for (var s = 1; s < u.series.length; s++) {
            lines.push(u.series[s].label + ": " + fmt(u.data[s][i]) + unit);
          }
          box.textContent = "";
          lines.forEach(function (l, k) {
            var div = document.createElement("div");
            if (k === 0) div.className = "chart-tip-time";
            div.textContent = l;
            box.appendChild(div);
          });
          box.hidden = false;
          var left = u.cursor.left + 12;
          if (left + box.offsetWidth > u.over.clientWidth) left = u.cursor.left - box.offsetWidth - 12;
          box.style.left = Math.max(0, left) + "px";
          box.style.top = Math.max(0, u.cursor.top - box.offsetHeight - 8) + "px";
        }
      }
    };
  }

  // chart makes a chart in the figure with id, one series per name.
  function chart(id, names, colors, unit, yLabel) {
    var fig = document.getElementById(id);
    if (!fig || typeof uPlot === "undefined") return null;
    var series = [{ label: "time", value: "{YYYY}-{MM}-{DD} {HH}:{mm}:{ss}" }];
    names.forEach(function (n, i) {
      series.push({ label: n, stroke: colors[i], width: 1.5, points: { show: false },
        value: function (u, v) { return fmt(v) + unit; } });
    });
    var opts = {
      width: Math.max(280, fig.clientWidth - 16),
      height: 200,
      series: series,
      scales: { x: { time: true }, y: { range: function (u, lo, hi) { return [0, hi > 0 ? hi * 1.1 : 1]; } } },
      axes: [{ stroke: "#68737d", grid: { stroke: "#eef0f3" } },
        { stroke: "#68737d", grid: { stroke: "#eef0f3" }, label: yLabel, size: 60,
          values: function (u, vals) { return vals.map(fmt); } }],
      cursor: { drag: { x: false, y: false } },
      legend: { live: true },
      plugins: [tooltip(unit)]
    };
    var data = [[]].concat(names.map(function () { return []; }));
    var u = new uPlot(opts, data, fig.querySelector(".chart"));
    var c = { fig: fig, u: u };
    charts.push(c);
    return c;
  }

  var depth = chart("chart-depth", ["available", "retryable", "running"], ["#2f6feb", "#e07b00", "#2e7d32"], "", "jobs");
  var rate = chart("chart-rate", ["completed", "failed for good"], ["#2e7d32", "#c62828"], "/s", "jobs / s");
  var latency = chart("chart-latency", ["p50", "p95", "p99"], ["#2f6feb", "#e07b00", "#c62828"], " ms", "ms");

  // set gives a chart its data and records, on its figure, how many
  // samples it draws and the last one's values, for a reader (or a test)
  // to check against /ui/history.json.
  function set(c, data) {
    if (!c) return;
    c.u.setData(data);
    var n = data[0].length;
    c.fig.dataset.points = n;
    c.fig.dataset.last = n ? data.slice(1).map(function (s) { return s[n - 1]; }).join(",") : "";
  }

  function refresh() {
    fetch("/ui/history.json", { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
      .then(function (points) {
        var t = [], avail = [], retry = [], running = [], done = [], failed = [], p50 = [], p95 = [], p99 = [];
        points.forEach(function (p) {
          var a = 0, rt = 0, r = 0, ok = 0, bad = 0, l50 = 0, l95 = 0, l99 = 0;
          (p.queues || []).forEach(function (q) { a += q.Available; rt += q.Retryable; r += q.Running; });
          // Durations arrive in nanoseconds; percentiles of different
          // queues cannot be merged, so the chart shows the slowest.
          (p.finished || []).forEach(function (f) {
            ok += f.Completed; bad += f.Discarded + f.Cancelled;
            l50 = Math.max(l50, f.PickupP50 / 1e6); l95 = Math.max(l95, f.PickupP95 / 1e6); l99 = Math.max(l99, f.PickupP99 / 1e6);
          });
          t.push(Date.parse(p.at) / 1000);
          avail.push(a); retry.push(rt); running.push(r);
          done.push(p.seconds > 0 ? ok / p.seconds : 0); failed.push(p.seconds > 0 ? bad / p.seconds : 0);
          p50.push(l50); p95.push(l95); p99.push(l99);
        });
        set(depth, [t, avail, retry, running]);
        set(rate, [t, done, failed]);
        set(latency, [t, p50, p95, p99]);
        charts.forEach(function (c) { c.fig.dataset.ready = "true"; });
      })
      .catch(function () {});
  }

  window.addEventListener("resize", function () {
    charts.forEach(function (c) { c.u.setSize({ width: Math.max(280, c.fig.clientWidth - 16), height: 200 }); });
  });
  refresh();
  setInterval(refresh, interval);
})();
