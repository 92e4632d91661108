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
// A pass reuses the rows of the last pass that it would compute alike (the
// prefix a KV cache keeps: forward's reusedRows), so typing at the end of the
// text computes the new rows only.
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

  // out (rows, n) = a (rows, k) @ w (k, n) [+ bias], given w transposed, wT (n, k). Two rows
  // of ``a`` meet four rows of ``wT`` at a time, so eight running sums share each value read
  // (benchmarks/bench_playground.py times it); the rows and columns left over go one dot
  // product at a time.
  function linear(a, rows, k, wT, n, bias) {
    const out = new Act(rows * n);
    const pairs = rows - (rows % 2);
    const quads = n - (n % 4);
    for (let i = 0; i < pairs; i += 2) {
      const a0 = i * k;
      const a1 = a0 + k;
      for (let c = 0; c < quads; c += 4) {
        const w0 = c * k;
        const w1 = w0 + k;
        const w2 = w1 + k;
        const w3 = w2 + k;
        let s00 = 0;
        let s01 = 0;
        let s02 = 0;
        let s03 = 0;
        let s10 = 0;
        let s11 = 0;
        let s12 = 0;
        let s13 = 0;
        for (let j = 0; j < k; j++) {
          const x0 = a[a0 + j];
          const x1 = a[a1 + j];
          const v0 = wT[w0 + j];
          const v1 = wT[w1 + j];
          const v2 = wT[w2 + j];
          const v3 = wT[w3 + j];
          s00 += x0 * v0;
          s01 += x0 * v1;
          s02 += x0 * v2;
          s03 += x0 * v3;
          s10 += x1 * v0;
          s11 += x1 * v1;
          s12 += x1 * v2;
          s13 += x1 * v3;
        }
        const o0 = i * n + c;
        const o1 = o0 + n;
        out[o0] = s00;
        out[o0 + 1] = s01;
        out[o0 + 2] = s02;
        out[o0 + 3] = s03;
        out[o1] = s10;
        out[o1 + 1] = s11;
        out[o1 + 2] = s12;
        out[o1 + 3] = s13;
      }
    }
    for (let i = 0; i < rows; i++) {
      for (let c = i < pairs ? quads : 0; c < n; c++) out[i * n + c] = dot(a, i * k, wT, c * k, k);
    }
    if (bias) {
      for (let i = 0; i < rows; i++) {
        for (let c = 0; c < n; c++) out[i * n + c] += bias[c];
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

  // One block's heads (attend) for rows from .. T - 1, on LayerNorm_1's output of those rows,
  // h1 (n, D) with n = T - from; the keys and values of rows 0 .. from - 1 (rotated, where
  // rotary turns them) and their weights are ``past``'s, this block's in an earlier pass, as a
  // KV cache keeps them. Returns {probs: per head (T, T), out: (n, D), keys, values: per head
  // (T, H)}.
  function attention(m, layer, h1, from, t, positions, window, past) {
    const d = m.embed_dim;
    const nh = m.n_heads;
    const hd = d / nh;
    const n = t - from;
    const a = m.arrays;
    const qkv = linear(h1, n, d, m.transposed.w_attn.subarray(layer * d * 3 * d), 3 * d, a.b_attn.subarray(layer * 3 * d));
    const heads = new Act(n * d);
    const done = { probs: [], keys: [], values: [] };
    const slopes = m.scheme === "alibi" ? alibiSlopes(nh) : null;
    const scale = 1 / Math.sqrt(hd);
    const cacheEnd = window.size === null ? 0 : window.sinks + window.size - 1;
    const at = positions.slice(from); // the new rows' positions
    for (let h = 0; h < nh; h++) {
      let q = new Act(n * hd);
      let kNew = new Act(n * hd);
      const vNew = new Act(n * hd);
      for (let i = 0; i < n; i++) {
        for (let c = 0; c < hd; c++) {
          q[i * hd + c] = qkv[i * 3 * d + h * hd + c];
          kNew[i * hd + c] = qkv[i * 3 * d + d + h * hd + c];
          vNew[i * hd + c] = qkv[i * 3 * d + 2 * d + h * hd + c];
        }
      }
      let qSinks = null;
      if (m.scheme === "rotary") {
        if (window.size !== null && window.sinks) {
          qSinks = rotate(q, n, hd, at.map((p) => Math.min(p, cacheEnd)), m.rotary_base);
        }
        q = rotate(q, n, hd, at, m.rotary_base);
        kNew = rotate(kNew, n, hd, at, m.rotary_base);
      }
      const k = new Act(t * hd);
      const v = new Act(t * hd);
      const probs = new Act(t * t);
      if (from) {
        k.set(past.keys[h].subarray(0, from * hd));
        v.set(past.values[h].subarray(0, from * hd));
        const pastProbs = past.probs[h];
        for (let i = 0; i < from; i++) {
          for (let j = 0; j <= i; j++) probs[i * t + j] = pastProbs[i * past.t + j];
        }
      }
      k.set(kNew, from * hd);
      v.set(vNew, from * hd);
      for (let i = from; i < t; i++) {
        // the keys query i sees (Window.blocked): the sinks before its window, [0, sinkEnd),
        // then the window, [first, i]; their scores, then their softmax, go into row i
        const first = window.size === null ? 0 : Math.max(0, i - window.size + 1);
        const sinkEnd = Math.min(window.sinks, first);
        const row = i * t;
        const qi = (i - from) * hd;
        let most = -Infinity;
        for (let part = 0; part < 2; part++) {
          for (let j = part ? first : 0, end = part ? i + 1 : sinkEnd; j < end; j++) {
            const query = qSinks !== null && j < window.sinks ? qSinks : q;
            let s = dot(query, qi, k, j * hd, hd) * scale;
            if (slopes) {
              let distance = positions[i] - positions[j];
              if (window.size !== null && window.sinks && j < window.sinks) {
                distance = Math.min(positions[i] - positions[0], cacheEnd) - j;
              }
              s -= slopes[h] * distance;
            }
            probs[row + j] = s;
            if (s > most) most = s;
          }
        }
        let sum = 0;
        for (let part = 0; part < 2; part++) {
          for (let j = part ? first : 0, end = part ? i + 1 : sinkEnd; j < end; j++) {
            const e = Math.exp(probs[row + j] - most);
            probs[row + j] = e;
            sum += e;
          }
        }
        for (let part = 0; part < 2; part++) {
          for (let j = part ? first : 0, end = part ? i + 1 : sinkEnd; j < end; j++) probs[row + j] /= sum;
        }
        // the weighted sum of the values, four of the head's columns at a time, held in running
        // sums rather than written back at each key
        const out = (i - from) * d + h * hd;
        for (let c = 0; c < hd; c += 4) {
          let s0 = 0;
          let s1 = 0;
          let s2 = 0;
          let s3 = 0;
          for (let part = 0; part < 2; part++) {
            for (let j = part ? first : 0, end = part ? i + 1 : sinkEnd; j < end; j++) {
              const p = probs[row + j];
              const at = j * hd + c;
              s0 += p * v[at];
              s1 += p * v[at + 1];
              s2 += p * v[at + 2];
              s3 += p * v[at + 3];
            }
          }
          heads[out + c] = s0;
          heads[out + c + 1] = s1;
          heads[out + c + 2] = s2;
          heads[out + c + 3] = s3;
        }
      }
      done.probs.push(probs);
      done.keys.push(k);
      done.values.push(v);
    }
    done.out = linear(heads, n, d, m.transposed.w_attn_proj.subarray(layer * d * d), d, a.b_attn_proj.subarray(layer * d));
    return done;
  }

  // How many rows of an earlier pass (its ``cache``) this pass would compute alike. A causal
  // model's row i depends only on the model, the window and rows 0 .. i's inputs (token
  // embedding plus table row, x0) and positions: the longest prefix where those agree is the
  // earlier pass's to give, as a KV cache gives a prefix. A table that moved (interpolation
  // moves every row when the table grows) or padding added in front agree on none.
  function reusedRows(past, m, window, x0, positions) {
    if (!past || past.model !== m || past.window.size !== window.size || past.window.sinks !== window.sinks) return 0;
    const d = m.embed_dim;
    const most = Math.min(past.t, positions.length);
    let i = 0;
    for (; i < most && positions[i] === past.positions[i]; i++) {
      let c = 0;
      while (c < d && x0[i * d + c] === past.x0[i * d + c]) c++;
      if (c < d) break;
    }
    return i;
  }

  // gpt._forward of one sequence: {logits (T, V), probs[layer][head] (T, T), reused, cache}.
  // The rows ``past`` (an earlier pass's cache) computed alike are taken from it (reusedRows):
  // typing at the end of the text computes one row, not T.
  function forward(m, ids, positions, table, window, past) {
    const d = m.embed_dim;
    const t = ids.length;
    const a = m.arrays;
    const wte = a.token_embeddings;
    const vocab = wte.length / d;
    const x0 = new Act(t * d);
    for (let i = 0; i < t; i++) {
      for (let c = 0; c < d; c++) x0[i * d + c] = wte[ids[i] * d + c] + table[positions[i] * d + c];
    }
    const from = reusedRows(past, m, window, x0, positions);
    const n = t - from;
    const x = x0.slice(from * d); // the rows computed here
    const probs = [];
    const layers = [];
    for (let layer = 0; layer < m.n_layers; layer++) {
      const at = (name, width) => a[name].subarray(layer * width, (layer + 1) * width);
      const h1 = layerNorm(x, n, d, at("ln1_gain", d), at("ln1_bias", d));
      const heads = attention(m, layer, h1, from, t, positions, window, from ? past.layers[layer] : null);
      probs.push(heads.probs);
      layers.push({ probs: heads.probs, keys: heads.keys, values: heads.values, t });
      for (let i = 0; i < x.length; i++) x[i] += heads.out[i];
      const h2 = layerNorm(x, n, d, at("ln2_gain", d), at("ln2_bias", d));
      const pre = linear(h2, n, d, m.transposed.w_fc.subarray(layer * d * 4 * d), 4 * d, at("b_fc", 4 * d));
      for (let i = 0; i < pre.length; i++) {
        const z = pre[i];
        // gelu's 0.5 z (1 + tanh(u)) as z / (1 + exp(-2u)), the same number (1 + tanh(u) is
        // 2 / (1 + exp(-2u))): Math.exp costs less than Math.tanh
        pre[i] = z / (1 + Math.exp(-2 * GELU_C * z * (1 + 0.044715 * z * z)));
      }
      const mlp = linear(pre, n, 4 * d, m.transposed.w_mlp_proj.subarray(layer * 4 * d * d), d, at("b_mlp_proj", d));
      for (let i = 0; i < x.length; i++) x[i] += mlp[i];
    }
    const final = layerNorm(x, n, d, a.lnf_gain, a.lnf_bias);
    const logits = new Act(t * vocab);
    if (from) logits.set(past.logits.subarray(0, from * vocab));
    // the tied head: token_embeddings (V, D) is the transposed weight of final @ wte.T
    logits.set(linear(final, n, d, m.transposed.token_embeddings, vocab, null), from * vocab);
    const cache = { model: m, window, x0, positions, t, layers, logits };
    return { logits, probs, vocab, reused: from, cache };
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

  // Everything the setting makes the model compute, or {error}. Given ``previous``, an earlier
  // result, the rows it computed alike are reused (forward); without it every row is computed.
  function compute(setting, previous) {
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
    const { logits, probs, vocab, reused, cache } = forward(m, inputs, positions, table, window, previous?.cache);
    // optim.losses_of_logits, and each prediction's probabilities (T, V)
    const losses = [];
    const predictions = new Act(t * vocab);
    for (let i = 0; i < t; i++) {
      const row = i * vocab;
      let most = -Infinity;
      for (let w = 0; w < vocab; w++) most = Math.max(most, logits[row + w]);
      let sum = 0;
      for (let w = 0; w < vocab; w++) sum += Math.exp(logits[row + w] - most);
      const logSum = most + Math.log(sum);
      losses.push(logSum - logits[row + targets[i]]);
      for (let w = 0; w < vocab; w++) predictions[row + w] = Math.exp(logits[row + w] - logSum);
    }
    return { model: m, chars, pad, positions, rows, losses, predictions, vocab, probs, t, table, reused, cache };
  }

  // What the page shows of a setting: each text character's loss (none for the first), the
  // query's top predictions, and the chosen head's weights (row and map): the browser tests
  // compare these with the package.
  let last = { key: null, result: null };

  function shown(setting) {
    const s = { ...DEFAULTS, ...setting };
    // the head and the query only choose what to show: the last pass is reused for them
    const key = JSON.stringify({ ...s, head: null, query: null });
    const result = key === last.key ? last.result : compute(s, last.result);
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
    const top = Array.from(result.predictions.subarray(slot * result.vocab, (slot + 1) * result.vocab))
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

  // Each element's new children go in with one replaceChildren, built apart from the page: every
  // change to the page's elements is a record for the theme's mutation observers (Font Awesome
  // searches each record's element for icons), so the strip's characters go in as one record,
  // not one each.
  function draw(result) {
    const n = result.chars.length;
    // the strip: each character shaded by its loss
    const chars = [];
    result.chars.forEach((ch, c) => {
      const loss = result.charLosses[c];
      const span = el("span", { class: "gp-char", "data-index": c + 1 }, shownChar(ch));
      if (loss !== null) {
        span.dataset.loss = String(loss);
        span.style.setProperty("--gp-shade", String(Math.min(loss / 6, 1)));
        span.title = `character ${c + 1}: ${fixed(loss, 3)} nats`;
      }
      if (c + 1 === result.query) span.classList.add("gp-char--query");
      chars.push(span);
      if (ch === "\n") chars.push(el("br"));
    });
    $("strip").replaceChildren(...chars);
    // the query's prediction
    const next = result.chars[result.query];
    const said = el("p", {}, `After character ${result.query} (${JSON.stringify(result.chars[result.query - 1])}, at position ${result.positions[result.slot]}) the next character is ${JSON.stringify(next)}: loss `);
    said.append(el("data", { id: "gp-loss", value: String(result.charLosses[result.query]) }, `${fixed(result.charLosses[result.query], 3)} nats`), ".");
    const list = el("ol", { id: "gp-top", "aria-label": "The model's five likeliest next characters" });
    for (const [ch, p] of result.top) {
      const item = el("li", {}, `${JSON.stringify(ch)} `);
      item.append(el("data", { value: String(p), "data-char": ch }, `${fixed(100 * p, 1)}%`));
      list.append(item);
    }
    $("prediction").replaceChildren(said, list);
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
    const losses = result.losses.slice(result.pad);
    const positions = result.positions.slice(result.pad);
    const most = Math.max(6, ...losses);
    const last = Math.max(result.rows, result.model.seq_len);
    const x = (p) => 40 + (590 * p) / last;
    const y = (loss) => 180 - (170 * loss) / most;
    const trained = x(result.model.seq_len);
    const points = losses.map((loss, i) => `${fixed(x(positions[i] + 0.5), 1)},${fixed(y(loss), 1)}`).join(" ");
    $("curve").replaceChildren(
      el("svg:line", { class: "gp-axis", x1: 40, y1: 180, x2: 630, y2: 180 }),
      el("svg:text", { class: "gp-label", x: 40, y: 196 }, "position 0"),
      el("svg:text", { class: "gp-label", x: 0, y: 14 }, `${fixed(most, 1)} nats`),
      el("svg:line", { class: "gp-trained", x1: trained, y1: 10, x2: trained, y2: 180 }),
      el("svg:text", { class: "gp-label", x: Math.min(trained + 4, 520), y: 24 }, `trained length ${result.model.seq_len}`),
      el("svg:polyline", { class: "gp-line", points }),
    );
    const within = losses.filter((_, i) => positions[i] < result.model.seq_len);
    const beyond = losses.length - within.length;
    $("curve-caption").textContent =
      `Loss by position, each character's at the position that predicts it, from ${fixed(Math.min(...losses), 2)} to ${fixed(Math.max(...losses), 2)} nats; ` +
      `the line marks the trained length, ${result.model.seq_len} positions; ${beyond} predictions lie past it.`;
  }

  function drawRow(result) {
    const width = 600 / (result.slot + 1);
    const bars = result.row.map((w, j) =>
      el("svg:rect", { class: j < result.pad ? "gp-bar gp-bar--pad" : "gp-bar", x: 30 + j * width, y: 110 - 100 * w, width: Math.max(width - 0.5, 0.5), height: 100 * w, "data-weight": w }),
    );
    $("row").replaceChildren(...bars, el("svg:line", { class: "gp-axis", x1: 30, y1: 110, x2: 630, y2: 110 }));
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
