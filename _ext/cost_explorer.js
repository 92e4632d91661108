// Chapter 4's cost explorer. It computes nothing: every value comes from
// window.GPTEMBED_COST_GRID (gptembed.explorer.explorer_grid(), written by the
// book's build into _static/cost_explorer_data.js). This script reads the
// controls, looks the setting up in the grid and shows the values.
(function () {
  "use strict";

  function setUp(root, grid) {
    const form = root.querySelector("form");
    const control = (name) => form.elements.namedItem(name);
    const slot = (key) => root.querySelector("#ce-" + key);

    // Show grid.values[index] ([exact, shown]) in the <data> element `key`:
    // the text a reader sees, and the exact value in its value attribute.
    function show(key, index) {
      const [exact, shown] = grid.values[index];
      const element = slot(key);
      element.textContent = shown;
      element.value = Array.isArray(exact) ? exact.join("|") : String(exact);
      return shown;
    }

    function update() {
      const model = Number(control("model").value);
      const length = Number(control("length").value);
      const dtype = Number(control("dtype").value);
      const batch = Number(control("batch").value);
      const mode = Number(form.querySelector("input[name=mode]:checked").value);

      const tokens = grid.lengths[length].label;
      control("length").setAttribute("aria-valuetext", tokens);
      slot("length-shown").textContent = tokens;

      const [positionParams, params, positionShare, share, shareKaplan] =
        grid.by_length[model][length];
      show("position-params", positionParams);
      show("position-share", positionShare);
      show("params", params);
      show("share", share);
      show("share-kaplan", shareKaplan);

      const [weights, kvCache, scoresLayer, scoresAll, kept, holds] =
        grid.by_setting[model][length][dtype][batch][mode];
      show("weights", weights);
      show("kv-cache", kvCache);
      show("scores-layer", scoresLayer);
      show("scores-all", scoresAll);
      const keptShown = show("kept", kept);
      const holdsShown = show("holds", holds);
      root.querySelectorAll(".ce-held").forEach((element) => {
        element.textContent = grid.modes[mode].held;
      });
      slot("note").textContent = grid.modes[mode].note;

      slot("summary").textContent =
        grid.models[model].label + ", " + tokens + ", " +
        grid.dtypes[dtype].label + ", batch " + grid.batch_sizes[batch] +
        ", " + grid.modes[mode].label + ": attention keeps " + keptShown +
        "; accelerators that hold it: " + holdsShown + ".";
    }

    form.addEventListener("input", update);
    form.addEventListener("change", update);
    form.addEventListener("submit", (event) => event.preventDefault());
    update();
  }

  function start() {
    const grid = window.GPTEMBED_COST_GRID;
    document.querySelectorAll("[data-cost-explorer]").forEach((root) => {
      if (grid) {
        setUp(root, grid);
      } else {
        root.querySelector(".cost-explorer__note").textContent =
          "The explorer's data (_static/cost_explorer_data.js) did not load.";
      }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
