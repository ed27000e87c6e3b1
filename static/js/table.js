/*
 * The table and lobby pages' small helpers. No game logic: the server decides what is allowed and sends
 * the HTML; this file only shows the connection state, ticks the countdown the server rendered, maps
 * keyboard shortcuts onto the buttons the server enabled, fills the bet input from chip buttons, keeps the
 * chat scrolled and the keyboard focus in place across live updates, brings the player's hand into view when
 * their turn comes, clears a refusal after a while, says why a seat the player did not leave was freed, asks
 * before a click the server marked with `data-confirm`, animates only the cards an update dealt (the
 * server paces the dealer's turn: each of its frames turns or deals one card), keeps the bet box's limits those the server last sent, remembers the hint checkbox, opens the strategy chart, copies the
 * invite link, shows quick reactions at their sender's seats, and draws the seed a player sits down with. The bet box's chips and rebets are in bets.js,
 * sound and vibration in table-sound.js.
 */
(function () {
  'use strict';

  // htmx retries by itself after these close codes; other closes of a live page are retried here.
  var HTMX_RETRIES = [1006, 1011, 1012, 1013];
  var POLICY_VIOLATION = 4008;  // tables.consumers.POLICY_VIOLATION (flooding)
  var MAX_RETRY_DELAY_MS = 30000;
  var URGENT_SECONDS = 5;
  var SHORTCUT_KEYS = ['h', 's', 'd', 'p', 'r'];

  var unloading = false;
  var retries = 0;
  window.addEventListener('pagehide', function () { unloading = true; });

  function banner() { return document.getElementById('connection'); }

  // The banner's words are the page's (its language): its own text, and the flooding notice (data-flooded).
  var RECONNECTING = banner() ? banner().textContent : '';

  function showBanner(text, lost) {
    var element = banner();
    if (!element) { return; }
    element.textContent = text;
    element.classList.toggle('is-lost', Boolean(lost));
    element.hidden = false;
  }

  document.addEventListener('htmx:wsOpen', function () {
    retries = 0;
    var element = banner();
    if (element) { element.hidden = true; }
  });

  document.addEventListener('htmx:wsClose', function (event) {
    if (unloading) { return; }
    var code = event.detail.event ? event.detail.event.code : 0;
    if (code === POLICY_VIOLATION) {
      showBanner(banner() ? banner().dataset.flooded : '', true);
      return;
    }
    showBanner(RECONNECTING, false);
    if (HTMX_RETRIES.indexOf(code) === -1 && event.detail.socketWrapper) {
      // A clean close (server restart, proxy timeout): try again with a growing, jittered delay.
      var delay = Math.min(MAX_RETRY_DELAY_MS, 500 * Math.pow(2, retries)) * (0.5 + Math.random() / 2);
      retries += 1;
      var wrapper = event.detail.socketWrapper;
      window.setTimeout(function () { if (!unloading) { wrapper.reconnect(); } }, delay);
    }
  });

  // --- countdown: the server renders the seconds left when it sends; count down from that moment ---

  var ticking = null;

  function tick() {
    var countdown = document.querySelector('.countdown[data-seconds-left]');
    if (!countdown) {
      window.clearInterval(ticking);
      ticking = null;
      return;
    }
    if (countdown.startedAt === undefined) { countdown.startedAt = performance.now(); }
    var total = Number(countdown.dataset.secondsLeft) || 0;
    var left = Math.max(0, total - (performance.now() - countdown.startedAt) / 1000);
    var seconds = countdown.querySelector('.countdown-seconds');
    var bar = countdown.querySelector('progress');
    if (seconds) { seconds.textContent = String(Math.ceil(left)); }
    if (bar) { bar.value = left; }
    countdown.classList.toggle('is-urgent', left <= URGENT_SECONDS);
  }

  function startCountdown() {
    tick();
    if (ticking === null && document.querySelector('.countdown[data-seconds-left]')) {
      ticking = window.setInterval(tick, 250);
    }
  }

  // --- dealt cards: an update re-renders every card; only those that were not on the felt before animate ---

  var cardsBefore = null;
  var FACE_DOWN = 'Face-down card';  // a hidden card's label (tables.templatetags.table_ui.card_face)

  // Each card by its place (dealer or seat, hand, position) -> what it shows; a face-down card turned over
  // counts as dealt.
  function cardsOnTable() {
    var cards = {};
    document.querySelectorAll('#dealer .card, #seats .card').forEach(function (card) {
      var seat = card.closest('[data-seat]');
      var hand = card.closest('.hand');
      var place = seat ? 's' + seat.dataset.seat + ':' + [].indexOf.call(hand.parentNode.children, hand) : 'd';
      var index = [].indexOf.call(card.parentNode.children, card);
      cards[place + ':' + index] = { element: card, label: card.getAttribute('aria-label') };
    });
    return cards;
  }

  function markDealtCards() {
    var now = cardsOnTable();
    var dealt = 0;
    Object.keys(now).forEach(function (key) {
      var before = cardsBefore && cardsBefore[key];
      if (before && before.label === now[key].label) { return; }
      // The server paces the dealer's turn (a `dealer` frame per card): the hole card turns over in place.
      now[key].element.classList.add(before && before.label === FACE_DOWN ? 'is-flipped' : 'is-dealt');
      dealt += 1;
    });
    cardsBefore = null;
    if (dealt) { document.dispatchEvent(new CustomEvent('table:dealt', { detail: { cards: dealt } })); }
  }

  // --- quick reactions: each new line of #emote-log shows for a while at its sender's seats (drawn again
  // after every update, which replaces the seats); the log keeps the last few ---

  var EMOTE_MS = 4000;
  var EMOTES_KEPT = 8;
  var bubbles = {};  // sender's username -> {text, until}

  function drawBubbles() {
    var now = Date.now();
    document.querySelectorAll('#seats .emote-bubble').forEach(function (bubble) { bubble.remove(); });
    document.querySelectorAll('#seats [data-player]').forEach(function (seat) {
      var shown = bubbles[seat.dataset.player];
      if (!shown || shown.until <= now) { return; }
      var bubble = document.createElement('span');
      bubble.className = 'emote-bubble';
      bubble.setAttribute('role', 'status');
      bubble.textContent = shown.text;
      seat.appendChild(bubble);
    });
  }

  function noticeEmotes() {
    var log = document.getElementById('emote-log');
    if (!log) { return; }
    log.querySelectorAll('.emote-line:not(.is-seen)').forEach(function (line) {
      line.classList.add('is-seen');
      line.dataset.until = String(Date.now() + EMOTE_MS);
      bubbles[line.dataset.from] = { text: line.dataset.text, until: Number(line.dataset.until) };
      window.setTimeout(drawBubbles, EMOTE_MS + 50);
    });
    [].slice.call(log.children, EMOTES_KEPT).forEach(function (line) { line.remove(); });
    drawBubbles();
  }

  // --- staff may change the limits between rounds: the bet box (kept across updates) and the header follow ---

  function syncLimits() {
    var status = document.getElementById('table-status');
    var input = document.getElementById('bet-amount');
    if (!status || !status.dataset.minBet) { return; }
    if (input) {
      input.min = status.dataset.minBet;
      input.max = status.dataset.maxBet;
    }
    var limits = document.getElementById('table-limits');
    if (limits) { limits.textContent = status.dataset.limitsText; }
  }

  // --- live updates: keep focus and chat scroll where the player left them ---

  var focusedId = null;
  var focusedInControls = false;

  document.addEventListener('htmx:wsBeforeMessage', function () {
    cardsBefore = cardsOnTable();
    var active = document.activeElement;
    focusedId = active && active !== document.body && active.id ? active.id : null;
    focusedInControls = Boolean(active && active.closest && active.closest('#controls, #seats'));
  });

  // When the turn comes to one of the player's hands, bring it into view if it is not (on a phone the page is
  // taller than the screen, and the decision bar is fixed over its bottom); once per turn of a hand, so a
  // player who scrolls away is left alone. Each hand of a split is a turn of its own, and so is the first
  // hand once split: the turn moves within the seat, where a split hand may sit under the bar.
  var shownTurn = null;
  var reducedMotion = window.matchMedia ? window.matchMedia('(prefers-reduced-motion: reduce)') : null;

  function turnOf(hand) {
    var status = document.getElementById('table-status');
    var hands = [].slice.call(hand.parentNode.children);
    return [status ? status.dataset.round : '', hand.closest('.seat').dataset.seat,
      hands.indexOf(hand), hands.length].join(':');
  }

  function showMyTurn() {
    var hand = document.querySelector('#seats .seat-mine .hand-turn');
    if (!hand) { shownTurn = null; return; }
    var turn = turnOf(hand);
    if (turn === shownTurn) { return; }
    shownTurn = turn;
    // What the sticky status bar (top) and the phone's decision bar (bottom) leave of the screen.
    var status = document.getElementById('table-status');
    var bar = document.querySelector('.decision-bar');
    // Where the sticky status bar's bottom will be once the page scrolls (lower while it is not yet stuck).
    var top = status ? (parseFloat(window.getComputedStyle(status).top) || 0) + status.offsetHeight : 0;
    var bottom = window.innerHeight;
    var fixedBar = bar && bar.classList.contains('is-yours') && window.getComputedStyle(bar).position === 'fixed';
    if (fixedBar) { bottom = bar.getBoundingClientRect().top; }
    var box = hand.getBoundingClientRect();
    var dealer = document.getElementById('dealer');
    var buttons = bar && !fixedBar ? document.getElementById('play-hit') : null;
    var dealerTop = dealer ? dealer.getBoundingClientRect().top : box.top;
    var end = Math.max(box.bottom, buttons ? buttons.getBoundingClientRect().bottom : box.bottom);
    if (dealerTop >= top && end <= bottom) { return; }
    // The dealer's cards, the hand and the buttons under the felt if they fit together; else the dealer and
    // the hand; else the hand alone, centred.
    var shift;
    if (end - dealerTop <= bottom - top) {
      shift = dealerTop - top;
    } else if (box.bottom - dealerTop <= bottom - top) {
      shift = dealerTop - top;
    } else {
      shift = (box.top + box.bottom) / 2 - (top + bottom) / 2;
    }
    // To a place on the page (a smooth scroll still under way would make a relative one fall short).
    window.scrollTo({
      top: window.scrollY + shift,
      behavior: reducedMotion && reducedMotion.matches ? 'auto' : 'smooth',
    });
  }

  // The bar fixed at a phone's bottom (the decisions, or the bet box) is as tall as its content: the page
  // keeps that much room under its end (`--fixed-bar-height`, table.css), so nothing is left under the bar.
  function measureFixedBar() {
    var height = 0;
    [].forEach.call(document.querySelectorAll('.decision-bar.is-yours, .bet-group.is-yours'), function (bar) {
      var style = window.getComputedStyle(bar);
      if (style.position === 'fixed' && style.display !== 'none') {
        height = Math.max(height, bar.getBoundingClientRect().height);
      }
    });
    document.documentElement.style.setProperty('--fixed-bar-height', Math.ceil(height) + 'px');
  }

  window.addEventListener('resize', measureFixedBar);
  document.addEventListener('change', measureFixedBar);  // the hint checkbox shows or hides the hint in the bar
  measureFixedBar();

  // A refusal floats over the page: it goes at the next update, or after a while if none comes, or on a tap.
  var FLASH_MS = 8000;
  var flashTimer = null;

  function clearFlashSoon() {
    var flash = document.getElementById('flash');
    window.clearTimeout(flashTimer);
    if (flash && flash.textContent.trim()) {
      var shown = flash.innerHTML;
      flashTimer = window.setTimeout(function () {
        if (flash.innerHTML === shown) { flash.innerHTML = ''; }
      }, FLASH_MS);
    }
  }

  document.addEventListener('click', function (event) {
    var message = event.target.closest && event.target.closest('#flash .flash-message');
    if (message) { message.remove(); }
  });

  // --- a seat lost without leaving (missed rounds, a lost connection, staff): say why, from the table log ---

  var heldSeats = null;  // the seat numbers the player held at the last update
  var leaving = false;   // the player asked to leave: losing the seats then is no news

  function seatsHeld() {
    return [].map.call(document.querySelectorAll('#seats .seat-mine'), function (seat) { return seat.dataset.seat; });
  }

  function noticeLostSeats() {
    var notice = document.getElementById('seat-notice');
    var held = seatsHeld();
    var lost = (heldSeats || []).filter(function (number) { return held.indexOf(number) === -1; });
    heldSeats = held;
    if (!notice) { return; }
    if (held.length) { notice.hidden = true; }
    if (!lost.length) { return; }
    if (leaving) { leaving = held.length > 0; return; }
    var why = '';
    [].some.call(document.querySelectorAll('#event-log .event-seat'), function (line) {
      var text = line.textContent.replace(/^\s*\S+\s*/, '').trim();  // without its time
      if (text.indexOf((notice.dataset.seat || 'seat') + ' ' + lost[0] + '.') === -1) { return false; }
      why = ' ' + text;
      return true;
    });
    // The words come from the page, in its language (#seat-notice's data-lost and data-again).
    var lostText = (notice.dataset.lost || 'You no longer hold seat {seats}.').replace('{seats}', lost.join(', '));
    notice.querySelector('.seat-notice-text').textContent = lostText + why + ' ' +
      (notice.dataset.again || 'Pick an open seat to play again.');
    notice.hidden = false;
  }

  // A button the server marked with `data-confirm` (leaving on your own turn stands your hand) asks first; it
  // runs before the other click handlers, and a "no" stops the click and the form it would send.
  document.addEventListener('click', function (event) {
    var button = event.target.closest ? event.target.closest('button[data-confirm]') : null;
    if (button && !button.disabled && !window.confirm(button.dataset.confirm)) {
      event.preventDefault();
      event.stopPropagation();
    }
  }, true);

  document.addEventListener('click', function (event) {
    if (!event.target.closest) { return; }
    if (event.target.closest('#play-leave, .leave-seat')) { leaving = true; }
    if (event.target.closest('#seat-notice-ok')) { document.getElementById('seat-notice').hidden = true; }
  });

  // New lines of the event log come on their own (added at its top): keep the newest the server shows.
  function trimLog() {
    var log = document.getElementById('event-log');
    var keep = log ? Number(log.dataset.keep) : 0;
    if (keep) { [].slice.call(log.children, keep).forEach(function (line) { line.remove(); }); }
  }

  document.addEventListener('htmx:wsAfterMessage', function () {
    trimLog();
    if (cardsBefore) { markDealtCards(); }
    if (document.getElementById('round-banner')) {
      document.dispatchEvent(new CustomEvent('table:result'));
    }
    syncLimits();
    startCountdown();
    scrollChat();
    measureFixedBar();
    showMyTurn();
    clearFlashSoon();
    noticeLostSeats();
    noticeEmotes();
    if (!focusedId || (document.activeElement && document.activeElement !== document.body)) { return; }
    var again = document.getElementById(focusedId);
    if (again && !again.disabled && !again.closest('[hidden], .is-hidden')) {
      again.focus({ preventScroll: true });
    } else if (focusedInControls && document.getElementById('controls')) {
      // The control that had focus is gone (e.g. the turn moved on): stay in the controls, not at the top.
      var controls = document.getElementById('controls');
      controls.setAttribute('tabindex', '-1');
      controls.focus({ preventScroll: true });
    }
  });

  function scrollChat() {
    var log = document.getElementById('chat-log');
    if (log) { log.scrollTop = log.scrollHeight; }
  }

  document.addEventListener('htmx:wsAfterSend', function (event) {
    if (event.target && event.target.id === 'form-chat') {
      var input = event.target.querySelector('input[name="text"]');
      if (input) { input.value = ''; }
    }
  });

  // --- keyboard shortcuts: H hit, S stand, D double, P split, R surrender (never while typing) ---

  // Inputs that take no letters (checkboxes, buttons, ...) leave the shortcuts working.
  var TYPED_INPUTS = ['text', 'search', 'email', 'password', 'url', 'tel', 'number'];

  function isTyping(target) {
    if (!target || !target.tagName) { return false; }
    var tag = target.tagName.toLowerCase();
    if (tag === 'input') { return TYPED_INPUTS.indexOf((target.type || 'text').toLowerCase()) !== -1; }
    return tag === 'textarea' || tag === 'select' || target.isContentEditable;
  }

  document.addEventListener('keydown', function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) {
      return;
    }
    var key = event.key ? event.key.toLowerCase() : '';
    if (SHORTCUT_KEYS.indexOf(key) === -1) { return; }
    var button = document.querySelector('#controls button[data-key="' + key + '"]');
    if (button && !button.disabled) {
      event.preventDefault();
      button.click();
    }
  });

  // --- remembered choices (preferences.js: on the account, or in this browser): the hint checkbox ---

  function remember(id, name, key) {
    var box = document.getElementById(id);
    if (!box || !window.tablePreferences) { return; }
    box.checked = window.tablePreferences.get(name, key);
    box.addEventListener('change', function () { window.tablePreferences.set(name, key, box.checked); });
  }

  // --- the strategy chart (a dialog, filled by htmx on first opening) ---

  document.addEventListener('click', function (event) {
    if (!event.target.closest) { return; }
    var opener = event.target.closest('[data-open-dialog]');
    if (opener) {
      var dialog = document.getElementById(opener.dataset.openDialog);
      if (dialog && !dialog.open) { dialog.showModal(); }
    }
    var closer = event.target.closest('[data-close-dialog]');
    if (closer) { closer.closest('dialog').close(); }
  });

  // --- the player's own seed: drawn here, in the browser, after the next shoe's hash is on the page, and sent
  // when sitting down, so that the shoes dealt while seated mix in randomness the server did not choose ---

  function fillSeed() {
    var input = document.getElementById('sit-seed');
    if (!input || input.value || !window.crypto || !window.crypto.getRandomValues) { return; }
    var bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    input.value = Array.prototype.map.call(bytes, function (b) { return (b < 16 ? '0' : '') + b.toString(16); }).join('');
  }

  fillSeed();
  remember('hint-toggle', 'hint', 'table.hint');
  syncLimits();
  startCountdown();
  scrollChat();
  heldSeats = seatsHeld();
})();
