// The jobs page: selecting rows (one by one, or every row of the page)
// for the selection's buttons. A script file, since the dashboard's
// Content-Security-Policy allows no inline handlers; its listeners are on
// the document, so that rows the live updates swap in (live.js) work as
// the first ones did.
(function () {
  "use strict";
  function boxes() { return Array.prototype.slice.call(document.querySelectorAll(".select-job")); }

  function update() {
    var all = document.getElementById("select-page");
    var count = document.getElementById("selected-count");
    var bs = boxes();
    var n = bs.filter(function (b) { return b.checked; }).length;
    if (count) count.textContent = String(n);
    if (all) {
      all.checked = n > 0 && n === bs.length;
      all.indeterminate = n > 0 && n < bs.length;
    }
  }

  document.addEventListener("change", function (ev) {
    var t = ev.target;
    if (t.id === "select-page") {
      boxes().forEach(function (b) { b.checked = t.checked; });
      update();
    } else if (t.classList && t.classList.contains("select-job")) {
      update();
    }
  });
  document.addEventListener("drover:live", update);
  update();
})();
