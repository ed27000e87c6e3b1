/*
 * The table page's remembered choices (the hint checkbox, auto-rebet, sound). A logged-in player's are kept
 * on their account, so they follow them to another browser: the page is rendered with them (#preferences)
 * and each change is sent to the server (accounts.preferences). A visitor's stay in this browser
 * (localStorage). table.js, bets.js and table-sound.js read and write them through window.tablePreferences.
 */
(function () {
  'use strict';

  var data = document.getElementById('preferences');
  var endpoint = document.getElementById('preferences-endpoint');
  var account = null;
  if (data && endpoint) {
    try { account = JSON.parse(data.textContent); } catch (error) { account = null; }
  }

  function local(key) {
    try { return window.localStorage.getItem(key) === '1'; } catch (error) { return false; }
  }

  window.tablePreferences = {
    // name: the account's preference; key: where a visitor's browser keeps it.
    get: function (name, key) { return account ? account[name] === true : local(key); },
    set: function (name, key, value) {
      if (!account) {
        try { window.localStorage.setItem(key, value ? '1' : '0'); } catch (error) { /* private mode */ }
        return;
      }
      account[name] = Boolean(value);
      var change = {};
      change[name] = Boolean(value);
      window.fetch(endpoint.dataset.url, {
        method: 'POST',
        credentials: 'same-origin',
        keepalive: true,
        headers: { 'Content-Type': 'application/json', 'X-CSRFToken': endpoint.dataset.csrf },
        body: JSON.stringify(change),
      }).catch(function () { /* offline: kept for this page only */ });
    },
  };
})();
