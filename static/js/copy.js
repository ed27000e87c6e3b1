// A "Copy" button (data-copy="<id>") copies the text of the element with that id: an invitation link. It says
// so for two seconds in the page's words (data-copied), then its own again.
(function () {
  'use strict';
  document.addEventListener('click', function (event) {
    var copy = event.target.closest && event.target.closest('[data-copy]');
    if (!copy || !navigator.clipboard) { return; }
    var text = document.getElementById(copy.dataset.copy).textContent.trim();
    var label = copy.textContent;
    navigator.clipboard.writeText(text).then(function () {
      copy.textContent = copy.dataset.copied || 'Copied';
      window.setTimeout(function () { copy.textContent = label; }, 2000);
    });
  });
}());
