// The small GPT, live in the page. The model's forward pass runs here on the
// stored weights (float32 in Float32Array; the scheme models' float16 decoded
// exactly) in float64 arithmetic, mirrored function for function from the
// package: gpt._forward (embedding, pre-LayerNorm blocks, tied head),
// _transformer's layer_norm, gelu, Window (blocked, key_distance) and attend
// (scores, the sinks' rotary queries, ALiBi's bias, masked_softmax),
// positions.rotate, alibi_slopes and sinusoidal_table, gpt.at_length and
// GPTStyleEmbedding.extended (fresh rows as the build exported them; tile and
// interpolate computed here), optim.losses_of_logits. The weights come from
// window.GPTEMBED_PLAYGROUND_DATA (_ext/gpt_playground.py's playground_data(),
// written by the book's build into _static/gpt_playground_data.js). The
// browser tests (tests/book/test_playground_in_browser.py) hold every value
// shown to gptembed.gpt's at random settings; window.gptembedPlayground
// exposes the computation they call.
//
// The setting lives in the page's address (?model=...&start=...), so a link
// shares it; it is read back on load and on Back and Forward (a committed
// change adds a history entry, typing replaces the current one).
(function () {
  "use strict";

  const DATA = window.GPTEMBED_PLAYGROUND_DATA;
  const LN_EPS = 1e-5;
  const GELU_C = Math.sqrt(2 / Math.PI);
  const INIT_STD = 0.02;
  const CHAR_ID = new Map(DATA.alphabet.map((ch, i) => [ch, i]));

  // ---- the weights ----

  function bytes(base64) {
    const text = atob(base64);
    const out = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
    return out.buffer;
  }

  function halfToFloat(h) {
    const sign = h & 0x8000 ? -1 : 1;
    const exponent = (h >> 10) & 0x1f;
    const fraction = h & 0x3ff;
    if (exponent === 0) return sign * fraction * 2 ** -24;
    if (exponent === 31) return fraction ? NaN : sign * Infinity;
    return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
  }

  function floats(base64, stored) {
    if (stored === "f4") return new Float32Array(bytes(base64));
    const halves = new Uint16Array(bytes(base64));
    const out = new Float32Array(halves.length);
    for (let i = 0; i < halves.length; i++) out[i] = halfToFloat(halves[i]);
    return out;
  }

  const models = {};

  // The model of key ``key``: its sizes and its arrays by name, unpacked once.
  function model(key) {
    if (models[key]) return models[key];
    const entry = DATA.models[key];
    const all = floats(entry.weights, entry.stored);
    const arrays = {};
    let at = 0;
    for (const [name, shape] of Object.entries(entry.shapes)) {
      const size = shape.reduce((a, b) => a * b, 1);
      arrays[name] = all.subarray(at, at + size);
      at += size;
    }
    // each block's matrices (layers, K, N) transposed to (layers, N, K), in float64: the
    // products below are then dot products of two rows (three times as fast as summing
    // into a row of outputs), and the weights are the stored values exactly
    const transposed = {};
    for (const name of ["w_attn", "w_attn_proj", "w_fc", "w_mlp_proj"]) {
      const [layers, k, n] = entry.shapes[name];
      const from = arrays[name];
      const to = new Float64Array(from.length);
      for (let l = 0; l < layers; l++) {
        for (let j = 0; j < k; j++) {
          for (let c = 0; c < n; c++) to[l * k * n + c * k + j] = from[l * k * n + j * n + c];
        }
      }
      transposed[name] = to;
    }
    transposed.token_embeddings = Float64Array.from(arrays.token_embeddings); // the tied head
    const fresh = {};
    for (const [seed, rows] of Object.entries(entry.fresh || {})) fresh[seed] = floats(rows, "f4");
    models[key] = { ...entry, arrays, transposed, fresh };
    return models[key];
  }

  // ---- the package's operations, mirrored ----

  // Activations are float64: with float32 ones a loss came out 1.3e-5 from the package's
  // float64 value (the weights are the stored float32 values, exactly).
  const Act = Float64Array;

  // gpt.at_length(model, rows, method, seed=seed)'s position table, (rows, D).
  function positionTable(m, rows, method, seed) {
    const d = m.embed_dim;
    const old = m.arrays.position_embeddings;
    const have = m.seq_len;
    if (rows <= have) return old;
    const table = new Act(rows * d);
    if (m.scheme === "sinusoidal") {
      // INIT_STD * positions.sinusoidal_table(rows, D), the whole table anew
      for (let i = 0; i < d; i += 2) {
        const frequency = Math.pow(10000, -i / d);
        for (let t = 0; t < rows; t++) {
          const angle = t * frequency;
          table[t * d + i] = INIT_STD * Math.sin(angle);
          table[t * d + i + 1] = INIT_STD * Math.cos(angle);
        }
      }
    } else if (m.scheme !== "learned") {
      // rotary, alibi, none: zeros
    } else if (method === "fresh") {
      table.set(old);
      table.set(m.fresh[String(seed)].subarray(0, (rows - have) * d), have * d);
    } else if (method === "tile") {
      for (let t = 0; t < rows; t++) table.set(old.subarray((t % have) * d, (t % have + 1) * d), t * d);
    } else {
      // interpolate: np.linspace(0, L - 1, rows), then linear between the two nearest rows
      const step = (have - 1) / (rows - 1);
      for (let t = 0; t < rows; t++) {
        const where = t === rows - 1 ? have - 1 : t * step;
        const left = Math.min(Math.max(Math.floor(where), 0), Math.max(have - 2, 0));
        const right = Math.min(left + 1, have - 1);
        const frac = where - left;
        for (let c = 0; c < d; c++) {
          table[t * d + c] = (1 - frac) * old[left * d + c] + frac * old[right * d + c];
        }
      }
    }
    return table;
  }

  // positions.alibi_slopes
  function alibiSlopes(n) {
    const powerOfTwo = (k) => Array.from({ length: k }, (_, i) => Math.pow(2 ** (-8 / k), i + 1));
    let below = 1;
    while (below * 2 <= n) below *= 2;
    const slopes = powerOfTwo(below);
    if (below < n) slopes.push(...alibiSlopes(2 * below).filter((_, i) => i % 2 === 0).slice(0, n - below));
    return slopes;
  }

  // a[i .. i + k) . b[j .. j + k), k a multiple of 4, in four running sums
  function dot(a, i, b, j, k) {
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    for (let c = 0; c < k; c += 4) {
      s0 += a[i + c] * b[j + c];
      s1 += a[i + c + 1] * b[j + c + 1];
      s2 += a[i + c + 2] * b[j + c + 2];
      s3 += a[i + c + 3] * b[j + c + 3];
    }
    return s0 + s1 + (s2 + s3);
  }

  // out (rows, n) = a (rows, k) @ w (k, n) [+ bias], given w transposed, wT (n, k)
  function linear(a, rows, k, wT, n, bias) {
    const out = new Act(rows * n);
    for (let i = 0; i < rows; i++) {
      const row = i * k;
      for (let c = 0; c < n; c++) {
        const col = c * k;
        out[i * n + c] = dot(a, row, wT, col, k) + (bias ? bias[c] : 0);
      }
    }
    return out;
  }

  // _transformer.layer_norm over rows of width d
  function layerNorm(x, rows, d, gain, bias) {
    const out = new Act(rows * d);
    for (let i = 0; i < rows; i++) {
      let mean = 0;
      for (let c = 0; c < d; c++) mean += x[i * d + c];
      mean /= d;
      let variance = 0;
      for (let c = 0; c < d; c++) variance += (x[i * d + c] - mean) ** 2;
      const rstd = 1 / Math.sqrt(variance / d + LN_EPS);
      for (let c = 0; c < d; c++) out[i * d + c] = (x[i * d + c] - mean) * rstd * gain[c] + bias[c];
    }
    return out;
  }

  // positions.rotate of one head's (T, H) rows at ``positions``
  function rotate(a, rows, h, positions, base) {
    const out = new Act(rows * h);
    for (let i = 0; i < h; i += 2) {
      const frequency = Math.pow(base, -i / h);
      for (let t = 0; t < rows; t++) {
        const angle = positions[t] * frequency;
        const sin = Math.sin(angle);
        const cos = Math.cos(angle);
        const even = a[t * h + i];
        const odd = a[t * h + i + 1];
        out[t * h + i] = even * cos - odd * sin;
        out[t * h + i + 1] = even * sin + odd * cos;
      }
    }
    return out;
  }

  // One block's heads (attend), on LayerNorm_1's output h1 (T, D): [probs per head, heads (T, D)]
  function attention(m, layer, h1, t, positions, window) {
    const d = m.embed_dim;
    const nh = m.n_heads;
    const hd = d / nh;
    const a = m.arrays;
    const qkv = linear(h1, t, d, m.transposed.w_attn.subarray(layer * d * 3 * d), 3 * d, a.b_attn.subarray(layer * 3 * d));
    const heads = new Act(t * d);
    const allProbs = [];
    const slopes = m.scheme === "alibi" ? alibiSlopes(nh) : null;
    const scale = 1 / Math.sqrt(hd);
    const cacheEnd = window.size === null ? 0 : window.sinks + window.size - 1;
    for (let h = 0; h < nh; h++) {
      let q = new Act(t * hd);
      let k = new Act(t * hd);
      const v = new Act(t * hd);
      for (let i = 0; i < t; i++) {
        for (let c = 0; c < hd; c++) {
          q[i * hd + c] = qkv[i * 3 * d + h * hd + c];
          k[i * hd + c] = qkv[i * 3 * d + d + h * hd + c];
          v[i * hd + c] = qkv[i * 3 * d + 2 * d + h * hd + c];
        }
      }
      let qSinks = null;
      if (m.scheme === "rotary") {
        if (window.size !== null && window.sinks) {
          qSinks = rotate(q, t, hd, positions.map((p) => Math.min(p, cacheEnd)), m.rotary_base);
        }
        q = rotate(q, t, hd, positions, m.rotary_base);
        k = rotate(k, t, hd, positions, m.rotary_base);
      }
      const probs = new Act(t * t);
      const scores = new Float64Array(t);
      const out = new Float64Array(hd);
      for (let i = 0; i < t; i++) {
        // the keys query i sees (Window.blocked): the sinks before its window, then the window
        const first = window.size === null ? 0 : Math.max(0, i - window.size + 1);
        const sinkEnd = Math.min(window.sinks, first);
        const keys = new Int32Array(sinkEnd + i - first + 1);
        for (let j = 0; j < sinkEnd; j++) keys[j] = j;
        for (let j = first; j <= i; j++) keys[sinkEnd + j - first] = j;
        let most = -Infinity;
        for (let at = 0; at < keys.length; at++) {
          const j = keys[at];
          const from = qSinks !== null && j < window.sinks ? qSinks : q;
          let s = dot(from, i * hd, k, j * hd, hd) * scale;
          if (slopes) {
            let distance = positions[i] - positions[j];
            if (window.size !== null && window.sinks && j < window.sinks) {
              distance = Math.min(positions[i] - positions[0], cacheEnd) - j;
            }
            s -= slopes[h] * distance;
          }
          scores[j] = s;
          if (s > most) most = s;
        }
        let sum = 0;
        for (let at = 0; at < keys.length; at++) {
          const j = keys[at];
          scores[j] = Math.exp(scores[j] - most);
          sum += scores[j];
        }
        out.fill(0);
        for (let at = 0; at < keys.length; at++) {
          const j = keys[at];
          const p = scores[j] / sum;
          probs[i * t + j] = p;
          for (let c = 0; c < hd; c++) out[c] += p * v[j * hd + c];
        }
        heads.set(out, i * d + h * hd);
      }
      allProbs.push(probs);
    }
    const out = linear(heads, t, d, m.transposed.w_attn_proj.subarray(layer * d * d), d, a.b_attn_proj.subarray(layer * d));
    return [allProbs, out];
  }

  // gpt._forward of one sequence: {logits (T, V), probs[layer][head] (T, T)}
  function forward(m, ids, positions, table, window) {
    const d = m.embed_dim;
    const t = ids.length;
    const a = m.arrays;
    const wte = a.token_embeddings;
    const vocab = wte.length / d;
    let x = new Act(t * d);
    for (let i = 0; i < t; i++) {
      for (let c = 0; c < d; c++) x[i * d + c] = wte[ids[i] * d + c] + table[positions[i] * d + c];
    }
    const probs = [];
    for (let layer = 0; layer < m.n_layers; layer++) {
      const at = (name, width) => a[name].subarray(layer * width, (layer + 1) * width);
      const h1 = layerNorm(x, t, d, at("ln1_gain", d), at("ln1_bias", d));
      const [layerProbs, attended] = attention(m, layer, h1, t, positions, window);
      probs.push(layerProbs);
      for (let i = 0; i < x.length; i++) x[i] += attended[i];
      const h2 = layerNorm(x, t, d, at("ln2_gain", d), at("ln2_bias", d));
      const pre = linear(h2, t, d, m.transposed.w_fc.subarray(layer * d * 4 * d), 4 * d, at("b_fc", 4 * d));
      for (let i = 0; i < pre.length; i++) {
        const z = pre[i];
        pre[i] = 0.5 * z * (1 + Math.tanh(GELU_C * z * (1 + 0.044715 * z * z)));
      }
      const mlp = linear(pre, t, 4 * d, m.transposed.w_mlp_proj.subarray(layer * 4 * d * d), d, at("b_mlp_proj", d));
      for (let i = 0; i < x.length; i++) x[i] += mlp[i];
    }
    const final = layerNorm(x, t, d, a.lnf_gain, a.lnf_bias);
    const head = m.transposed.token_embeddings; // float64, as every array dot() reads
    const logits = new Act(t * vocab);
    for (let i = 0; i < t; i++) {
      for (let w = 0; w < vocab; w++) {
        logits[i * vocab + w] = dot(final, i * d, head, w * d, d);
      }
    }
    return { logits, probs, vocab };
  }

  // ---- a setting, checked as the package checks its arguments ----

  const DEFAULTS = {
    model: "text",
    passage: "1",
    text: "",
    start: 0,
    pad: 0,
    ids: "count",
    grow: "fresh",
    seed: 1, // at_length's default, and chapter 9's
    window: null,
    sinks: 0,
    head: "1.1",
    query: null,
  };

  function describe(chars) {
    return chars.map((ch) => JSON.stringify(ch)).join(", ");
  }

  // The text of a setting, or an error naming what is wrong.
  function textOf(setting) {
    if (setting.passage) return DATA.passages[Number(setting.passage) - 1];
    return setting.text;
  }

  function checkText(text) {
    const outside = [...new Set([...text].filter((ch) => !CHAR_ID.has(ch)))];
    if (outside.length) {
      return `The model does not know ${outside.length === 1 ? "this character" : "these characters"}: ${describe(outside)}. It reads the ${DATA.alphabet.length} characters of its corpus (letters, digits, punctuation, spaces and line breaks).`;
    }
    if ([...text].length < 2) return "Give the model at least two characters: it predicts each character from the ones before it.";
    return null;
  }

  // Everything the setting makes the model compute, or {error}.
  function compute(setting) {
    const s = { ...DEFAULTS, ...setting };
    const m = DATA.models[s.model] ? model(s.model) : null;
    if (!m) return { error: `There is no model ${JSON.stringify(s.model)}.` };
    const text = textOf(s);
    const bad = checkText(text);
    if (bad) return { error: bad };
    const chars = [...text];
    const pad = s.pad;
    const sequence = [...Array(pad).fill(DATA.pad), ...chars].map((ch) => CHAR_ID.get(ch));
    const inputs = sequence.slice(0, -1);
    const targets = sequence.slice(1);
    const t = inputs.length;
    if (s.ids === "mask" && s.start) {
      return { error: "Position ids from the mask count from 0 at the first character: set the start row to 0 to use them." };
    }
    if (s.sinks && s.window === null) return { error: `${s.sinks} sink tokens need a window: without one every key is kept.` };
    if (s.window !== null && (s.start || (s.ids === "mask" && pad))) {
      return { error: "A window counts positions from the sequence's first character: use it with start row 0 and positions counted from the first slot." };
    }
    if (s.sinks && (m.scheme === "learned" || m.scheme === "sinusoidal")) {
      return { error: `Sink tokens need a relative scheme (rotary, alibi or none), not ${m.scheme}: an absolute scheme adds positions to the inputs, so a kept first token cannot take a position within the cache.` };
    }
    if (s.sinks > t) return { error: `${s.sinks} sink tokens with ${t} characters read: the sinks must be at most ${t}.` };
    const positions = inputs.map((_, i) => (s.ids === "mask" ? (i < pad ? 0 : i - pad) : s.start + i));
    const rows = Math.max(...positions) + 1;
    if (rows > DATA.max_positions) {
      return { error: `This setting reaches position ${rows - 1}; the playground runs positions up to ${DATA.max_positions - 1}. Shorten the text, the padding or the start row.` };
    }
    const table = positionTable(m, rows, s.grow, s.seed);
    const window = { size: s.window, sinks: s.sinks };
    const { logits, probs, vocab } = forward(m, inputs, positions, table, window);
    // optim.losses_of_logits, and each prediction's probabilities
    const losses = [];
    const predictions = [];
    for (let i = 0; i < t; i++) {
      const row = logits.subarray(i * vocab, (i + 1) * vocab);
      let most = -Infinity;
      for (const z of row) if (z > most) most = z;
      let sum = 0;
      for (const z of row) sum += Math.exp(z - most);
      const logSum = most + Math.log(sum);
      losses.push(logSum - row[targets[i]]);
      predictions.push(Array.from(row, (z) => Math.exp(z - logSum)));
    }
    return { model: m, chars, pad, positions, rows, losses, predictions, probs, t, table };
  }

  // What the page shows of a setting: each text character's loss (none for the first), the
  // query's top predictions, and the chosen head's weights (row and map): the browser tests
  // compare these with the package.
  let last = { key: null, result: null };

  function shown(setting) {
    const s = { ...DEFAULTS, ...setting };
    // the head and the query only choose what to show: the last pass is reused for them
    const key = JSON.stringify({ ...s, head: null, query: null });
    const result = key === last.key ? last.result : compute(s);
    last = { key, result };
    if (result.error) return result;
    const n = result.chars.length;
    const query = s.query === null ? n - 1 : s.query;
    if (query < 1 || query > n - 1) {
      return { error: `The query must be a character from 1 to ${n - 1} (the last has no next character to predict).` };
    }
    const [layer, head] = s.head.split(".").map(Number);
    if (!(layer >= 1 && layer <= result.model.n_layers && head >= 1 && head <= result.model.n_heads)) {
      return { error: `There is no head ${JSON.stringify(s.head)}: blocks 1 to ${result.model.n_layers}, heads 1 to ${result.model.n_heads}.` };
    }
    const slot = result.pad + query - 1; // the query's input slot
    const map = result.probs[layer - 1][head - 1];
    const t = result.t;
    const top = result.predictions[slot]
      .map((p, id) => [p, id])
      .sort((a, b) => b[0] - a[0])
      .slice(0, 5)
      .map(([p, id]) => [DATA.alphabet[id], p]);
    return {
      ...result,
      query,
      layer,
      head,
      slot,
      charLosses: [null, ...result.losses.slice(result.pad)],
      top,
      row: Array.from(map.subarray(slot * t, slot * t + slot + 1)),
      map,
    };
  }

  // ---- the setting in the address ----

  const FIELDS = ["model", "passage", "text", "start", "pad", "ids", "grow", "seed", "window", "sinks", "head", "query"];

  function wholeNumber(name, raw, low, high) {
    if (!/^\d+$/.test(raw) || Number(raw) < low || Number(raw) > high) {
      throw new Error(`${name} must be a whole number from ${low} to ${high}, got ${JSON.stringify(raw)}.`);
    }
    return Number(raw);
  }

  function choice(name, raw, allowed) {
    if (!allowed.includes(raw)) {
      throw new Error(`${name} must be one of ${allowed.join(", ")}, got ${JSON.stringify(raw)}.`);
    }
    return raw;
  }

  // A setting from the address's parameters: [setting, message] (bad values fall back to the
  // defaults, and the message names them).
  function fromParams(params) {
    const s = { ...DEFAULTS };
    const problems = [];
    const most = DATA.max_positions;
    const readers = {
      model: (raw) => choice("model", raw, Object.keys(DATA.models)),
      passage: (raw) => (raw === "" ? "" : String(wholeNumber("passage", raw, 1, DATA.passages.length))),
      text: (raw) => raw,
      start: (raw) => wholeNumber("start", raw, 0, most - 1),
      pad: (raw) => wholeNumber("pad", raw, 0, most - 1),
      ids: (raw) => choice("ids", raw, ["count", "mask"]),
      grow: (raw) => choice("grow", raw, DATA.growth),
      seed: (raw) => Number(choice("seed", raw, DATA.growth_seeds.map(String))),
      window: (raw) => wholeNumber("window", raw, 1, most),
      sinks: (raw) => wholeNumber("sinks", raw, 0, most),
      head: (raw) => {
        if (!/^\d+\.\d+$/.test(raw)) throw new Error(`head must be block.head, as 1.2, got ${JSON.stringify(raw)}.`);
        return raw;
      },
      query: (raw) => wholeNumber("query", raw, 1, most),
    };
    for (const name of FIELDS) {
      if (!params.has(name)) continue;
      try {
        s[name] = readers[name](params.get(name));
      } catch (error) {
        problems.push(error.message);
      }
    }
    if (params.has("text") && !params.has("passage")) s.passage = "";
    return [s, problems.join(" ")];
  }

  function toParams(s) {
    const params = new URLSearchParams();
    for (const name of FIELDS) {
      const value = s[name];
      if (name === "text" && s.passage) continue;
      if (value === DEFAULTS[name] || value === null) continue;
      params.set(name, String(value));
    }
    if (!s.passage) params.set("passage", "");
    return params;
  }

  window.gptembedPlayground = { compute, shown, fromParams, toParams, positionTable, model, DEFAULTS };

  // ---- the page ----

  function start() {
  const root = document.querySelector("[data-gpt-playground]");
  if (!root) return;
  const $ = (id) => root.querySelector(`#gp-${id}`);
  const SVG = "http://www.w3.org/2000/svg";
  const fixed = (x, digits) => x.toFixed(digits);
  const shownChar = (ch) => (ch === "\n" ? "\u21b5" : ch === DATA.pad ? "\u241b" : ch === " " ? "\u2423" : ch);

  function el(tag, attributes, text) {
    const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
    for (const [k, v] of Object.entries(attributes || {})) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function headOptions(key) {
    const m = DATA.models[key];
    const select = $("head");
    const keep = select.value;
    select.replaceChildren();
    for (let l = 1; l <= m.n_layers; l++) {
      for (let h = 1; h <= m.n_heads; h++) select.append(el("option", { value: `${l}.${h}` }, `block ${l}, head ${h}`));
    }
    if ([...select.options].some((o) => o.value === keep)) select.value = keep;
  }

  function toControls(s) {
    $("model").value = s.model;
    headOptions(s.model);
    $("passage").value = s.passage;
    $("text").value = textOf(s) ?? "";
    $("text").readOnly = Boolean(s.passage);
    $("start").value = String(s.start);
    $("pad").value = String(s.pad);
    $("ids").value = s.ids;
    $("grow").value = s.grow;
    $("seed").value = String(s.seed);
    $("window").value = s.window === null ? "" : String(s.window);
    $("sinks").value = String(s.sinks);
    $("head").value = s.head;
    $("query").value = s.query === null ? "" : String(s.query);
  }

  // The setting the controls hold: [setting, message].
  function fromControls() {
    const params = new URLSearchParams();
    for (const name of FIELDS) {
      const value = $(name).value;
      if (value === "" && name !== "passage") continue;
      params.set(name, value);
    }
    if (!$("passage").value) params.set("text", $("text").value);
    return fromParams(params);
  }

  function draw(result) {
    const n = result.chars.length;
    // the strip: each character shaded by its loss
    const strip = $("strip");
    strip.replaceChildren();
    result.chars.forEach((ch, c) => {
      const loss = result.charLosses[c];
      const span = el("span", { class: "gp-char", "data-index": c + 1 }, shownChar(ch));
      if (loss !== null) {
        span.dataset.loss = String(loss);
        span.style.setProperty("--gp-shade", String(Math.min(loss / 6, 1)));
        span.title = `character ${c + 1}: ${fixed(loss, 3)} nats`;
      }
      if (c + 1 === result.query) span.classList.add("gp-char--query");
      strip.append(span);
      if (ch === "\n") strip.append(el("br"));
    });
    // the query's prediction
    const next = result.chars[result.query];
    const box = $("prediction");
    box.replaceChildren(
      el("p", {}, `After character ${result.query} (${JSON.stringify(result.chars[result.query - 1])}, at position ${result.positions[result.slot]}) the next character is ${JSON.stringify(next)}: loss `),
    );
    box.firstChild.append(el("data", { id: "gp-loss", value: String(result.charLosses[result.query]) }, `${fixed(result.charLosses[result.query], 3)} nats`), ".");
    const list = el("ol", { id: "gp-top", "aria-label": "The model's five likeliest next characters" });
    for (const [ch, p] of result.top) {
      const item = el("li", {}, `${JSON.stringify(ch)} `);
      item.append(el("data", { value: String(p), "data-char": ch }, `${fixed(100 * p, 1)}%`));
      list.append(item);
    }
    box.append(list);
    drawCurve(result);
    drawRow(result);
    drawMap(result);
    const mean = result.charLosses.slice(1).reduce((a, b) => a + b, 0) / (n - 1);
    const past = result.losses.filter((_, i) => i >= result.pad && result.positions[i] >= result.model.seq_len);
    const [bestKey, bestWeight] = result.row.reduce((best, w, j) => (w > best[1] ? [j, w] : best), [0, -1]);
    const keyText = bestKey < result.pad ? `padding slot ${bestKey + 1}` : `character ${bestKey - result.pad + 1} (${JSON.stringify(result.chars[bestKey - result.pad])})`;
    $("summary").textContent =
      `${result.model.label} reads ${n} characters at positions ${result.positions[result.pad]} to ${result.positions[result.t - 1] + 1} (its table has ${result.model.seq_len} rows): ` +
      `mean loss ${fixed(mean, 3)} nats a character` +
      (past.length ? `, ${fixed(past.reduce((a, b) => a + b, 0) / past.length, 3)} over the ${past.length} predicted past row ${result.model.seq_len - 1}` : "") +
      `. Block ${result.layer}, head ${result.head} at character ${result.query} puts its largest weight, ${fixed(bestWeight, 3)}, on ${keyText}.`;
  }

  function drawCurve(result) {
    const svg = $("curve");
    svg.replaceChildren();
    const losses = result.losses.slice(result.pad);
    const positions = result.positions.slice(result.pad);
    const most = Math.max(6, ...losses);
    const last = Math.max(result.rows, result.model.seq_len);
    const x = (p) => 40 + (590 * p) / last;
    const y = (loss) => 180 - (170 * loss) / most;
    svg.append(el("svg:line", { class: "gp-axis", x1: 40, y1: 180, x2: 630, y2: 180 }));
    svg.append(el("svg:text", { class: "gp-label", x: 40, y: 196 }, "position 0"));
    svg.append(el("svg:text", { class: "gp-label", x: 0, y: 14 }, `${fixed(most, 1)} nats`));
    const trained = x(result.model.seq_len);
    svg.append(el("svg:line", { class: "gp-trained", x1: trained, y1: 10, x2: trained, y2: 180 }));
    svg.append(el("svg:text", { class: "gp-label", x: Math.min(trained, 520), y: 24 }, `trained length ${result.model.seq_len}`));
    const points = losses.map((loss, i) => `${fixed(x(positions[i] + 0.5), 1)},${fixed(y(loss), 1)}`).join(" ");
    svg.append(el("svg:polyline", { class: "gp-line", points }));
    const within = losses.filter((_, i) => positions[i] < result.model.seq_len);
    const beyond = losses.length - within.length;
    $("curve-caption").textContent =
      `Loss by position, each character's at the position that predicts it, from ${fixed(Math.min(...losses), 2)} to ${fixed(Math.max(...losses), 2)} nats; ` +
      `the line marks the trained length, ${result.model.seq_len} positions; ${beyond} predictions lie past it.`;
  }

  function drawRow(result) {
    const svg = $("row");
    svg.replaceChildren();
    const width = 600 / (result.slot + 1);
    result.row.forEach((w, j) => {
      svg.append(el("svg:rect", { class: j < result.pad ? "gp-bar gp-bar--pad" : "gp-bar", x: 30 + j * width, y: 110 - 100 * w, width: Math.max(width - 0.5, 0.5), height: 100 * w, "data-weight": w }));
    });
    svg.append(el("svg:line", { class: "gp-axis", x1: 30, y1: 110, x2: 630, y2: 110 }));
    $("row-caption").textContent = `Block ${result.layer}, head ${result.head}: the weights of character ${result.query} over the ${result.slot + 1} slots it may see${result.pad ? ` (the first ${result.pad} are padding)` : ""}, tallest ${fixed(Math.max(...result.row), 3)}.`;
  }

  function drawMap(result) {
    const canvas = $("map");
    const t = result.t;
    canvas.width = t;
    canvas.height = t;
    const context = canvas.getContext("2d");
    const image = context.createImageData(t, t);
    const dark = document.documentElement.dataset.theme === "dark";
    for (let i = 0; i < t; i++) {
      for (let j = 0; j < t; j++) {
        const strength = Math.sqrt(result.map[i * t + j]);
        const at = 4 * (i * t + j);
        // light: white to blue; dark: near black to light blue
        image.data[at] = dark ? Math.round(30 + 170 * strength) : Math.round(255 * (1 - strength));
        image.data[at + 1] = dark ? Math.round(32 + 190 * strength) : Math.round(255 * (1 - strength));
        image.data[at + 2] = dark ? Math.round(40 + 215 * strength) : 255;
        image.data[at + 3] = 255;
      }
    }
    context.putImageData(image, 0, 0);
    let local = 0;
    for (let i = 0; i < t; i++) local += result.map[i * t + i] + (i ? result.map[i * t + i - 1] : 0);
    $("map-caption").textContent = `Block ${result.layer}, head ${result.head}'s whole map, ${t} queries down and ${t} keys across, stronger colour for more weight (square root scale); on average ${fixed((100 * local) / t, 0)}% of a query's weight lies on its own or the previous slot.`;
  }

  let current = null;

  function update(push) {
    const [s, problem] = fromControls();
    show(s, problem, push);
  }

  function show(s, problem, push) {
    const result = shown(s);
    const message = [problem, result.error].filter(Boolean).join(" ");
    $("message").textContent = message;
    root.classList.toggle("gp--error", Boolean(result.error));
    if (!result.error) draw(result);
    current = s;
    const query = `?${toParams(s)}`;
    $("link").href = query + "#" + (root.closest("section")?.id ?? "");
    if (query !== location.search) {
      if (push) history.pushState(null, "", query + location.hash);
      else history.replaceState(null, "", query + location.hash);
    }
  }

  function fromAddress() {
    const [s, problem] = fromParams(new URLSearchParams(location.search));
    toControls(s);
    show(s, problem, false);
  }

  $("model").addEventListener("change", () => {
    headOptions($("model").value);
    update(true);
  });
  $("passage").addEventListener("change", () => {
    const pick = $("passage").value;
    if (pick) $("text").value = DATA.passages[Number(pick) - 1];
    $("text").readOnly = Boolean(pick);
    update(true);
  });
  $("text").addEventListener("input", () => update(false));
  root.querySelector("form").addEventListener("change", (event) => {
    if (event.target.id !== "gp-model" && event.target.id !== "gp-passage") update(true);
  });
  root.querySelector("form").addEventListener("submit", (event) => event.preventDefault());
  $("strip").addEventListener("click", (event) => {
    const index = Number(event.target.dataset?.index);
    if (index >= 1 && current && index < [...textOf(current)].length) {
      $("query").value = String(index);
      update(true);
    }
  });
  window.addEventListener("popstate", fromAddress);
  // the map's colours follow the theme: redraw it when the reader switches
  new MutationObserver(() => {
    const result = current && shown(current);
    if (result && !result.error) drawMap(result);
  }).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
  fromAddress();
  window.gptembedPlayground.current = () => current;
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
