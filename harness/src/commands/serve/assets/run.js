// The Run view (#run): the experiment form built from /api/choices, the command preview, and
// the POST /api/jobs that starts a job. Uses app.js's helpers through MB.
'use strict';

(function () {

const { $, el, api, enc, isLive, showError, fillSelect, keyInput, state } = MB;

const form = $('run-form');
const currentRegime = () => state.choices.regimes.find((r) => r.id === $('regime').value);
const currentSystem = () => state.choices.systems.find((s) => s.name === $('baseline').value);
const currentLlm = () => state.choices.llms.find((l) => l.name === $('llm').value);
const currentEmbedder = () => state.choices.embedders.find((e) => e.name === $('embedder').value);
const embedderShown = () => !$('embedder-field').hidden;

function initRunForm(c) {
  const d = c.defaults || {};
  fillSelect($('regime'), c.regimes.map((r) => [r.id, r.label || r.id]), d.regime);
  fillSelect($('dataset_type'), Object.keys(c.dataset_types).map((k) => [k, k]), d.dataset_type);
  fillSets(d.set_name);
  fillSelect($('llm'), c.llms.map((l) => [l.name, l.name, l.description]), d.llm);
  fillSelect($('embedder'), c.embedders.map((e) => [e.name, e.name, e.description]), d.embedder);
  $('threads').value = d.threads || 4;
  onRegimeChange();

  $('regime').addEventListener('change', onRegimeChange);
  $('dataset_type').addEventListener('change', () => { fillSets(); onSetChange(); });
  $('set_name').addEventListener('change', onSetChange);
  $('baseline').addEventListener('change', onBaselineChange);
  $('llm').addEventListener('change', () => { buildKeyFields(); updatePreview(); });
  $('embedder').addEventListener('change', () => { buildKeyFields(); updatePreview(); });
  form.addEventListener('input', (e) => { e.target.classList.remove('invalid'); updatePreview(); });
  form.addEventListener('change', updatePreview);
  form.addEventListener('submit', submitRun);
  $('run-button').disabled = false;
}

function fillSets(preferred) {
  const sets = state.choices.dataset_types[$('dataset_type').value] || [];
  fillSelect($('set_name'), sets.map((s) => [s, s]), $('set_name').value, preferred, (state.choices.defaults || {}).set_name);
}

/** A new regime: its systems (memoryful regimes hide memoryless ones) and its extra fields. */
function onRegimeChange() {
  const regime = currentRegime();
  const systems = state.choices.systems.filter((s) => !regime || regime.memoryless || !s.memoryless);
  const label = (s) => (s.paper_name && s.paper_name !== s.name ? `${s.paper_name} (${s.name})` : s.name);
  fillSelect($('baseline'), systems.map((s) => [s.name, label(s)]), $('baseline').value, (state.choices.defaults || {}).baseline);
  buildExtraFields(regime ? regime.fields || [] : []);
  onBaselineChange();
}

function onBaselineChange() {
  const system = currentSystem();
  $('embedder-field').hidden = !(system && system.needs_embedder);
  onSetChange();
  buildKeyFields();
}

function onSetChange() {
  const skip = skipOf();
  $('skip-note').hidden = !skip;
  $('skip-note').textContent = skip
    ? `Upstream skips ${$('baseline').value} on ${skip.set}: ${skip.reason}. Check "force" to run it anyway.`
    : '';
  updatePreview();
}

const skipOf = () => {
  const system = currentSystem();
  return system && (system.skips || []).find((s) => s.set === $('set_name').value);
};

/** One input per field of the regime, values kept by name across rebuilds when kinds match. */
function buildExtraFields(fields) {
  const box = $('extra-fields');
  const old = {};
  box.querySelectorAll('[data-name]').forEach((n) => { old[n.dataset.name + '/' + n.dataset.kind] = n.type === 'checkbox' ? n.checked : n.value; });
  box.replaceChildren(...fields.map((f) => {
    const id = 'extra-' + f.name;
    const kept = old[f.name + '/' + f.kind];
    let input;
    if (f.kind === 'choice') {
      input = el('select', { id, dataset: { name: f.name, kind: f.kind } });
      fillSelect(input, (f.options || []).map((o) => [String(o), String(o)]), kept, f.default === undefined ? undefined : String(f.default));
    } else if (f.kind === 'bool' || f.kind === 'boolean') {
      input = el('input', { id, type: 'checkbox', dataset: { name: f.name, kind: f.kind } });
      input.checked = kept !== undefined ? kept : Boolean(f.default);
      return el('div', { class: 'field check' }, el('label', null, input, ' ' + (f.label || f.name)));
    } else {
      const number = f.kind === 'number';
      input = el('input', {
        id, type: number ? 'number' : 'text', dataset: { name: f.name, kind: f.kind },
        min: number ? f.min : null, max: number ? f.max : null,
        step: number ? (Number.isInteger(f.default === undefined ? 0 : f.default) ? 1 : 'any') : null,
      });
      input.value = kept !== undefined ? kept : (f.default === undefined || f.default === null ? '' : String(f.default));
    }
    return el('div', { class: 'field' }, el('label', { for: id }, f.label || f.name), input,
      f.help ? el('small', { class: 'hint' }, f.help) : null);
  }));
  $('extra-box').hidden = fields.length === 0;
}

/** One password input per key the chosen models (and shown embedder) declare; typed values are
 *  kept in memory by env name, so switching back and forth does not lose them. */
function buildKeyFields() {
  const llm = currentLlm(), embedder = currentEmbedder();
  $('llm-note').textContent = llm ? llm.description || '' : '';
  $('embedder-note').textContent = embedder ? embedder.description || '' : '';
  const envs = [...new Set([...(llm ? llm.key_envs || [] : []),
    ...(embedderShown() && embedder ? embedder.key_envs || [] : [])])];
  $('key-fields').replaceChildren(...envs.map((env) => keyInput('key-', env)));
  $('key-box').hidden = envs.length === 0;
}

/** The POST /api/jobs body from the form. */
function collectRun() {
  const num = (id) => { const v = $(id).value.trim(); return v === '' ? null : Number(v); };
  const extra = {};
  $('extra-fields').querySelectorAll('[data-name]').forEach((n) => {
    if (n.type === 'checkbox') extra[n.dataset.name] = n.checked;
    else if (n.value.trim() !== '') extra[n.dataset.name] = n.dataset.kind === 'number' ? Number(n.value) : n.value;
  });
  const keys = {};
  $('key-fields').querySelectorAll('input[data-env]').forEach((n) => { if (n.value) keys[n.dataset.env] = n.value; });
  return {
    regime: $('regime').value, dataset_type: $('dataset_type').value, set_name: $('set_name').value,
    baseline: $('baseline').value, llm: $('llm').value, embedder: embedderShown() ? $('embedder').value : null,
    threads: num('threads'), retrieve_k: num('retrieve_k'), limit: num('limit'), force: $('force').checked,
    extra, keys,
  };
}

/** Quotes a word for a POSIX shell when it needs it. */
const shq = (s) => (/^[\w@%+=:,./-]+$/.test(s) ? s : "'" + String(s).replace(/'/g, "'\\''") + "'");

function updatePreview() {
  if (!state.choices) return;
  const b = collectRun();
  const words = ['mb-harness', b.regime, '--dataset-type', b.dataset_type, '--set-name', b.set_name,
    '--baseline', b.baseline, '--llm', b.llm];
  if (b.embedder) words.push('--embedder', b.embedder);
  if (b.threads !== null) words.push('--threads', String(b.threads));
  if (b.retrieve_k !== null) words.push('--retrieve-k', String(b.retrieve_k));
  if (b.limit !== null) words.push('--limit', String(b.limit));
  if (b.force) words.push('--force');
  for (const [name, value] of Object.entries(b.extra)) {
    if (value === true) words.push('--' + name);
    else if (value !== false) words.push('--' + name, String(value));
  }
  $('command-preview').textContent = words.map(shq).join(' ');
}

async function submitRun(event) {
  event.preventDefault();
  const body = collectRun();
  if (skipOf() && !body.force) {
    const err = new Error(`Upstream skips ${body.baseline} on ${body.set_name}: check "force" to run it anyway.`);
    err.field = 'force';
    showError('run-error', err, form, ['']);
    return;
  }
  showError('run-error', null, form);
  const button = $('run-button');
  button.disabled = true;
  try {
    const created = await api('/api/jobs', { method: 'POST', body });
    location.hash = '#watch/' + enc(created.id);
  } catch (e) {
    showError('run-error', e, form, ['', 'extra-', 'key-']);
  } finally {
    button.disabled = false;
  }
}

/** On entering the Run view: a note when a job is running already. */
async function enterRun() {
  try {
    const jobs = await api('/api/jobs');
    const live = (jobs || []).find((j) => isLive(j.state));
    const note = $('run-busy');
    note.hidden = !live;
    if (live) {
      note.replaceChildren('A job is running: ',
        el('a', { href: '#watch/' + enc(live.id) }, live.command || live.id),
        '. A new run can start once it ends.');
    }
  } catch (_) { /* the note is a convenience */ }
}

Object.assign(MB, { initRunForm, enterRun });

})();
