// Live charts of the overview: fetches the samples the server keeps and
// redraws three small SVG line charts at the server's sampling interval.
(function () {
  "use strict";
  var script = document.currentScript;
  var interval = Math.max(1000, parseInt(script.dataset.interval, 10) || 5000);
  var colors = ["#2f6feb", "#e07b00", "#c62828", "#2e7d32"];

  function draw(id, series, names) {
    var svg = document.getElementById(id);
    if (!svg) return;
    var w = 600, h = 160, pad = 30, n = 0, top = 0;
    series.forEach(function (s) { n = Math.max(n, s.length); s.forEach(function (v) { top = Math.max(top, v); }); });
    top = top > 0 ? top * 1.1 : 1;
    var out = '<line x1="' + pad + '" y1="' + (h - pad) + '" x2="' + w + '" y2="' + (h - pad) + '" stroke="#dfe3e8"/>' +
      '<text x="2" y="12">' + fmt(top) + '</text><text x="2" y="' + (h - pad) + '">0</text>';
    series.forEach(function (s, i) {
      if (s.length === 0) return;
      var pts = s.map(function (v, j) {
        var x = pad + (n > 1 ? j * (w - pad) / (n - 1) : 0);
        var y = (h - pad) - v / top * (h - pad - 10);
        return x.toFixed(1) + "," + y.toFixed(1);
      });
      out += '<polyline fill="none" stroke-width="1.5" stroke="' + colors[i % colors.length] + '" points="' + pts.join(" ") + '"/>';
      out += '<text x="' + (pad + i * 90) + '" y="' + (h - 8) + '" style="fill:' + colors[i % colors.length] + '">' + names[i] + " " + fmt(s[s.length - 1]) + "</text>";
    });
    svg.innerHTML = out;
  }

  function fmt(v) { return v >= 100 ? Math.round(v).toString() : v.toFixed(1); }

  function refresh() {
    fetch("/ui/history.json", { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
      .then(function (points) {
        var avail = [], running = [], rate = [], p50 = [], p95 = [], p99 = [];
        points.forEach(function (p) {
          var a = 0, r = 0, done = 0, l50 = 0, l95 = 0, l99 = 0;
          (p.queues || []).forEach(function (q) { a += q.Available; r += q.Running; });
          // Durations arrive in nanoseconds; percentiles of different
          // queues cannot be merged, so the chart shows the slowest.
          (p.finished || []).forEach(function (f) {
            done += f.Completed;
            l50 = Math.max(l50, f.PickupP50 / 1e6); l95 = Math.max(l95, f.PickupP95 / 1e6); l99 = Math.max(l99, f.PickupP99 / 1e6);
          });
          avail.push(a); running.push(r); rate.push(p.seconds > 0 ? done / p.seconds : 0);
          p50.push(l50); p95.push(l95); p99.push(l99);
        });
        draw("chart-depth", [avail, running], ["available", "running"]);
        draw("chart-rate", [rate], ["completed/s"]);
        draw("chart-latency", [p50, p95, p99], ["p50", "p95", "p99"]);
      })
      .catch(function () {});
  }
  refresh();
  setInterval(refresh, interval);
})();
