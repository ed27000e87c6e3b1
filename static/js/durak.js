// The Durak table page: buttons carry the message they send (data-send); this adds the version the page shows
// and sends it on the page's websocket (htmx's ws extension owns the socket). Also the move countdown.
(function () {
  'use strict';
  var socket = null;
  var pending = null;  // a click made before the socket opened: sent once it is open

  document.addEventListener('htmx:wsOpen', function (event) {
    socket = event.detail.socketWrapper;
    var banner = document.getElementById('connection');
    if (banner) { banner.hidden = true; }
    if (pending) { socket.send(JSON.stringify(pending)); pending = null; }
  });

  document.addEventListener('htmx:wsClose', function () {
    var banner = document.getElementById('connection');
    if (banner) { banner.hidden = false; }
  });

  document.addEventListener('click', function (event) {
    var button = event.target.closest('[data-send]');
    if (!button) { return; }
    var message = JSON.parse(button.dataset.send);
    var status = document.getElementById('durak-status');
    if (status && status.dataset.v) { message.v = Number(status.dataset.v); }
    if (socket) { socket.send(JSON.stringify(message)); } else { pending = message; }
  });

  window.setInterval(function () {
    var countdown = document.querySelector('.countdown[data-seconds-left]');
    if (!countdown) { return; }
    if (countdown.startedAt === undefined) { countdown.startedAt = performance.now(); }
    var left = Math.max(0, Number(countdown.dataset.secondsLeft) - (performance.now() - countdown.startedAt) / 1000);
    countdown.querySelector('.countdown-seconds').textContent = String(Math.ceil(left));
  }, 250);
})();
