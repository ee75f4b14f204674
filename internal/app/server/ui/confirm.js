// Every form or button with data-confirm asks before it is sent: a bulk
// action says how many jobs it changes, a delete what it deletes. The
// listener is on the document, so that forms the live updates swap in
// (live.js) ask as the first ones did. It runs in the page's head, before
// any form is parsed, so that no form can be sent before it listens (at
// the end of the body, a click while the page still loaded sent a delete
// without its question).
(function () {
  "use strict";
  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    var button = ev.submitter;
    var ask = (button && button.dataset.confirm) || form.dataset.confirm;
    if (!ask) return;
    if (button && !button.dataset.confirm) ask = button.textContent + ": " + ask;
    if (!window.confirm(ask)) ev.preventDefault();
  });
})();
