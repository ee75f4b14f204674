// The jobs page: selecting rows (one by one, or every row of the page)
// for the selection's buttons, and asking before a bulk form is sent. A
// script file, since the dashboard's Content-Security-Policy allows no
// inline handlers.
(function () {
  "use strict";
  var boxes = Array.prototype.slice.call(document.querySelectorAll(".select-job"));
  var all = document.getElementById("select-page");
  var count = document.getElementById("selected-count");

  function update() {
    var n = boxes.filter(function (b) { return b.checked; }).length;
    if (count) count.textContent = String(n);
    if (all) {
      all.checked = n > 0 && n === boxes.length;
      all.indeterminate = n > 0 && n < boxes.length;
    }
  }
  boxes.forEach(function (b) { b.addEventListener("change", update); });
  if (all) {
    all.addEventListener("change", function () {
      boxes.forEach(function (b) { b.checked = all.checked; });
      update();
    });
  }
  update();

  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (ev) {
      var action = ev.submitter ? ev.submitter.textContent : "this";
      if (!window.confirm(action + ": " + form.dataset.confirm)) ev.preventDefault();
    });
  });
})();
