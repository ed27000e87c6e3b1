// The provably fair check, in the browser: recompute a retired shoe from its seeds with SubtleCrypto and
// compare it with the round's cards. The algorithm is the one documented in tables/engine/shoe.py:
//   hash     = SHA-256 of the 32 server-seed bytes (not of the hex text)
//   stream   = HMAC-SHA256(key = seed bytes, message = UTF-8 "<client_seed>:<nonce>:<counter>"), counter 0, 1, ...
//              each 32-byte block read as eight big-endian unsigned 32-bit integers
//   shuffle  = Fisher-Yates from the last card down, j uniform in 0..i by rejection (x < 2^32 - 2^32 mod (i+1))
//   order    = decks x (ranks A23456789TJQK, each in suits s h d c), before shuffling; a Durak deck
//              (data-deck="durak", durak/engine/deck.py) is one deck of ranks 6789TJQKA, each in suits s h d c
//   run out  = a round starting at card S that needs more cards than the shoe has goes on with cards 0..S-1,
//              shuffled the same way with the messages "<client_seed>:<nonce>:discards:<S>:<counter>"
(function () {
  "use strict";
  const RANKS = { standard: "A23456789TJQK", durak: "6789TJQKA" };
  const SUITS = "shdc";
  const encoder = new TextEncoder();

  function hexToBytes(hex) {
    if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error("the server seed must be 64 hexadecimal characters");
    const bytes = new Uint8Array(32);
    for (let i = 0; i < 32; i++) bytes[i] = parseInt(hex.substr(i * 2, 2), 16);
    return bytes;
  }

  function bytesToHex(buffer) {
    return Array.from(new Uint8Array(buffer), function (b) { return b.toString(16).padStart(2, "0"); }).join("");
  }

  function newDeckOrder(decks, kind) {
    const deck = [];
    for (const rank of RANKS[kind]) for (const suit of SUITS) deck.push(rank + suit);
    let cards = [];
    for (let d = 0; d < decks; d++) cards = cards.concat(deck);
    return cards;
  }

  async function seedHash(serverSeed) {
    return bytesToHex(await crypto.subtle.digest("SHA-256", hexToBytes(serverSeed)));
  }

  async function hmacKey(serverSeed) {
    return crypto.subtle.importKey("raw", hexToBytes(serverSeed), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  }

  // Shuffles `cards` in place with the stream of messages "<label>:<counter>".
  async function shuffle(key, label, cards) {
    let counter = 0;
    let block = null;
    let offset = 32;
    async function next() {
      if (offset === 32) {
        block = new DataView(await crypto.subtle.sign("HMAC", key, encoder.encode(label + ":" + counter)));
        counter += 1;
        offset = 0;
      }
      const value = block.getUint32(offset, false);
      offset += 4;
      return value;
    }
    const span = 2 ** 32;
    for (let i = cards.length - 1; i > 0; i--) {
      const m = i + 1;
      const limit = span - (span % m);
      let x = await next();
      while (x >= limit) x = await next();
      const j = x % m;
      const swap = cards[i];
      cards[i] = cards[j];
      cards[j] = swap;
    }
    return cards;
  }

  async function verify(params) {
    const hash = await seedHash(params.serverSeed);
    const key = await hmacKey(params.serverSeed);
    const order = await shuffle(key, params.clientSeed + ":" + params.nonce, newDeckOrder(params.decks, params.deck));
    let cards = order;
    if (params.start > 0 && params.start + params.dealt.length > order.length) {
      // The round ran out of cards: the discards (the shoe before the round's first card) were reshuffled.
      const label = params.clientSeed + ":" + params.nonce + ":discards:" + params.start;
      cards = order.concat(await shuffle(key, label, order.slice(0, params.start)));
    }
    const expected = cards.slice(params.start, params.start + params.dealt.length);
    let mismatch = -1;
    for (let i = 0; i < params.dealt.length; i++) {
      if (params.dealt[i] !== expected[i]) { mismatch = i; break; }
    }
    return { hashOk: hash === params.seedHash, hash: hash, cardsOk: mismatch === -1, mismatch: mismatch,
      expected: expected, dealt: params.dealt, order: order, reshuffled: cards !== order, params: params };
  }

  function line(text, ok) {
    const p = document.createElement("p");
    p.className = ok === undefined ? "verify-info" : ok ? "verify-ok" : "verify-bad";
    p.textContent = (ok === undefined ? "" : ok ? "✓ " : "✗ ") + text;
    return p;
  }

  function report(output, result) {
    output.replaceChildren();
    let pass = true;
    if (result.params.seedHash) {
      pass = result.hashOk;
      output.append(line(
        result.hashOk ? "The server seed's SHA-256 is the published hash." :
          "The server seed's SHA-256 is " + result.hash + ", not the published hash.", result.hashOk));
    } else {
      output.append(line("SHA-256 of the server seed: " + result.hash));
    }
    const unit = result.params.deck === "durak" ? "game" : "round";
    if (result.dealt.length === 0) {
      output.append(line("The shoe, " + result.order.length + " cards in dealing order: " + result.order.join(" ")));
    } else if (result.cardsOk) {
      output.append(line("All " + result.dealt.length + " cards of the " + unit + " are the shoe's cards, in order: " +
        result.expected.join(" ") + (result.reshuffled ? " (the shoe ran out: its discards were reshuffled)." :
          "."), true));
    } else {
      pass = false;
      output.append(line("Card " + (result.mismatch + 1) + " of the " + unit + " is " + result.dealt[result.mismatch] +
        " but the shoe has " + (result.expected[result.mismatch] || "no card") + " there.", false));
    }
    output.dataset.verdict = pass ? "pass" : "fail";
  }

  function paramsFrom(data) {
    return {
      serverSeed: data.serverSeed.trim(),
      clientSeed: data.clientSeed,
      decks: parseInt(data.decks, 10),
      deck: data.deck === "durak" ? "durak" : "standard",
      nonce: parseInt(data.nonce || "0", 10),
      seedHash: (data.seedHash || "").trim().toLowerCase(),
      start: parseInt(data.start || "0", 10),
      dealt: (data.dealt || "").split(/[\s,]+/).filter(Boolean),
    };
  }

  function run(button, output, params) {
    if (!window.crypto || !crypto.subtle) {
      output.replaceChildren(line("This browser offers no SubtleCrypto here (it needs HTTPS).", false));
      output.dataset.verdict = "unavailable";
      return;
    }
    if (!(params.decks >= 1 && params.decks <= 8) || !(params.nonce >= 0) || !(params.start >= 0)) {
      output.replaceChildren(line("Decks must be 1 to 8; the nonce and the position 0 or more.", false));
      output.dataset.verdict = "fail";
      return;
    }
    button.disabled = true;
    verify(params).then(function (result) { report(output, result); }).catch(function (error) {
      output.replaceChildren(line("Could not verify: " + error.message, false));
      output.dataset.verdict = "fail";
    }).finally(function () { button.disabled = false; });
  }

  // A round's page: the panel carries the round's shoe and cards.
  const panel = document.getElementById("verify-panel");
  if (panel) {
    const button = document.getElementById("verify-button");
    const output = document.getElementById("verify-result");
    button.addEventListener("click", function () { run(button, output, paramsFrom(panel.dataset)); });
  }

  // The fairness page: any seeds typed in.
  const form = document.getElementById("verify-form");
  if (form) {
    const output = document.getElementById("verify-result");
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      const values = Object.fromEntries(new FormData(form).entries());
      run(form.querySelector("button[type=submit]"), output, paramsFrom(values));
    });
  }
})();
