// Step through a round's replay: every step is already on the page (readable without JavaScript); this shows
// one at a time with Start / Back / Forward / End buttons and the arrow keys.
(function () {
  "use strict";
  const root = document.getElementById("replay");
  if (!root) return;
  const steps = Array.from(root.querySelectorAll(".replay-step"));
  const controls = root.querySelector(".replay-controls");
  const position = root.querySelector(".replay-position");
  if (steps.length < 2 || !controls) return;
  let current = steps.length - 1;

  function show(index) {
    current = Math.max(0, Math.min(steps.length - 1, index));
    steps.forEach(function (step, i) { step.hidden = i !== current; });
    // The words come from the page, in its language: "Step {step} of {steps}".
    position.textContent = (position.dataset.text || "Step {step} of {steps}")
      .replace("{step}", String(current + 1)).replace("{steps}", String(steps.length));
    controls.querySelector('[data-replay="first"]').disabled = current === 0;
    controls.querySelector('[data-replay="prev"]').disabled = current === 0;
    controls.querySelector('[data-replay="next"]').disabled = current === steps.length - 1;
    controls.querySelector('[data-replay="last"]').disabled = current === steps.length - 1;
    root.dataset.step = String(current);
  }

  const moves = {
    first: function () { show(0); },
    prev: function () { show(current - 1); },
    next: function () { show(current + 1); },
    last: function () { show(steps.length - 1); },
  };
  controls.addEventListener("click", function (event) {
    const button = event.target.closest("[data-replay]");
    if (button && moves[button.dataset.replay]) moves[button.dataset.replay]();
  });
  root.addEventListener("keydown", function (event) {
    if (event.key === "ArrowLeft") { moves.prev(); event.preventDefault(); }
    if (event.key === "ArrowRight") { moves.next(); event.preventDefault(); }
  });
  root.classList.add("is-stepping");
  controls.hidden = false;
  show(0);
})();
