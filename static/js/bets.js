/*
 * The bet box of the table page. The server renders the box and decides every bet; this file only fills the
 * amount: the first chip of a betting window replaces the amount shown (the last bet or the minimum), later
 * chips add; Undo takes the last chip back; Rebet and 2x rebet bet the last amount again (or twice it); with
 * auto-rebet on, the last amount is bet by itself when a new betting window opens. The last bet is remembered
 * in this browser (localStorage), per table; the auto-rebet choice with the other preferences
 * (preferences.js).
 */
(function () {
  'use strict';

  var page = document.querySelector('[data-table-id]');
  if (!page) { return; }
  var LAST_BET_KEY = 'table.' + page.dataset.tableId + '.lastBet';
  var AUTO_REBET_KEY = 'table.autoRebet';

  var fresh = true;      // no chip or key touched the amount since this betting window opened
  var undo = [];         // the amount (and freshness) before each chip of this window
  var bettingRound = null;
  var autoBetRound = null;

  function input() { return document.getElementById('bet-amount'); }

  function stored(key) {
    try { return window.localStorage.getItem(key); } catch (error) { return null; }
  }

  function store(key, value) {
    try { window.localStorage.setItem(key, value); } catch (error) { /* private mode: not remembered */ }
  }

  function limits(box) {
    return { min: Number(box.min) || 1, max: Number(box.max) || Infinity };
  }

  function clamp(box, amount) {
    var range = limits(box);
    return Math.max(range.min, Math.min(range.max, amount));
  }

  function lastBet() {
    var amount = Number(stored(LAST_BET_KEY));
    return amount > 0 ? amount : null;
  }

  function setAmount(box, amount) {
    box.value = amount === '' ? '' : String(amount);
    fresh = false;
  }

  // The Bet button of the first of the player's seats that may bet now.
  function betButton() {
    return document.querySelector('#controls button[form="form-bet"][name="seat"]:not([disabled])');
  }

  function betAgain(factor) {
    var box = input();
    var last = lastBet();
    var button = betButton();
    if (!box || !last || !button) { return; }
    setAmount(box, clamp(box, last * factor));
    button.click();
  }

  document.addEventListener('click', function (event) {
    var target = event.target.closest ? event.target.closest('[data-chip], [data-bet-set]') : null;
    var box = input();
    if (!target || !box) { return; }
    var range = limits(box);
    var action = target.dataset.betSet;
    if (target.dataset.chip) {
      var current = fresh ? 0 : Number(box.value) || 0;
      undo.push({ value: box.value, fresh: fresh });
      setAmount(box, Math.min(range.max, current + Number(target.dataset.chip)));
    } else if (action === 'min' || action === 'max') {
      undo = [];
      setAmount(box, action === 'min' ? range.min : range.max);
    } else if (action === 'clear') {
      undo = [];
      setAmount(box, '');
      box.focus();
    } else if (action === 'undo' && undo.length) {
      var before = undo.pop();
      box.value = before.value;
      fresh = before.fresh;
    } else if (action === 'rebet') {
      betAgain(1);
    } else if (action === 'double-rebet') {
      betAgain(2);
    }
  });

  document.addEventListener('input', function (event) {
    if (event.target === input()) { fresh = false; undo = []; }
  });

  document.addEventListener('htmx:wsAfterSend', function (event) {
    var box = input();
    if (event.target && event.target.id === 'form-bet' && box && Number(box.value) > 0) {
      store(LAST_BET_KEY, box.value);
    }
  });

  // A new betting window: the next chip starts a new amount; with auto-rebet on, bet the last amount.
  function onUpdate() {
    var status = document.getElementById('table-status');
    if (!status) { return; }
    var betting = status.dataset.phase === 'betting' || status.dataset.phase === 'waiting';
    var round = status.dataset.round || '0';
    if (betting && bettingRound !== round) {
      bettingRound = round;
      fresh = true;
      undo = [];
    }
    document.querySelectorAll('[data-bet-set="rebet"], [data-bet-set="double-rebet"]').forEach(function (button) {
      button.disabled = !lastBet() || !betButton();
    });
    var auto = document.getElementById('auto-rebet');
    if (betting && auto && auto.checked && autoBetRound !== round && betButton() && lastBet()) {
      autoBetRound = round;
      betAgain(1);
    }
  }

  document.addEventListener('htmx:wsAfterMessage', onUpdate);

  var auto = document.getElementById('auto-rebet');
  if (auto) {
    auto.checked = window.tablePreferences.get('auto_rebet', AUTO_REBET_KEY);
    auto.addEventListener('change', function () {
      window.tablePreferences.set('auto_rebet', AUTO_REBET_KEY, auto.checked);
      onUpdate();
    });
  }

  // The box starts at the player's last bet at this table, when it is within the limits.
  var box = input();
  var last = lastBet();
  if (box && last && last >= limits(box).min && last <= limits(box).max) { box.value = String(last); }
  onUpdate();
})();
