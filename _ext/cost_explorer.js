// Chapter 4's cost explorer. Every value it shows is computed here with
// gptembed's formulas, mirrored function for function in exact integers
// (BigInt): models.gpt_parameter_count, attention_cost's bytes and FLOPs, and
// explorer.context_costs, explorer.turning_points and the formats of
// explorer.explorer_values. The controls' choices and the formulas' constants
// come from window.GPTEMBED_COST_DATA (gptembed.explorer.explorer_data(),
// written by the book's build into _static/cost_explorer_data.js). The
// browser tests compare what the page shows with the package at random
// settings; window.gptembedCostExplorer exposes the arithmetic they call.
//
// The setting lives in the page's address (?model=...&n=...), so a link
// shares it, and it is read back on load, on Back and Forward, and when the
// browser restores the form after the reader comes back to the page.
(function () {
  "use strict";

  const big = BigInt;
  const smaller = (a, b) => (a < b ? a : b);

  // ---- gptembed's arithmetic, mirrored ----

  // attention_cost.kv_width: kvHeads heads of the model's head width.
  function kvWidth(model, kvHeads) {
    return big(kvHeads) * big(model.embed_dim / model.n_heads);
  }

  // models.gpt_parameter_count(V, n, d, L, kv_width=k), attention width d.
  function parameters(model, n, kvHeads) {
    const d = big(model.embed_dim);
    const k = kvWidth(model, kvHeads);
    const perBlock = 2n * d * d + 2n * k * d + d + 2n * k + 8n * d * d + 10n * d;
    return big(model.n_layers) * perBlock + 2n * d + (big(model.vocab_size) + n) * d;
  }

  // explorer._layer_windows: [[keys a query meets at most (null: all), layers]].
  function layerWindows(data, model, window, banded) {
    const layers = model.n_layers;
    if (!banded) return [[window, layers]];
    const band = window === null ? data.band : Math.min(data.band, window);
    return [
      [window, layers - Math.floor(layers / 2)],
      [band, Math.floor(layers / 2)],
    ];
  }

  const keysOf = (n, window) => (window === null ? n : smaller(n, big(window)));

  // attention_cost.attention_scores_bytes, over the kinds of layer.
  function scoresBytes(model, n, kinds, batch, size) {
    let total = 0n;
    for (const [window, count] of kinds) {
      total += big(batch * model.n_heads * count * size) * n * keysOf(n, window);
    }
    return total;
  }

  // attention_cost.kv_cache_bytes, over the kinds of layer.
  function kvBytes(model, n, kinds, batch, size, kvHeads) {
    const width = kvWidth(model, kvHeads);
    let total = 0n;
    for (const [window, count] of kinds) {
      total += big(batch) * keysOf(n, window) * 2n * big(count) * width * big(size);
    }
    return total;
  }

  // attention_cost.flops_per_token, over the kinds of layer: its share.
  function attentionShare(model, n, kinds, convention, kvHeads) {
    const d = big(model.embed_dim);
    const blocks = big(model.n_layers) * d * (10n * d + 2n * kvWidth(model, kvHeads));
    const palm = convention === "palm";
    const weights = palm ? 2n * (blocks + big(model.vocab_size) * d) : 2n * blocks;
    let attention = 0n;
    for (const [window, count] of kinds) {
      attention += big(count) * (palm ? 4n : 2n) * keysOf(n, window) * d;
    }
    return Number(attention) / Number(weights + attention);
  }

  // attention_cost.activation_bytes for one layer.
  function activationBytes(data, model, n, batch, size, kvHeads) {
    const perToken =
      big(data.activations.d) * big(model.embed_dim) +
      big(data.activations.k) * kvWidth(model, kvHeads);
    return big(batch * size) * n * perToken;
  }

  // explorer.context_costs. A setting: {model, n, dtype, batch, mode,
  // kvHeads, window, banded}; n a Number, the sizes Numbers.
  function contextCosts(data, setting) {
    const { model, batch, mode, kvHeads } = setting;
    const size = setting.dtype.bytes;
    const n = big(setting.n);
    const kinds = layerWindows(data, model, setting.window, setting.banded);
    const layers = big(model.n_layers);
    let layer;
    let scores;
    if (mode === "eager") {
      layer = big(batch * model.n_heads * size) * n * keysOf(n, kinds[0][0]);
      scores = scoresBytes(model, n, kinds, batch, size);
    } else if (mode === "fused") {
      layer = big(batch * model.n_heads) * n * 4n; // softmax_statistics_bytes
      scores = layers * layer;
    } else {
      layer = 0n;
      scores = 0n;
      for (const [window, count] of kinds) {
        const row = big(batch * model.n_heads * size) * keysOf(n, window);
        if (row > layer) layer = row;
        scores += row * big(count);
      }
    }
    const cache = kvBytes(model, n, kinds, batch, size, kvHeads);
    const params = parameters(model, n, kvHeads);
    let activationsLayer = 0n;
    let logits = 0n;
    let states;
    let kept;
    if (mode === "decode") {
      states = params * big(size);
      kept = cache + layer;
    } else {
      activationsLayer = activationBytes(data, model, n, batch, size, kvHeads);
      logits = n * big(model.vocab_size * batch * size); // logits_bytes
      states = params * big(data.state_bytes_per_parameter);
      kept = scores;
    }
    const total = states + layers * activationsLayer + logits + kept;
    return {
      positionParams: n * big(model.embed_dim),
      params,
      weights: params * big(size),
      scoresLayer: layer,
      scoresAll: scores,
      kvCache: cache,
      activationsLayer,
      activationsAll: layers * activationsLayer,
      logits,
      states,
      kept,
      total,
      share: attentionShare(model, n, kinds, "palm", kvHeads),
      shareKaplan: attentionShare(model, n, kinds, "kaplan", kvHeads),
      holds: data.accelerators.filter((a) => total <= big(a.bytes)).map((a) => a.name),
    };
  }

  // explorer._first_passing and explorer._peak.
  function firstPassing(excess, upTo) {
    let high;
    if (upTo === null) {
      high = 1n;
      while (excess(high) <= 0n) high *= 2n;
    } else {
      high = upTo;
      if (excess(high) <= 0n) return null;
    }
    let low = 0n;
    while (high - low > 1n) {
      const middle = (low + high) / 2n;
      if (excess(middle) > 0n) high = middle;
      else low = middle;
    }
    return high;
  }

  function peak(excess, upTo) {
    let low = 1n;
    let high = upTo;
    while (low < high) {
      const middle = (low + high) / 2n;
      if (excess(middle + 1n) > excess(middle)) low = middle + 1n;
      else high = middle;
    }
    return low;
  }

  // explorer.turning_points: {position, scores, kvCache}, BigInt or null.
  function turningPoints(data, setting) {
    const { model, batch, kvHeads } = setting;
    const kinds = layerWindows(data, model, setting.window, setting.banded);
    const d = big(model.embed_dim);
    const rest = parameters(model, 1n, kvHeads) - d;
    const scoresExcess = (n) => scoresBytes(model, n, kinds, batch, 1) - (rest + n * d);
    const cacheExcess = (n) => kvBytes(model, n, kinds, batch, 1, kvHeads) - (rest + n * d);
    const windows = kinds.filter(([w]) => w !== null).map(([w]) => w);
    const dense = kinds.filter(([w]) => w === null).reduce((sum, [, count]) => sum + count, 0);
    let tail = 0n;
    for (const [w, count] of kinds) if (w !== null) tail += big(w) * big(count);
    tail *= big(batch * model.n_heads);
    const scores = dense || tail > d ? firstPassing(scoresExcess, null) : null;
    let kvCache = null;
    if (2n * big(batch) * kvWidth(model, kvHeads) * big(dense) > d) {
      kvCache = firstPassing(cacheExcess, null);
    } else if (windows.length) {
      kvCache = firstPassing(cacheExcess, peak(cacheExcess, big(Math.max(...windows))));
    }
    return { position: rest / d + 1n, scores, kvCache };
  }

  // ---- the package's formats, mirrored ----

  const groupDigits = (text) => text.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const tokensText = (n) => (n === 1 ? "1 token" : `${groupDigits(String(n))} tokens`);

  // round(Fraction(num, den)): to the nearest integer, ties to even.
  function roundHalfEven(num, den) {
    const quotient = num / den;
    const twice = 2n * (num % den);
    return twice > den || (twice === den && quotient % 2n === 1n) ? quotient + 1n : quotient;
  }

  // scaled / 10**places as a decimal, every place written.
  function decimal(scaled, places) {
    if (places <= 0) return scaled.toString();
    const ten = 10n ** big(places);
    return `${scaled / ten}.${(scaled % ten).toString().padStart(places, "0")}`;
  }

  const trimZeros = (text) => (text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text);

  // measure.format_bytes(n) with 3 significant digits.
  function formatBytes(data, n) {
    const units = data.units;
    let power = 0;
    while (n >= 1024n ** big(power + 1) && power < units.length - 1) power += 1;
    const unit = 1024n ** big(power);
    const places = Math.max(0, 3 - (n / unit).toString().length);
    const scaled = roundHalfEven(n * 10n ** big(places), unit);
    return `${trimZeros(decimal(scaled, places))} ${units[power]}`;
  }

  // A finite double x >= 0 as the exact fraction [num, den] it is.
  function exactFraction(x) {
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, x);
    const bits = view.getBigUint64(0);
    const exponent = Number((bits >> 52n) & 0x7ffn);
    let mantissa = bits & 0xfffffffffffffn;
    let shift = -1074;
    if (exponent !== 0) {
      mantissa |= 1n << 52n;
      shift = exponent - 1075;
    }
    return shift >= 0 ? [mantissa << big(shift), 1n] : [mantissa, 1n << big(-shift)];
  }

  // Python's f"{share:.1%}": 100 * share (a double), rounded exactly to one place.
  function percentOnePlace(share) {
    const [num, den] = exactFraction(100 * share);
    return `${decimal(roundHalfEven(num * 10n, den), 1)}%`;
  }

  // explorer.format_share: numpy's format_float_positional(100 * share,
  // precision=3, fractional=False, trim="-"), exact rounding, ties to even.
  function formatShare(share) {
    const x = 100 * share;
    if (x === 0) return "0%";
    const [num, den] = exactFraction(x);
    const atLeast = (e) =>
      e >= 0 ? num >= 10n ** big(e) * den : num * 10n ** big(-e) >= den; // x >= 10**e
    let first = Math.floor(Math.log10(x)); // 10**first <= x < 10**(first + 1)
    while (!atLeast(first)) first -= 1;
    while (atLeast(first + 1)) first += 1;
    const places = 2 - first;
    if (places >= 0) {
      return `${trimZeros(decimal(roundHalfEven(num * 10n ** big(places), den), places))}%`;
    }
    const unit = 10n ** big(-places);
    return `${roundHalfEven(num, den * unit) * unit}%`;
  }

  // explorer.explorer_values: {slot: [exact as text, shown]}.
  function explorerValues(data, costs) {
    const bytes = (n) => [n.toString(), formatBytes(data, n)];
    return {
      "position-params": [costs.positionParams.toString(), groupDigits(costs.positionParams.toString())],
      params: [costs.params.toString(), groupDigits(costs.params.toString())],
      "position-share": [
        String(Number(costs.positionParams) / Number(costs.params)),
        formatShare(Number(costs.positionParams) / Number(costs.params)),
      ],
      weights: bytes(costs.weights),
      "scores-layer": bytes(costs.scoresLayer),
      "scores-all": bytes(costs.scoresAll),
      "kv-cache": bytes(costs.kvCache),
      "activations-layer": bytes(costs.activationsLayer),
      "activations-all": bytes(costs.activationsAll),
      logits: bytes(costs.logits),
      states: bytes(costs.states),
      kept: bytes(costs.kept),
      total: bytes(costs.total),
      holds: [costs.holds.join("|"), costs.holds.join(", ") || "none"],
      share: [String(costs.share), percentOnePlace(costs.share)],
      "share-kaplan": [String(costs.shareKaplan), percentOnePlace(costs.shareKaplan)],
    };
  }

  // ---- the page ----

  const PARAMS = ["model", "n", "dtype", "batch", "mode", "kv", "window", "banded"];
  const SVG = "http://www.w3.org/2000/svg";

  // The choices of key and value heads for a model: its heads' divisors, most
  // first (the build writes the same for the first model: kv_choices).
  function kvChoices(model) {
    const choices = [];
    for (let g = model.n_heads; g >= 1; g -= 1) {
      if (model.n_heads % g) continue;
      let label = `${g} (grouped-query)`;
      if (g === model.n_heads) label = `${g} (multi-head)`;
      else if (g === 1) label = "1 (multi-query)";
      choices.push([String(g), label]);
    }
    return choices;
  }

  function setUp(root, data) {
    const form = root.querySelector("form");
    const field = (name) => form.elements.namedItem(name);
    const slot = (key) => root.querySelector("#ce-" + key);
    const tokens = field("n");
    const slider = field("power");
    const help = slot("tokens-help");
    const helpText = help.textContent;
    const most = data.max_tokens;
    const section = root.closest("section[id]");
    let shown = null; // the setting the page shows

    const validLength = (n) => Number.isInteger(n) && n >= 1 && n <= most;
    const nearestPower = (n) => Math.min(Math.log2(most), Math.max(0, Math.round(Math.log2(n))));

    function fillKv(model, heads) {
      const select = field("kv");
      const choices = kvChoices(model);
      const same =
        select.options.length === choices.length &&
        choices.every(([value], i) => select.options[i].value === value);
      if (!same) {
        select.replaceChildren(
          ...choices.map(([value, label]) => new Option(label, value)),
        );
      }
      select.value = String(model.n_heads % heads === 0 ? heads : model.n_heads);
    }

    // The setting the controls show (a length not valid yet: the one shown).
    function readSetting() {
      const model = data.models.find((m) => m.key === field("model").value) || data.models[0];
      const typed = tokens.valueAsNumber;
      const kv = Number(field("kv").value);
      const batch = Number(field("batch").value);
      const checked = form.querySelector("input[name=mode]:checked");
      const window = Number(field("window").value);
      return {
        model,
        n: validLength(typed) ? typed : shown ? shown.n : 1,
        dtype: data.dtypes.find((d) => d.key === field("dtype").value) || data.dtypes[0],
        batch: data.batch_sizes.includes(batch) ? batch : data.batch_sizes[0],
        mode: checked ? checked.value : data.modes[0].key,
        kvHeads: Number.isInteger(kv) && kv >= 1 && model.n_heads % kv === 0 ? kv : model.n_heads,
        window: data.windows.includes(window) ? window : null,
        banded: field("banded").checked,
      };
    }

    function writeSetting(setting) {
      field("model").value = setting.model.key;
      fillKv(setting.model, setting.kvHeads);
      tokens.value = String(setting.n);
      slider.value = String(nearestPower(setting.n));
      field("dtype").value = setting.dtype.key;
      field("batch").value = String(setting.batch);
      form.querySelector(`input[name=mode][value="${setting.mode}"]`).checked = true;
      field("window").value = setting.window === null ? "" : String(setting.window);
      field("banded").checked = setting.banded;
    }

    const defaults = readSetting(); // as the build wrote the controls

    // The setting a query string names (its missing or invalid parts: the
    // defaults), or null if it names none.
    function settingFromQuery(search) {
      const query = new URLSearchParams(search);
      if (!PARAMS.some((name) => query.has(name))) return null;
      const setting = { ...defaults };
      const model = data.models.find((m) => m.key === query.get("model"));
      if (model) setting.model = model;
      const n = Number(query.get("n"));
      if (query.has("n") && validLength(n)) setting.n = n;
      const dtype = data.dtypes.find((d) => d.key === query.get("dtype"));
      if (dtype) setting.dtype = dtype;
      const batch = Number(query.get("batch"));
      if (data.batch_sizes.includes(batch)) setting.batch = batch;
      if (data.modes.some((m) => m.key === query.get("mode"))) setting.mode = query.get("mode");
      const kv = Number(query.get("kv"));
      const heads = setting.model.n_heads;
      setting.kvHeads = Number.isInteger(kv) && kv >= 1 && heads % kv === 0 ? kv : heads;
      const window = Number(query.get("window"));
      setting.window = data.windows.includes(window) ? window : null;
      setting.banded = query.get("banded") === "1";
      return setting;
    }

    // The page's query string with this setting in it (other parameters kept).
    function queryOf(setting) {
      const query = new URLSearchParams(location.search);
      PARAMS.forEach((name) => query.delete(name));
      query.set("model", setting.model.key);
      query.set("n", String(setting.n));
      query.set("dtype", setting.dtype.key);
      query.set("batch", String(setting.batch));
      query.set("mode", setting.mode);
      if (setting.kvHeads !== setting.model.n_heads) query.set("kv", String(setting.kvHeads));
      if (setting.window !== null) query.set("window", String(setting.window));
      if (setting.banded) query.set("banded", "1");
      return "?" + query.toString();
    }

    const sameSetting = (a, b) => a !== null && b !== null && queryOf(a) === queryOf(b);

    // ---- showing a setting ----

    function fill(key, [exact, text]) {
      const element = slot(key);
      element.value = exact;
      element.textContent = text;
      return text;
    }

    function describeOptions(setting) {
      const parts = [];
      if (setting.kvHeads !== setting.model.n_heads) {
        parts.push(`${setting.kvHeads} key and value heads`);
      }
      if (setting.window !== null) parts.push(`a window of ${groupDigits(String(setting.window))} tokens`);
      if (setting.banded) parts.push(`banded layers of ${data.band} keys`);
      return parts.length ? ", with " + parts.join(" and ") : "";
    }

    function showTurns(setting, points, costs, eagerScores) {
      const mode = setting.mode;
      const turns = [
        [
          "position",
          points.position,
          "The position table passes the rest of the model's parameters",
          costs.positionParams * 2n > costs.params,
          "the position table has more parameters than the rest of the model",
        ],
        [
          "scores",
          points.scores,
          "Eager attention's scores (all layers) pass the weights",
          eagerScores > costs.weights,
          "eager attention's scores take more memory than the weights" +
            (mode === "eager" ? "" : " (this kind of attention does not store them)"),
        ],
        [
          "kv",
          points.kvCache,
          "The KV cache passes the weights",
          costs.kvCache > costs.weights,
          "the KV cache takes more memory than the weights",
        ],
      ];
      const list = slot("turns");
      list.replaceChildren(
        ...turns.map(([key, at, what, past]) => {
          const item = document.createElement("li");
          item.dataset.turn = key;
          item.dataset.tokens = at === null ? "" : at.toString();
          item.dataset.passed = String(past);
          if (at === null) {
            item.textContent = `${what}: at no length, with this setting.`;
          } else {
            const where = past ? "this length is past it" : "this length is not";
            item.append(`${what} at `);
            const strong = document.createElement("strong");
            strong.textContent = `${groupDigits(at.toString())} tokens`;
            item.append(strong, `: ${where}.`);
          }
          return item;
        }),
      );
      const passed = turns.filter((turn) => turn[3]).map((turn) => turn[4]);
      const text = passed.length
        ? `Past a turning point: ${passed.join("; ")}.`
        : "No turning point passed at this length.";
      if (slot("passed").textContent !== text) slot("passed").textContent = text;
    }

    // The chart: log-log, 1 token to the longest context.
    function drawChart(setting, costs, points) {
      const width = 640;
      const height = 340;
      const left = 78;
      const right = 30;
      const top = 12;
      const bottom = 46;
      const size = big(setting.dtype.bytes);
      const lengths = new Set();
      for (let i = 0; i <= 4 * Math.log2(most); i += 1) lengths.add(Math.round(2 ** (i / 4)));
      for (const w of [setting.window, setting.banded ? data.band : null]) {
        if (w !== null && w <= most) lengths.add(w);
      }
      lengths.add(setting.n);
      const xs = [...lengths].sort((a, b) => a - b);
      const lines = { weights: [], position: [], kv: [], scores: [], activations: [], total: [] };
      const eager = { ...setting, mode: "eager" };
      for (const n of xs) {
        const training = contextCosts(data, { ...eager, n });
        const own = setting.mode === "eager" ? training : contextCosts(data, { ...setting, n });
        lines.weights.push(training.weights);
        lines.position.push(training.positionParams * size);
        lines.kv.push(training.kvCache);
        lines.scores.push(training.scoresAll);
        lines.activations.push(training.activationsAll + training.logits);
        lines.total.push(own.total);
      }
      const memories = [data.accelerators[0], data.accelerators[data.accelerators.length - 1]];
      const logOf = (value) => Math.log2(Number(value));
      const all = Object.values(lines).flat().concat(memories.map((a) => big(a.bytes)));
      const low = Math.floor(Math.min(...all.map(logOf)) / 10) * 10;
      const high = Math.ceil(Math.max(...all.map(logOf)) / 10) * 10;
      const plotWidth = width - left - right;
      const plotHeight = height - top - bottom;
      const x = (n) => left + (Math.log2(n) / Math.log2(most)) * plotWidth;
      const y = (log) => top + ((high - log) / (high - low)) * plotHeight;
      const parts = [];
      const add = (tag, attributes, text) => {
        const element = document.createElementNS(SVG, tag);
        for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
        if (text !== undefined) element.textContent = text;
        parts.push(element);
        return element;
      };
      for (let log = low; log <= high; log += 10) {
        add("line", { class: "ce-grid", x1: left, x2: width - right, y1: y(log), y2: y(log) });
        const unit = data.units[Math.min(log / 10, data.units.length - 1)];
        const count = 2 ** (log - 10 * Math.min(log / 10, data.units.length - 1));
        add("text", { class: "ce-tick ce-tick--y", x: left - 6, y: y(log) + 4 }, `${groupDigits(String(count))} ${unit}`);
      }
      for (let power = 0; power <= Math.log2(most); power += 4) {
        const n = 2 ** power;
        add("line", { class: "ce-grid", x1: x(n), x2: x(n), y1: top, y2: top + plotHeight });
        add("text", { class: "ce-tick ce-tick--x", x: x(n), y: top + plotHeight + 16 }, groupDigits(String(n)));
      }
      add("text", { class: "ce-axis", x: left + plotWidth / 2, y: height - 8 }, "context length in tokens (log scale)");
      add(
        "text",
        { class: "ce-axis", x: 14, y: top + plotHeight / 2, transform: `rotate(-90 14 ${top + plotHeight / 2})` },
        "memory (log scale)",
      );
      for (const memory of memories) {
        const at = y(logOf(big(memory.bytes)));
        add("line", { class: "ce-line ce-line--accelerator", x1: left, x2: width - right, y1: at, y2: at });
      }
      for (const [key, values] of Object.entries(lines)) {
        const path = values
          .map((value, i) => `${i ? "L" : "M"}${x(xs[i]).toFixed(1)},${y(logOf(value)).toFixed(1)}`)
          .join(" ");
        add("path", { class: `ce-line ce-line--${key}`, d: path, "data-line": key });
      }
      const at = xs.indexOf(setting.n);
      add("line", {
        class: "ce-marker",
        x1: x(setting.n),
        x2: x(setting.n),
        y1: top,
        y2: top + plotHeight,
        "data-tokens": String(setting.n),
      });
      for (const [key, values] of Object.entries(lines)) {
        add("circle", { class: `ce-dot ce-dot--${key}`, cx: x(setting.n), cy: y(logOf(values[at])), r: 3.5 });
      }
      slot("chart").replaceChildren(...parts);

      const mode = data.modes.find((m) => m.key === setting.mode);
      const say = (value) => formatBytes(data, value);
      const turns = [];
      if (points.scores !== null) turns.push(`eager attention's scores pass the weights at ${groupDigits(points.scores.toString())} tokens`);
      if (points.kvCache !== null) turns.push(`the KV cache passes them at ${groupDigits(points.kvCache.toString())}`);
      turns.push(`the position table passes the rest of the model at ${groupDigits(points.position.toString())}`);
      slot("chart-caption").textContent =
        `Memory against context length, both axes logarithmic, from 1 to ${groupDigits(String(most))} tokens: ` +
        `${setting.model.label}, ${setting.dtype.label}, batch ${setting.batch}, ${mode.label}${describeOptions(setting)}. ` +
        `At ${tokensText(setting.n)} (the vertical line) the weights take ${say(lines.weights[at])}, ` +
        `the position table ${say(lines.position[at])}, the KV cache ${say(lines.kv[at])}, ` +
        `eager attention's scores ${say(lines.scores[at])} and a training step's activations and logits ` +
        `${say(lines.activations[at])}; the step keeps ${say(costs.total)} in all, ` +
        (costs.holds.length ? `which a ${costs.holds[0]} holds. ` : "which none of the accelerators holds. ") +
        `${turns.join("; ")}.`.replace(/^./, (c) => c.toUpperCase());
    }

    function show(setting, toAddress) {
      shown = setting;
      const costs = contextCosts(data, setting);
      const values = explorerValues(data, costs);
      for (const [key, value] of Object.entries(values)) fill(key, value);
      const mode = data.modes.find((m) => m.key === setting.mode);
      const length = tokensText(setting.n);
      slider.setAttribute("aria-valuetext", length);
      slot("length-shown").textContent = length;
      root.querySelectorAll(".ce-held").forEach((element) => {
        element.textContent = mode.held;
      });
      const states = root.querySelector(".ce-states-heading");
      states.dataset.training = states.dataset.training || states.textContent;
      states.textContent = setting.mode === "decode" ? states.dataset.decode : states.dataset.training;
      slot("note").textContent = mode.note;
      const points = turningPoints(data, setting);
      const eagerScores = contextCosts(data, { ...setting, mode: "eager" }).scoresAll;
      showTurns(setting, points, costs, eagerScores);
      drawChart(setting, costs, points);
      const query = queryOf(setting);
      slot("link").href = query + (section ? "#" + section.id : "");
      slot("summary").textContent =
        `${setting.model.label}, ${length}, ${setting.dtype.label}, batch ${setting.batch}, ` +
        `${mode.label}${describeOptions(setting)}: the step keeps ${values.total[1]} ` +
        `(attention keeps ${values.kept[1]}); accelerators that hold it: ${values.holds[1]}.`;
      if (toAddress && query !== location.search) {
        history.replaceState(history.state, "", query + location.hash);
      }
    }

    function markLength(valid) {
      tokens.setAttribute("aria-invalid", String(!valid));
      help.textContent = valid
        ? helpText
        : `Type a whole number from 1 to ${groupDigits(String(most))}: the explorer shows ` +
          `${groupDigits(String(shown.n))} tokens until then.`;
    }

    function onControl(event, committed) {
      const target = event.target;
      if (target === slider) {
        tokens.value = String(2 ** Number(slider.value));
      } else if (target === tokens) {
        const typed = tokens.valueAsNumber;
        if (!validLength(typed)) {
          if (!committed) {
            markLength(false);
            return;
          }
          // Committed (Enter, or the focus left): the nearest length the explorer takes.
          tokens.value = String(
            Number.isNaN(typed) ? shown.n : Math.min(most, Math.max(1, Math.round(typed))),
          );
        }
        slider.value = String(nearestPower(tokens.valueAsNumber));
      } else if (target === field("model")) {
        // Multi-head attention stays multi-head; a number of groups stays if it can.
        const model = data.models.find((m) => m.key === target.value);
        const kv = Number(field("kv").value);
        if (model) fillKv(model, kv === shown.model.n_heads ? model.n_heads : kv);
      }
      markLength(true);
      show(readSetting(), true);
    }

    // What the controls show now: after the browser restored the form (Back,
    // Forward, reload), which fires no event.
    function fromControls() {
      const setting = readSetting();
      fillKv(setting.model, setting.kvHeads);
      tokens.value = String(setting.n);
      slider.value = String(nearestPower(setting.n));
      markLength(true);
      if (!sameSetting(setting, shown)) show(readSetting(), true);
    }

    // What the address names, when it changes in the page (Back or Forward
    // between entries of this page).
    function fromAddress() {
      const setting = settingFromQuery(location.search) || defaults;
      if (!sameSetting(setting, shown)) {
        writeSetting(setting);
        markLength(true);
        show(readSetting(), false);
      }
    }

    form.addEventListener("input", (event) => onControl(event, false));
    form.addEventListener("change", (event) => onControl(event, true));
    form.addEventListener("submit", (event) => event.preventDefault());
    window.addEventListener("pageshow", fromControls);
    window.addEventListener("popstate", fromAddress);
    window.addEventListener("hashchange", fromAddress);

    const named = settingFromQuery(location.search);
    if (named) writeSetting(named);
    show(readSetting(), false);
  }

  window.gptembedCostExplorer = {
    contextCosts,
    turningPoints,
    explorerValues,
    formatBytes,
    formatShare,
    percentOnePlace,
  };

  function start() {
    const data = window.GPTEMBED_COST_DATA;
    document.querySelectorAll("[data-cost-explorer]").forEach((root) => {
      if (data) {
        setUp(root, data);
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
