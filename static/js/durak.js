// The Durak table page: buttons carry the message they send (data-send); this adds the version the page shows
// and sends it on the page's websocket (htmx's ws extension owns the socket), after a confirmation where the
// button asks for one (data-confirm). A card with several moves (data-choose) shows its moves when tapped. Also the move countdown, and the
// player's own seed: drawn here with each ready (or start), so every deck mixes in randomness the server did
// not choose, and marked among the game's published seed digests once the game is over.
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

  var page = document.querySelector('[data-table-id]');
  var seedKey = 'durak-seed-' + (page ? page.dataset.tableId : '');

  function newSeed() {
    var bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return (b < 16 ? '0' : '') + b.toString(16); }).join('');
  }

  function markOwnSeed() {
    var seed = window.sessionStorage.getItem(seedKey);
    var digests = document.querySelectorAll('[data-seed-digest]');
    if (!seed || !digests.length || !window.crypto.subtle) { return; }
    window.crypto.subtle.digest('SHA-256', new TextEncoder().encode(seed)).then(function (buffer) {
      var hex = Array.prototype.map.call(new Uint8Array(buffer), function (b) { return (b < 16 ? '0' : '') + b.toString(16); }).join('');
      digests.forEach(function (code) {
        if (code.dataset.seedDigest === hex && !code.classList.contains('is-yours')) {
          code.classList.add('is-yours');
          code.insertAdjacentText('afterend', ' (your seed ' + seed + ')');
        }
      });
    });
  }

  document.addEventListener('htmx:wsAfterMessage', markOwnSeed);
  markOwnSeed();

  // A card with more than one move (beat this card or that, beat or transfer): a tap shows its moves only.
  function choose(card) {
    var controls = document.getElementById('durak-controls');
    var chosen = card.classList.toggle('is-choosing');
    document.querySelectorAll('[data-choose].is-choosing').forEach(function (other) {
      if (other !== card) { other.classList.remove('is-choosing'); }
    });
    var first = null;
    controls.querySelectorAll('[data-card]').forEach(function (move) {
      var mine = chosen && move.dataset.card === card.dataset.choose;
      move.hidden = chosen && !mine;
      move.classList.toggle('is-chosen', mine);
      if (mine && !first) { first = move; }
    });
    if (first) { first.focus({ preventScroll: true }); }
  }

  document.addEventListener('click', function (event) {
    var card = event.target.closest('[data-choose]');
    if (card) { choose(card); return; }
    var button = event.target.closest('[data-send]');
    if (!button) { return; }
    if (button.dataset.confirm && !window.confirm(button.dataset.confirm)) { return; }
    var message = JSON.parse(button.dataset.send);
    if ((message.action === 'ready' || message.action === 'start') && window.crypto && window.crypto.getRandomValues) {
      message.seed = newSeed();
      window.sessionStorage.setItem(seedKey, message.seed);
    }
    var status = document.getElementById('durak-status');
    if (status && status.dataset.v) { message.v = Number(status.dataset.v); }
    if (socket) { socket.send(JSON.stringify(message)); } else { pending = message; }
  });

  // Your turn: the tab's title says so, and a phone vibrates once (when it can and the player has not asked
  // for reduced motion). Sound stays off.
  var title = document.title;
  var wasMyTurn = false;
  function alertTurn() {
    var mine = Boolean(document.querySelector('#durak-status .your-turn'));
    document.title = mine ? '\u25CF Your move \u2013 ' + title : title;
    if (mine && !wasMyTurn && navigator.vibrate && !window.matchMedia('(prefers-reduced-motion: reduce)').matches) {
      navigator.vibrate(120);
    }
    wasMyTurn = mine;
  }
  document.addEventListener('htmx:wsAfterMessage', alertTurn);
  alertTurn();

  window.setInterval(function () {
    var countdown = document.querySelector('.countdown[data-seconds-left]');
    if (!countdown) { return; }
    if (countdown.startedAt === undefined) { countdown.startedAt = performance.now(); }
    var left = Math.max(0, Number(countdown.dataset.secondsLeft) - (performance.now() - countdown.startedAt) / 1000);
    countdown.querySelector('.countdown-seconds').textContent = String(Math.ceil(left));
  }, 250);
})();
