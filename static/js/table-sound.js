/*
 * Sounds of the table, made here with WebAudio oscillators (no audio files): a tick when cards are dealt, two
 * rising notes when the turn comes to the player, a rising chord for a won round and a falling one for a lost
 * round (once the dealer's reveal is over). Off until the player turns them on with the Sound button; the
 * choice is remembered (preferences.js).
 * On phones that can, the player's turn also vibrates (sound on or off).
 */
(function () {
  'use strict';

  var SOUND_KEY = 'table.sound';
  var toggle = document.getElementById('sound-toggle');
  var audio = null;
  var on = window.tablePreferences ? window.tablePreferences.get('sound', SOUND_KEY) : false;

  function show() {
    if (!toggle) { return; }
    toggle.setAttribute('aria-pressed', on ? 'true' : 'false');
    toggle.textContent = on ? (toggle.dataset.on || 'Sound on') : (toggle.dataset.off || 'Sound off');
  }

  function context() {
    var Audio = window.AudioContext || window.webkitAudioContext;
    if (!audio && Audio) { audio = new Audio(); }
    if (audio && audio.state === 'suspended') { audio.resume(); }
    return audio;
  }

  // notes: [frequency Hz, start s, length s]; a soft attack and decay so nothing clicks.
  function play(notes, type) {
    if (!on) { return; }
    var ctx = context();
    if (!ctx) { return; }
    notes.forEach(function (note) {
      var oscillator = ctx.createOscillator();
      var gain = ctx.createGain();
      var start = ctx.currentTime + note[1];
      oscillator.type = type || 'sine';
      oscillator.frequency.value = note[0];
      gain.gain.setValueAtTime(0.0001, start);
      gain.gain.exponentialRampToValueAtTime(0.18, start + 0.015);
      gain.gain.exponentialRampToValueAtTime(0.0001, start + note[2]);
      oscillator.connect(gain).connect(ctx.destination);
      oscillator.start(start);
      oscillator.stop(start + note[2] + 0.02);
    });
  }

  var SOUNDS = {
    deal: function () { play([[1400, 0, 0.05]], 'triangle'); },
    turn: function () { play([[660, 0, 0.14], [880, 0.12, 0.2]]); },
    win: function () { play([[523, 0, 0.16], [659, 0.1, 0.16], [784, 0.2, 0.3]]); },
    lose: function () { play([[392, 0, 0.2], [311, 0.16, 0.32]], 'triangle'); },
  };

  if (toggle) {
    show();
    toggle.addEventListener('click', function () {
      on = !on;
      if (window.tablePreferences) { window.tablePreferences.set('sound', SOUND_KEY, on); }
      show();
      if (on) { context(); }
    });
  }

  document.addEventListener('table:dealt', function () { SOUNDS.deal(); });

  // The turn and the round's result, each once when it appears.
  var myTurn = Boolean(document.querySelector('#seats .seat-mine .hand-turn'));
  var outcome = document.getElementById('round-banner');
  var shownOutcome = outcome ? outcome.dataset.round : null;

  document.addEventListener('htmx:wsAfterMessage', function () {
    var turn = Boolean(document.querySelector('#seats .seat-mine .hand-turn'));
    if (turn && !myTurn) {
      SOUNDS.turn();
      if (navigator.vibrate) { navigator.vibrate(150); }
    }
    myTurn = turn;
  });

  // table.js says when the result shows (the settled round's banner, after the dealer's frames).
  document.addEventListener('table:result', function () {
    var banner = document.getElementById('round-banner');
    if (banner && banner.dataset.round !== shownOutcome) {
      var tone = banner.dataset.tone;
      if (tone === 'good') { SOUNDS.win(); } else if (tone === 'bad') { SOUNDS.lose(); }
    }
    shownOutcome = banner ? banner.dataset.round : null;
  });
})();
