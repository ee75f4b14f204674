// The charts of the overview, of a queue's page and of a topic's, drawn with uPlot
// (vendor/uplot, embedded in the binary) from /ui/stats.json: the last half
// hour from the server's sampler, followed at its interval ("live"), or
// longer ranges from the history the leader keeps in the store, which
// survives restarts and covers days. Each chart has a time axis with a tick
// every few dozen pixels, a legend that always shows the latest values (the
// values under the cursor while it is over the chart), and a tooltip
// beside the cursor. The whole of the queues (or of the queue) is drawn in
// three charts, and each queue (or kind) in three more, one line each; a
// topic's subscriptions' lag in two (/ui/lag.json).
(function () {
  "use strict";
  var section = document.getElementById("charts") || document.getElementById("lag-charts");
  if (!section || typeof uPlot === "undefined") return;
  var queue = section.dataset.queue || "";
  var topic = section.dataset.topic || "";
  var main = document.querySelector("main");
  var liveEvery = Math.max(1000, parseInt(main && main.dataset.liveMs, 10) || 5000);
  var storedEvery = 60000;
  var pressed = section.querySelector(".ranges button[aria-pressed=true]");
  var range = pressed ? pressed.dataset.range : "live";
  var palette = ["#2f6feb", "#e07b00", "#2e7d32", "#c62828", "#6f42c1", "#00838f", "#ad1457", "#5d4037", "#827717", "#455a64"];
  var charts = {};
  var timer = null;

  // fmt writes a figure with the precision its size deserves.
  function fmt(v) {
    if (v == null || isNaN(v)) return "-";
    var a = Math.abs(v);
    if (a >= 1000) return Math.round(v).toLocaleString("en");
    if (a >= 100) return v.toFixed(0);
    if (a >= 1 || a === 0) return v.toFixed(1);
    return String(parseFloat(v.toPrecision(2)));
  }

  function pad(n) { return n < 10 ? "0" + n : String(n); }

  // timeIncrs are the spacings of the time axis' ticks, in seconds, the
  // finest that leaves 55 pixels between ticks chosen: every round step
  // from a second to a week, so that a chart of minutes or of days gets
  // a tick every few dozen pixels.
  var timeIncrs = [1, 2, 5, 10, 15, 30, 60, 120, 180, 300, 600, 900, 1200, 1800, 3600, 7200, 10800, 21600, 43200,
    86400, 2 * 86400, 7 * 86400];

  // tick writes a time axis label as precise as the ticks are apart
  // (incr, in seconds): seconds when they are, the date when they are a
  // day or more apart or the range spans days.
  function tick(secs, incr) {
    var d = new Date(secs * 1000);
    var date = pad(d.getMonth() + 1) + "-" + pad(d.getDate());
    var hm = pad(d.getHours()) + ":" + pad(d.getMinutes());
    if (incr < 60) return hm + ":" + pad(d.getSeconds());
    if (incr >= 86400) return date;
    if (range === "2d" || range === "7d" || range === "30d") return date + " " + hm;
    return hm;
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
          var lines = [new Date(u.data[0][i] * 1000).toLocaleString()];
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

  // latest keeps the legend on the newest point whenever the cursor is not
  // over the chart, so that it reads without hovering.
  function latest(u) {
    var n = u.data[0].length;
    if (n > 0 && (u.cursor.idx == null || u.cursor.left < 0)) u.setLegend({ idx: n - 1 });
  }

  function width(fig) { return Math.max(280, fig.clientWidth - 16); }

  // make draws a chart in fig with one series per name, replacing the one
  // it had when the names changed (a queue or kind came or went).
  function make(fig, names, colors, unit, yLabel) {
    var c = charts[fig.id];
    if (c && c.names === names.join("\u0000")) return c;
    if (c) c.u.destroy();
    var series = [{ label: "time", value: function (u, v) { return v == null ? "-" : new Date(v * 1000).toLocaleString(); } }];
    names.forEach(function (n, i) {
      series.push({ label: n, stroke: colors[i % colors.length], width: 1.5, points: { show: false }, spanGaps: false,
        value: function (u, v) { return fmt(v) + unit; } });
    });
    var opts = {
      width: width(fig),
      height: 220,
      series: series,
      scales: { x: { time: true }, y: { range: function (u, lo, hi) { return [0, hi > 0 ? hi * 1.1 : 1]; } } },
      axes: [
        { stroke: "#68737d", grid: { stroke: "#eef0f3" }, space: 55, incrs: timeIncrs,
          values: function (u, splits, axis, space, incr) {
            fig.dataset.ticks = String(splits.length);
            return splits.map(function (v) { return tick(v, incr); });
          } },
        { stroke: "#68737d", grid: { stroke: "#eef0f3" }, label: yLabel, size: 60,
          values: function (u, vals) { return vals.map(fmt); } }],
      cursor: { drag: { x: false, y: false } },
      legend: { live: true },
      hooks: { setCursor: [latest] },
      plugins: [tooltip(unit)]
    };
    var data = [[]].concat(names.map(function () { return []; }));
    var u = new uPlot(opts, data, fig.querySelector(".chart"));
    c = { fig: fig, u: u, names: names.join("\u0000") };
    charts[fig.id] = c;
    return c;
  }

  // draw gives the chart of fig its series, recording on the figure how
  // many points it draws and the last one's values, for a reader (or a
  // test) to check against /ui/stats.json.
  function draw(fig, t, names, cols, colors, unit, yLabel) {
    var c = make(fig, names, colors, unit, yLabel);
    c.u.setData([t].concat(cols));
    latest(c.u);
    var n = t.length;
    fig.dataset.points = String(n);
    fig.dataset.series = names.join(",");
    fig.dataset.last = n ? cols.map(function (s) { return s[n - 1]; }).join(",") : "";
    fig.dataset.ready = "true";
  }

  function column(series, key) { return series.map(function (s) { return s[key]; }); }

  // whole are the charts of the whole (all queues, or the queue): their
  // series from d.total. each are the charts of each queue, kind or
  // subscription: one series per d.series, its column key.
  var whole = {
    depth: { names: ["available", "scheduled", "retryable", "running"], colors: ["#2f6feb", "#68737d", "#e07b00", "#2e7d32"], unit: "", label: "jobs" },
    rate: { names: ["completed", "failed"], labels: ["completed", "failed for good"], colors: ["#2e7d32", "#c62828"], unit: "/s", label: "jobs / s" },
    latency: { names: ["p50", "p95", "p99"], colors: ["#2f6feb", "#e07b00", "#c62828"], unit: " ms", label: "ms" }
  };
  var each = {
    "by-available": { key: "available", unit: "", label: "jobs" },
    "by-completed": { key: "completed", unit: "/s", label: "jobs / s" },
    "by-p95": { key: "p95", unit: " ms", label: "ms" },
    lag: { key: "lag", unit: "", label: "messages" },
    "lag-age": { key: "oldest_s", unit: " s", label: "s" }
  };

  function render(d) {
    var t = d.t, tot = d.total || {}, series = d.series || [];
    var names = series.map(function (s) { return s.name; });
    section.querySelectorAll("figure[data-chart]").forEach(function (fig) {
      var w = whole[fig.dataset.chart], e = each[fig.dataset.chart];
      if (w) {
        draw(fig, t, w.labels || w.names, w.names.map(function (k) { return tot[k] || []; }), w.colors, w.unit, w.label);
      } else if (e) {
        draw(fig, t, names, column(series, e.key), palette, e.unit, e.label);
      }
    });
    var source = document.getElementById("chart-source");
    if (source) {
      source.textContent = range === "live" ? "sampled every " + d.bucket_s.toFixed(d.bucket_s < 1 ? 2 : 0) + " s by this server" :
        "from the stored history, one point per " + (d.bucket_s >= 3600 ? d.bucket_s / 3600 + " h" : d.bucket_s / 60 + " min");
    }
    section.dataset.range = range;
  }

  function refresh() {
    var url = topic ? "/ui/lag.json?topic=" + encodeURIComponent(topic) + "&range=" + encodeURIComponent(range) :
      "/ui/stats.json?range=" + encodeURIComponent(range) + (queue ? "&queue=" + encodeURIComponent(queue) + "&by=kind" : "&by=queue");
    fetch(url, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
      .then(render)
      .catch(function () {});
  }

  function follow() {
    if (timer) clearInterval(timer);
    refresh();
    timer = setInterval(refresh, range === "live" ? liveEvery : storedEvery);
  }

  section.querySelectorAll(".ranges button").forEach(function (b) {
    b.addEventListener("click", function () {
      section.querySelectorAll(".ranges button").forEach(function (o) { o.setAttribute("aria-pressed", String(o === b)); });
      range = b.dataset.range;
      follow();
    });
  });
  window.addEventListener("resize", function () {
    Object.keys(charts).forEach(function (id) {
      var c = charts[id];
      c.u.setSize({ width: width(c.fig), height: 220 });
    });
  });
  follow();
})();
