// A "Copy" button (data-copy="<id>") copies the text of the element with that id: an invitation link.
(function () {
  'use strict';
  document.addEventListener('click', function (event) {
    var copy = event.target.closest && event.target.closest('[data-copy]');
    if (!copy || !navigator.clipboard) { return; }
    var text = document.getElementById(copy.dataset.copy).textContent.trim();
    navigator.clipboard.writeText(text).then(function () {
      copy.textContent = 'Copied';
      window.setTimeout(function () { copy.textContent = 'Copy'; }, 2000);
    });
  });
}());
