// The Durak table page: buttons carry the message they send (data-send); this adds the version the page shows
// and sends it on the page's websocket (htmx's ws extension owns the socket), after a confirmation where the
// button asks for one (data-confirm). A card with several moves (data-choose) shows its moves when tapped; a
// playable card may also be dragged onto the table or onto the card it beats. Also the move countdown, and the
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

  // Send a button's message with the version the page shows.
  function send(message) {
    var status = document.getElementById('durak-status');
    if (status && status.dataset.v) { message.v = Number(status.dataset.v); }
    if (socket) { socket.send(JSON.stringify(message)); } else { pending = message; }
  }

  var dropped = false;  // a drag just ended: the click the browser sends after it is not a tap
  document.addEventListener('click', function (event) {
    if (dropped) { dropped = false; if (event.target.closest('#durak-hand')) { event.preventDefault(); return; } }
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
    send(message);
  });

  // Drag to play (pointer events: a mouse, a finger or a pen): a playable card of the hand dropped on the
  // table attacks, throws in or transfers with it; dropped on an attacking card, it beats that card. The
  // message is the one its tap (or its chooser's button) sends; a drop on nothing, or where the card has no
  // move, returns it.
  var drag = null;

  function movesOf(button) {
    if (button.dataset.send) { return [JSON.parse(button.dataset.send)]; }
    var id = button.dataset.choose;
    return Array.prototype.map.call(
      document.querySelectorAll('#durak-controls [data-card="' + id + '"][data-send]'),
      function (move) { return JSON.parse(move.dataset.send); });
  }

  // The move a drop at (x, y) makes (null: none), and the element it lights up.
  function dropAt(x, y) {
    var under = document.elementFromPoint(x, y);
    var board = under && under.closest('#durak-board');
    if (!board) { return null; }
    var moves = movesOf(drag.button);
    var pair = under.closest('.durak-bout .durak-pair');
    var target = pair && pair.querySelectorAll('.card').length === 1 ? pair.querySelector('.card').dataset.card : null;
    var beats = moves.filter(function (move) { return move.action === 'beat'; });
    var beat = beats.filter(function (move) { return move.target === target; })[0];
    if (beat) { return { move: beat, lit: pair }; }
    var onTable = moves.filter(function (move) { return move.action === 'attack' || move.action === 'transfer'; })[0];
    if (onTable) { return { move: onTable, lit: board }; }
    if (beats.length === 1 && !target) {  // the table, and the card beats one card only
      var only = board.querySelector('.durak-pair .card[data-card="' + beats[0].target + '"]');
      return { move: beats[0], lit: only ? only.closest('.durak-pair') : board };
    }
    return null;
  }

  function light(element) {
    document.querySelectorAll('.is-drop-target').forEach(function (lit) {
      if (lit !== element) { lit.classList.remove('is-drop-target'); }
    });
    if (element) { element.classList.add('is-drop-target'); }
  }

  function endDrag() {
    if (!drag) { return; }
    if (drag.button) {
      drag.button.classList.remove('is-dragging');
      drag.button.style.transform = '';
    }
    document.documentElement.classList.remove('durak-dragging');
    light(null);
    drag = null;
  }

  // The dragged card's button now: an update (a bot's move, a player coming back) may have swapped the hand
  // in meanwhile; null if the card is no longer playable.
  function dragged() {
    if (!document.body.contains(drag.button)) {
      var card = document.querySelector('#durak-hand button.card-button.is-playable [data-card="' + drag.card + '"]');
      drag.button = card ? card.closest('button') : null;
      if (drag.button && drag.moving) { drag.button.classList.add('is-dragging'); }
    }
    return drag.button;
  }

  document.addEventListener('pointerdown', function (event) {
    var button = event.target.closest('#durak-hand button.card-button.is-playable');
    var card = button && button.querySelector('[data-card]');
    if (!card || !event.isPrimary || event.button !== 0) { return; }
    drag = { button: button, card: card.dataset.card, x: event.clientX, y: event.clientY, id: event.pointerId, moving: false };
  });

  document.addEventListener('pointermove', function (event) {
    if (!drag || event.pointerId !== drag.id) { return; }
    var dx = event.clientX - drag.x;
    var dy = event.clientY - drag.y;
    if (!drag.moving) {
      if (dx * dx + dy * dy < 100) { return; }  // a tap that wobbles is still a tap
      drag.moving = true;
      document.documentElement.classList.add('durak-dragging');
    }
    if (!dragged()) { endDrag(); return; }
    event.preventDefault();
    drag.at = { x: event.clientX, y: event.clientY };
    drag.button.classList.add('is-dragging');
    drag.button.style.transform = 'translate(' + dx + 'px, ' + dy + 'px)';
    var drop = dropAt(event.clientX, event.clientY);
    light(drop ? drop.lit : null);
  });

  document.addEventListener('pointerup', function (event) {
    if (!drag || event.pointerId !== drag.id) { return; }
    if (!drag.moving) { drag = null; return; }  // a tap: the click plays it
    if (!dragged()) { endDrag(); return; }
    // Where the card was last seen (a touch's end may carry no position of its own).
    var at = drag.at || { x: event.clientX, y: event.clientY };
    var drop = dropAt(at.x, at.y);
    var button = drag.button;
    var dx = at.x - drag.x;
    var dy = at.y - drag.y;
    endDrag();
    dropped = true;
    window.setTimeout(function () { dropped = false; }, 0);  // no click follows a touch drag
    if (drop) {
      send(drop.move);
    } else if (!window.matchMedia('(prefers-reduced-motion: reduce)').matches) {
      button.animate([{ transform: 'translate(' + dx + 'px, ' + dy + 'px)' }, { transform: 'none' }],
        { duration: 180, easing: 'ease-out' });
    }
  });

  document.addEventListener('pointercancel', endDrag);

  // Your turn: the tab's title says so, in the status's own words (the page's language), and a phone vibrates
  // once (when it can and the player has not asked for reduced motion). Sound stays off.
  var title = document.title;
  var wasMyTurn = false;
  function alertTurn() {
    var turn = document.querySelector('#durak-status .your-turn');
    var mine = Boolean(turn);
    document.title = mine ? '\u25CF ' + turn.textContent.trim() + ' \u2013 ' + title : title;
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
