/*
 * Times in the viewer's own time zone. The server writes every time as <time datetime="ISO" data-local="...">
 * with the UTC text inside (what a browser without scripts shows); this file rewrites that text in the
 * browser's zone and keeps the UTC text as the element's tooltip. data-local says what to show: "time"
 * (14:03:07), "minute" (14:03), "datetime" (26 Nov, 14:03), "full" (26 Nov 2026, 14:03:07) or "date".
 */
(function () {
  'use strict';

  var FORMATS = {
    time: { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' },
    minute: { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' },
    datetime: { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' },
    full: {
      day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit',
      hourCycle: 'h23', timeZoneName: 'short',
    },
    date: { day: 'numeric', month: 'short', year: 'numeric' },
  };
  var formatters = {};

  function formatter(kind) {
    if (!formatters[kind]) { formatters[kind] = new Intl.DateTimeFormat(undefined, FORMATS[kind]); }
    return formatters[kind];
  }

  function localize(root) {
    (root || document).querySelectorAll('time[datetime][data-local]:not([data-localized])').forEach(function (element) {
      var moment = new Date(element.getAttribute('datetime'));
      var kind = element.dataset.local;
      if (isNaN(moment.getTime()) || !FORMATS[kind]) { return; }
      var utc = element.textContent.trim();
      element.title = /UTC/.test(utc) ? utc : utc + ' UTC';
      element.textContent = formatter(kind).format(moment);
      element.dataset.localized = '';
    });
  }

  localize(document);
  document.addEventListener('htmx:wsAfterMessage', function () { localize(document); });
  document.addEventListener('htmx:afterSwap', function () { localize(document); });
})();
