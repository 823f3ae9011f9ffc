// memorybench-rs web frontend, served by `mb-harness serve`: the shared part. Helpers (api, el,
// formatting, small widgets), the state, hash routing and startup. The views live in run.js,
// watch.js and results.js, loaded after this file (all `defer`); they read these helpers from
// the MB namespace object and add their entry points to it.
// Plain ES2020, no build step, no framework. Every string from the API goes into the DOM as
// text (textContent / createElement); the one exception is the report fragment of /api/report.
'use strict';

(function () {

/** What the four scripts share: the helpers and `state` below (added at the end of this file)
 *  and the views' entry points (added by run.js, watch.js, results.js). */
const MB = window.MB = {};

// =========================== helpers ===========================

const $ = (id) => document.getElementById(id);

/** Creates an element: attrs (class, text, dataset, on<event>, booleans, attributes), children
 *  as nodes or strings (strings become text nodes). */
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
    else if (value === true) node.setAttribute(key, '');
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** Fetches JSON from the API; a 4xx/5xx throws an Error with the server's message and `.field`. */
async function api(path, options = {}) {
  const method = options.method || 'GET';
  const init = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
  if (method !== 'GET') {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(options.body === undefined ? {} : options.body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (e) {
    throw new Error('cannot reach the server: ' + e.message);
  }
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (_) { data = null; }
  if (!response.ok) {
    const err = new Error((data && data.error) || `${response.status} ${response.statusText || 'error'}`);
    err.field = (data && data.field) || null;
    err.status = response.status;
    throw err;
  }
  return data;
}

/** `?a=1&b=2` from the non-empty params, percent-encoded (spaces as %20, not +). */
function query(params) {
  const parts = Object.entries(params)
    .filter(([, v]) => v !== null && v !== undefined && v !== '')
    .map(([k, v]) => encodeURIComponent(k) + '=' + encodeURIComponent(String(v)));
  return parts.length ? '?' + parts.join('&') : '';
}

const enc = encodeURIComponent;
const parseJson = (s) => { try { return JSON.parse(s); } catch (_) { return null; } };
const isLive = (state) => state === 'running' || state === 'stopping';

/** Shows `err` (or hides the box when null) in the error element `id`; marks err.field's input
 *  (looked up as `<prefix><field>` inside `scope`) with class `invalid`. */
function showError(id, err, scope, prefixes) {
  const box = $(id);
  box.textContent = err ? (err.message || String(err)) : '';
  box.hidden = !err;
  if (!scope) return;
  scope.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
  if (!err || !err.field) return;
  const names = [err.field, err.field.replace(/-/g, '_'), err.field.replace(/_/g, '-')];
  for (const prefix of prefixes || ['']) {
    for (const name of names) {
      const target = scope.querySelector('#' + CSS.escape(prefix + name));
      if (target) { target.classList.add('invalid'); return; }
    }
  }
}

// ---- formatting ----
const fmtScore = (x) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(4) : '—');

/** A value of a key/value table: counts as they are (2 decimals when averaged), seconds to 3
 *  decimals, other fractions to 4, objects as JSON. */
function fmtValue(key, v) {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'number') {
    const last = String(key).split('.').pop();
    if (Number.isInteger(v)) return String(v);
    if (/tokens|calls|fallbacks|cases|errors|attempts/i.test(last)) return v.toFixed(2);
    // Seconds: named so, or a CaseTiming's time fields (memory_dialogs, predict_llm, ...).
    if (/second|secs|_s$|^memory_(dialogs|corpus)$|^predict_(memory|llm)$/i.test(key)) return v.toFixed(3);
    return v.toFixed(4);
  }
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** An ISO time as local `YYYY-MM-DD HH:MM:SS` (the raw string when it does not parse). */
function fmtTime(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** A run directory's `started` stamp `2026-12-07-15-00-00` as `2026-12-07 15:00:00`. */
const fmtStamp = (s) => String(s || '').replace(/^(\d{4}-\d\d-\d\d)-(\d\d)-(\d\d)-(\d\d)$/, '$1 $2:$3:$4');

function fmtDuration(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
  return h ? `${h}h ${m}m` : m ? `${m}m ${s % 60}s` : `${s}s`;
}

/** An object with its values that are flat objects spread as `parent.child` keys. */
function flatten(obj) {
  const out = {};
  for (const [k, v] of Object.entries(obj || {})) {
    const flat = v && typeof v === 'object' && !Array.isArray(v) &&
      Object.values(v).every((x) => x === null || typeof x !== 'object');
    if (flat && Object.keys(v).length) for (const [k2, v2] of Object.entries(v)) out[k + '.' + k2] = v2;
    else out[k] = v;
  }
  return out;
}

/** A key/value table of an object; objects among the values are shown as JSON text. */
function kvTable(obj, caption, fmt) {
  const rows = Object.entries(obj || {}).map(([k, v]) => {
    const text = (fmt || fmtValue)(k, v);
    const cell = v !== null && typeof v === 'object' ? el('code', { class: 'json' }, text) : text;
    return el('tr', null, el('th', null, k), el('td', null, cell));
  });
  return el('table', { class: 'kv' }, caption ? el('caption', null, caption) : null, el('tbody', null, rows));
}

/** A conversation as role-labelled turns. */
function chatList(messages) {
  return el('div', { class: 'chat' }, (messages || []).map((m) =>
    el('div', { class: 'msg role-' + String(m.role || 'other').replace(/[^a-z]/gi, '') },
      el('div', { class: 'role' }, m.role || '?'),
      el('div', { class: 'content' }, typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))));
}

/** A small SVG line chart of the steps' scores (nothing with fewer than two scores). */
function stepsChart(points) {
  const scored = points.filter(([, v]) => typeof v === 'number');
  if (scored.length < 2) return null;
  const NS = 'http://www.w3.org/2000/svg';
  const svgEl = (tag, attrs, ...kids) => {
    const n = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
    n.append(...kids);
    return n;
  };
  const W = 300, H = 90, P = 10;
  const values = scored.map(([, v]) => v);
  const lo = Math.min(0, ...values), hi = Math.max(...values, lo + 1e-9);
  const x = (i) => P + (i * (W - 2 * P)) / (scored.length - 1);
  const y = (v) => H - P - ((v - lo) * (H - 2 * P)) / (hi - lo);
  const svg = svgEl('svg', { viewBox: `0 0 ${W} ${H}`, class: 'spark', role: 'img', 'aria-label': 'score per step' });
  svg.append(svgEl('line', { x1: P, x2: W - P, y1: y(lo), y2: y(lo), class: 'axis' }));
  svg.append(svgEl('polyline', { points: scored.map(([, v], i) => `${x(i)},${y(v)}`).join(' ') }));
  scored.forEach(([name, v], i) => {
    const title = svgEl('title', {});
    title.textContent = `${name}: ${fmtScore(v)}`;
    svg.append(svgEl('circle', { cx: x(i), cy: y(v), r: 3 }, title));
  });
  return svg;
}

/** Makes a row (or any element) act on click and on Enter. */
function clickable(node, fn) {
  node.tabIndex = 0;
  node.addEventListener('click', fn);
  node.addEventListener('keydown', (e) => { if (e.key === 'Enter') fn(e); });
  return node;
}

/** Fills a <select> with [value, label, title] pairs and selects the first preferred value that
 *  exists (else the first option). */
function fillSelect(select, pairs, ...preferred) {
  select.replaceChildren(...pairs.map(([value, label, title]) => el('option', { value, title }, label)));
  const values = pairs.map((p) => p[0]);
  const pick = preferred.find((v) => v !== null && v !== undefined && values.includes(v));
  select.value = pick !== undefined ? pick : (values[0] !== undefined ? values[0] : '');
}

/** A password input for API key `env` (the Run form's and Resume's): the typed value is kept
 *  in state.keys by env name. */
function keyInput(prefix, env) {
  const input = el('input', { type: 'password', id: prefix + env, autocomplete: 'new-password', spellcheck: 'false', dataset: { env } });
  input.value = state.keys[env] || '';
  input.addEventListener('input', () => { state.keys[env] = input.value; });
  return el('div', { class: 'field keyfield' },
    el('label', { for: prefix + env }, el('code', null, env), ' (kept in memory, passed to the run\'s environment, never written)'),
    input);
}

// =========================== state & routing ===========================

const state = {
  choices: null,
  keys: {},            // env name → typed API key (memory only, never stored)
  view: null,
  jobs: [], job: null, jobId: null, events: null, runDirs: new Set(), watchSeq: 0,
  runs: [], detail: null, detailSeq: 0, scrollToDetail: false,
};

/** `#results/<run>/<step>` → {view:'results', a: run, b: step}. */
function parseHash() {
  const parts = location.hash.replace(/^#/, '').split('/');
  const view = ['run', 'watch', 'results'].includes(parts[0]) ? parts[0] : 'run';
  const dec = (s) => { try { return decodeURIComponent(s); } catch (_) { return s; } };
  return { view, a: parts[1] ? dec(parts[1]) : null, b: parts[2] ? dec(parts[2]) : null };
}

function route() {
  const { view, a, b } = parseHash();
  const entering = state.view !== view;
  state.view = view;
  for (const name of ['run', 'watch', 'results']) {
    $('view-' + name).hidden = name !== view;
    $('tab-' + name).classList.toggle('active', name === view);
  }
  if (view !== 'watch') MB.leaveWatch();
  if (view === 'run') MB.enterRun();
  else if (view === 'watch') MB.enterWatch(a);
  else MB.enterResults(a, b, entering);
}

// =========================== start ===========================

async function init() {
  MB.bindWatch();
  MB.bindResults();
  window.addEventListener('hashchange', route);
  route();
  try {
    state.choices = await api('/api/choices');
    MB.initRunForm(state.choices);
  } catch (e) {
    showError('run-error', e);
  }
}

Object.assign(MB, {
  $, el, api, query, enc, parseJson, isLive, showError,
  fmtScore, fmtValue, fmtTime, fmtStamp, fmtDuration, flatten, kvTable, chatList, stepsChart, clickable, fillSelect,
  keyInput,
  state, parseHash,
});

// DOMContentLoaded fires after every deferred script has run, so the views are all defined by then.
document.addEventListener('DOMContentLoaded', init);

})();
