// Live regions: every page marks the parts whose figures change (queues,
// workers, topics, job lists, counts) with data-live and an id. Every few
// seconds (main's data-live-ms) this script fetches the page again and
// swaps each region for its fresh copy, without reloading the page: no
// framework, no inline script (the Content-Security-Policy allows none),
// and nothing lost that the operator is doing. A region is left as it is
// while it holds a field being typed in, a changed field, a ticked box, an
// opened <details> or the element a pointer is pressed on; the page's scripts listen on the document, so that
// swapped elements need no listeners of their own.
(function () {
  "use strict";
  var main = document.querySelector("main[data-live-ms]");
  if (!main) return;
  var every = Math.max(1000, parseInt(main.dataset.liveMs, 10) || 5000);
  var toggle = document.getElementById("live-toggle");
  var stamp = document.getElementById("live-stamp");
  var busy = false;
  // served holds, for each region, the HTML the server last sent for it,
  // so that a region whose copy did not change is left alone.
  var served = new WeakMap();

  // pressed is the element a pointer is pressed on, until it is released:
  // a region swapped between the press and the release would lose the
  // click.
  var pressed = null;
  document.addEventListener("pointerdown", function (ev) { pressed = ev.target; }, true);
  document.addEventListener("pointerup", function () { pressed = null; }, true);
  document.addEventListener("pointercancel", function () { pressed = null; }, true);

  // inUse reports whether the operator is working in region.
  function inUse(region) {
    if (pressed && region.contains(pressed)) return true;
    var active = document.activeElement;
    if (active && active !== document.body && region.contains(active) && active.matches("input, select, textarea")) return true;
    if (region.querySelector("details[open]")) return true;
    return Array.prototype.some.call(region.querySelectorAll("input, select, textarea"), function (el) {
      if (el.type === "checkbox" || el.type === "radio") return el.checked !== el.defaultChecked;
      if (el.tagName === "SELECT") {
        return Array.prototype.some.call(el.options, function (o) { return o.selected !== o.defaultSelected; });
      }
      return el.value !== el.defaultValue;
    });
  }

  function swap(html) {
    var fresh = new DOMParser().parseFromString(html, "text/html");
    var swapped = 0;
    document.querySelectorAll("[data-live]").forEach(function (region) {
      var next = region.id && fresh.getElementById(region.id);
      if (!next || inUse(region)) return;
      if (next.outerHTML === served.get(region)) return;
      var copy = document.importNode(next, true);
      served.set(copy, next.outerHTML);
      region.replaceWith(copy);
      swapped++;
    });
    if (stamp) stamp.value = new Date().toLocaleTimeString();
    main.dataset.swaps = String((parseInt(main.dataset.swaps, 10) || 0) + swapped);
    document.dispatchEvent(new CustomEvent("drover:live", { detail: { swapped: swapped } }));
  }

  function tick() {
    if (busy || document.hidden || (toggle && !toggle.checked)) return;
    busy = true;
    fetch(location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (r) {
        // A session that ended answers the login form: nothing to swap.
        if (!r.ok || r.url.indexOf("/login") >= 0) return null;
        return r.text();
      })
      .then(function (html) { if (html) swap(html); })
      .catch(function () {})
      .then(function () { busy = false; });
  }

  // What the server sent first, to compare the next copies with.
  document.querySelectorAll("[data-live]").forEach(function (region) { served.set(region, region.outerHTML); });
  if (stamp) stamp.value = new Date().toLocaleTimeString();
  setInterval(tick, every);
})();
