// The Durak table's card motion, FLIP style around each update the socket swaps in (htmx's ws extension):
// before the swap it notes where every face-up card is (by its data-card), how many cards each seat holds
// and where the talon and the discard pile are; after it, the cards in their new places are played from
// where they were (First, Last, Invert, Play):
//   a lead, a throw-in, a transfer or a beat   from the hand (yours) or the mover's seat to the table;
//   a take                                     the table's cards to the taker's seat (or into your hand);
//   beaten off                                 the table's cards sweep to the discard pile;
//   a deal or a refill                         backs fly from the talon to the seats, cards into your hand.
// The cards are already where the update put them: a move is a short transform (220 ms) on them or on copies
// that catch no tap, so input is never delayed. With prefers-reduced-motion: reduce nothing moves.
(function () {
  'use strict';
  var DURATION = 220;
  var EASING = 'cubic-bezier(.2, .7, .3, 1)';
  var reduced = window.matchMedia('(prefers-reduced-motion: reduce)');
  var before = null;

  function box(element) {
    var r = element.getBoundingClientRect();
    return { left: r.left, top: r.top, width: r.width, height: r.height };
  }

  function centre(element) {
    var r = box(element);
    return { left: r.left + r.width / 2, top: r.top + r.height / 2, width: 0, height: 0 };
  }

  function seatElement(seat) {
    var element = document.querySelector('#durak-seats [data-seat="' + seat + '"]');
    return element && (element.querySelector('.seat-backs') || element);
  }

  function snapshot() {
    var board = document.getElementById('durak-board');
    if (!board) { return null; }
    var table = {};
    board.querySelectorAll('.durak-bout .card[data-card]').forEach(function (card) {
      table[card.dataset.card] = { box: box(card), html: card.outerHTML };
    });
    var hand = {};
    document.querySelectorAll('#durak-hand .card[data-card]').forEach(function (card) {
      hand[card.dataset.card] = { box: box(card) };
    });
    var counts = {};
    document.querySelectorAll('#durak-seats [data-seat]').forEach(function (seat) {
      var count = seat.querySelector('[data-count]');
      if (count) { counts[seat.dataset.seat] = Number(count.dataset.count); }
    });
    var talon = board.querySelector('.talon-pile');
    return { game: board.dataset.game, table: table, hand: hand, counts: counts, talon: talon ? box(talon) : null };
  }

  // Play `element` from the box `from` to where it is now.
  function flyFrom(element, from) {
    var to = box(element);
    var dx = from.left + from.width / 2 - (to.left + to.width / 2);
    var dy = from.top + from.height / 2 - (to.top + to.height / 2);
    if (Math.abs(dx) < 1 && Math.abs(dy) < 1) { return; }
    var scale = from.width && to.width ? from.width / to.width : 0.6;
    element.animate(
      [{ transform: 'translate(' + dx + 'px, ' + dy + 'px) scale(' + scale + ')' }, { transform: 'none' }],
      { duration: DURATION, easing: EASING });
  }

  // A copy of a card (its markup, at `from`) that flies to `to` and goes.
  function ghost(html, from, to, delay) {
    var holder = document.createElement('div');
    holder.innerHTML = html;
    var copy = holder.firstElementChild;
    copy.classList.add('motion-ghost');
    copy.setAttribute('aria-hidden', 'true');
    copy.removeAttribute('data-card');
    copy.style.left = from.left + 'px';
    copy.style.top = from.top + 'px';
    copy.style.width = from.width + 'px';
    copy.style.height = from.height + 'px';
    document.body.appendChild(copy);
    var dx = to.left + to.width / 2 - (from.left + from.width / 2);
    var dy = to.top + to.height / 2 - (from.top + from.height / 2);
    var flight = copy.animate(
      [{ transform: 'none', opacity: 1 }, { transform: 'translate(' + dx + 'px, ' + dy + 'px) scale(.45)', opacity: 0.2 }],
      { duration: DURATION, delay: delay || 0, easing: EASING, fill: 'backwards' });
    flight.onfinish = flight.oncancel = function () { copy.remove(); };
  }

  function animate(old) {
    var board = document.getElementById('durak-board');
    if (!board || !old) { return; }
    if (board.dataset.game !== old.game) {  // a new deal: every card comes from the talon
      old = { game: old.game, table: {}, hand: {}, counts: {}, talon: old.talon };
    }
    var lastMove = board.querySelector('[data-last-seat]');
    var mover = lastMove ? seatElement(lastMove.dataset.lastSeat) : null;
    var onTable = {};
    // Onto the table: from the hand it left, from where it lay (pairs move as the bout grows) or from the
    // seat of the player who moved.
    board.querySelectorAll('.durak-bout .card[data-card]').forEach(function (card) {
      var id = card.dataset.card;
      onTable[id] = true;
      var from = old.hand[id] ? old.hand[id].box : old.table[id] ? old.table[id].box : mover ? centre(mover) : null;
      if (from) { flyFrom(card, from); }
    });
    // Off the table: into the hand (you took), to the taker's seat, or swept to the discard pile.
    var strip = board.querySelector('.durak-last-bout');
    var took = strip ? strip.dataset.took : '';
    var taker = took !== '' ? seatElement(took) : null;
    var pile = board.querySelector('.discard-pile') || board;
    var gone = 0;
    Object.keys(old.table).forEach(function (id) {
      if (onTable[id]) { return; }
      if (document.querySelector('#durak-hand .card[data-card="' + id + '"]')) { return; }  // flown below
      var target = taker && took !== '' ? centre(taker) : centre(pile);
      ghost(old.table[id].html, old.table[id].box, target, 25 * gone++);
    });
    // Into the hand: from the table (a take), from where it was (the hand closes up) or from the talon; not
    // while the player drags a card of it (durak.js moves that one).
    var talon = board.querySelector('.talon-pile');
    var source = talon ? box(talon) : old.talon;
    var dragging = document.documentElement.classList.contains('durak-dragging');
    document.querySelectorAll(dragging ? '#durak-nothing' : '#durak-hand .card[data-card]').forEach(function (card) {
      var id = card.dataset.card;
      var from = old.table[id] ? old.table[id].box : old.hand[id] ? old.hand[id].box : source;
      if (from) { flyFrom(card, from); }
    });
    // Backs dealt from the talon to the other seats (at most three a seat are drawn flying).
    if (!source) { return; }
    document.querySelectorAll('#durak-seats [data-seat]').forEach(function (seat) {
      var count = seat.querySelector('[data-count]');
      var had = old.counts[seat.dataset.seat];
      if (!count || seat.classList.contains('is-you')) { return; }
      var dealt = Number(count.dataset.count) - (had === undefined ? 0 : had);
      if (had !== undefined && dealt > 0 && took === seat.dataset.seat && Object.keys(old.table).length) { return; }
      var backs = seat.querySelector('.seat-backs') || seat;
      for (var n = 0; n < Math.min(dealt, 3); n++) {
        ghost('<span class="card card-back"></span>', source, centre(backs), 40 * n);
      }
    });
  }

  document.addEventListener('htmx:wsBeforeMessage', function () {
    before = reduced.matches ? null : snapshot();
  });
  document.addEventListener('htmx:wsAfterMessage', function () {
    var old = before;
    before = null;
    if (old && !reduced.matches) { animate(old); }
  });
})();
