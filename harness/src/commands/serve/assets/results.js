// The Results view (#results/<run>/<step>): the runs table, the report, and one run's detail
// (steps, summary, test items, training dialogs). Uses app.js's helpers through MB.
'use strict';

(function () {

const { $, el, api, query, enc, showError, fmtScore, fmtValue, fmtStamp, flatten, kvTable, chatList,
  stepsChart, clickable, fillSelect, state, parseHash } = MB;

function enterResults(run, step, entering) {
  showError('results-error', null);
  if (entering || !state.runs.length) refreshRuns();
  if (!run) {
    $('run-detail').hidden = true;
    state.detail = null;
    markSelectedRun();
    return;
  }
  markSelectedRun();
  const d = state.detail;
  if (d && d.run === run && d.data) {
    const wanted = step || defaultStep(d.data);
    if (wanted !== d.step) applyStep(wanted);
  } else if (!d || d.run !== run) {
    loadRun(run, step);
  }
}

async function refreshRuns() {
  try {
    const data = await api('/api/runs');
    state.runs = (data && data.runs) || [];
  } catch (e) {
    showError('results-error', e);
  }
  renderRuns();
}

function renderRuns() {
  const body = $('runs').tBodies[0];
  if (!state.runs.length) {
    body.replaceChildren(el('tr', { class: 'empty' }, el('td', { colspan: 8 }, 'No runs yet.')));
  } else {
    body.replaceChildren(...state.runs.map((r) => clickable(el('tr', { dataset: { run: r.run }, title: r.run },
      el('td', null, fmtStamp(r.started)),
      el('td', null, r.regime || ''),
      el('td', null, r.set_name || '', el('span', { class: 'muted' }, r.dataset_type ? ` (${r.dataset_type})` : '')),
      el('td', null, r.system || ''),
      el('td', null, r.llm || ''),
      el('td', { class: 'num' }, r.cases === null || r.cases === undefined ? '—' : String(r.cases)),
      el('td', { class: 'num' }, fmtScore(r.score)),
      el('td', { class: r.complete ? 'ok-text' : 'muted', title: r.complete ? 'complete' : 'incomplete or still running' },
        r.complete ? '✓' : '…')),
    () => { state.scrollToDetail = true; location.hash = '#results/' + enc(r.run); })));
  }
  filterRuns();
  markSelectedRun();
  renderRunMeta();
}

/** Client-side filter: a row stays when its text contains the filter (case-insensitive). */
function filterRuns() {
  const q = $('runs-filter').value.trim().toLowerCase();
  const rows = [...$('runs').tBodies[0].rows].filter((tr) => tr.dataset.run);
  let shown = 0;
  for (const tr of rows) {
    tr.hidden = q !== '' && !(tr.textContent + ' ' + tr.dataset.run).toLowerCase().includes(q);
    if (!tr.hidden) shown += 1;
  }
  $('runs-count').textContent = q ? `${shown} of ${rows.length} runs` : `${rows.length} runs`;
}

function markSelectedRun() {
  const run = state.detail ? state.detail.run : parseHash().a;
  for (const tr of $('runs').tBodies[0].rows) tr.classList.toggle('selected', Boolean(run) && tr.dataset.run === run);
}

async function toggleReport() {
  const box = $('report'), button = $('show-report');
  if (!box.hidden) { box.hidden = true; button.textContent = 'Show report'; return; }
  button.disabled = true;
  try {
    const data = await api('/api/report');
    box.innerHTML = data.html; // server-made HTML (tables, SVG charts): the one innerHTML
    box.hidden = false;
    button.textContent = 'Hide report';
  } catch (e) {
    showError('results-error', e);
  } finally {
    button.disabled = false;
  }
}

/** The report's own anchors (its contents, "back to top") scroll inside #report instead of
 *  changing location.hash, which is the app's router. */
function onReportClick(event) {
  const link = event.target.closest('a');
  const href = link && link.getAttribute('href');
  if (!href || !href.startsWith('#') || !$('report').contains(link)) return;
  event.preventDefault();
  let id = href.slice(1);
  try { id = decodeURIComponent(id); } catch (_) { /* keep raw */ }
  const target = id && $('report').querySelector('#' + CSS.escape(id));
  if (target) target.scrollIntoView({ block: 'start' });
}

// ---- run detail ----

/** The step shown when the URL names none: the last one with a summary, else the last. */
function defaultStep(data) {
  const steps = data.steps || [];
  if (!steps.length) return null;
  const done = steps.filter((s) => s.summary);
  return (done.length ? done[done.length - 1] : steps[steps.length - 1]).name;
}

/** The score of a summary.json: its `summary.average`, else its first number. */
function scoreOf(summary) {
  const s = summary && summary.summary;
  if (!s || typeof s !== 'object') return null;
  if (typeof s.average === 'number') return s.average;
  const first = Object.values(s).find((v) => typeof v === 'number');
  return first === undefined ? null : first;
}

async function loadRun(run, step) {
  const seq = ++state.detailSeq;
  state.detail = { run, data: null, step: null, items: [], total: 0, dialogs: 0, dialogsTotal: null };
  $('run-detail').hidden = false;
  $('run-title').textContent = run;
  $('run-meta').textContent = 'Loading…';
  $('summary').replaceChildren();
  $('steps-box').hidden = true;
  $('run-config').textContent = '';
  resetItems();
  resetDialogs();
  let data;
  try {
    data = await api('/api/run' + query({ run }));
  } catch (e) {
    if (seq === state.detailSeq) { showError('results-error', e); $('run-meta').textContent = ''; }
    return;
  }
  if (seq !== state.detailSeq) return;
  state.detail.data = data;
  renderRunMeta();
  $('run-config').textContent = JSON.stringify(data.config, null, 2);
  const steps = data.steps || [];
  $('steps-box').hidden = steps.length === 0;
  if (steps.length) {
    fillSelect($('step'), steps.map((s) => [s.name, s.name]));
    renderSteps(steps);
  }
  applyStep(steps.some((s) => s.name === step) ? step : defaultStep(data));
  if (state.scrollToDetail) {
    state.scrollToDetail = false;
    $('run-detail').scrollIntoView({ block: 'start' });
  }
}

/** The line under the run's title, from its row in the runs list (which may load later). */
function renderRunMeta() {
  const d = state.detail;
  if (!d || !d.data) return;
  const r = state.runs.find((x) => x.run === d.run);
  $('run-meta').textContent = r
    ? [r.regime, `${r.dataset_type}/${r.set_name}`, r.system, 'llm ' + r.llm,
      'started ' + fmtStamp(r.started), r.complete ? 'complete' : 'incomplete'].join(' · ')
    : '';
}

/** Shows step `step` (null for a run without steps): its summary, items and dialogs. */
function applyStep(step) {
  const d = state.detail;
  d.step = step;
  const steps = d.data.steps || [];
  let summary = d.data.summary;
  if (step !== null) {
    $('step').value = step;
    const found = steps.find((s) => s.name === step);
    summary = found ? found.summary : null;
    for (const tr of $('steps-table').querySelectorAll('tr[data-step]')) tr.classList.toggle('selected', tr.dataset.step === step);
  }
  renderSummary(summary);
  resetItems();
  resetDialogs();
  loadItems();
}

const stepHref = (step) => '#results/' + enc(state.detail.run) + '/' + enc(step);

function renderSteps(steps) {
  const rows = steps.map((s) => clickable(el('tr', { dataset: { step: s.name } },
    el('td', null, s.name), el('td', { class: 'num' }, fmtScore(scoreOf(s.summary)))),
  () => { location.hash = stepHref(s.name); }));
  $('steps-table').replaceChildren(
    el('thead', null, el('tr', null, el('th', null, 'step'), el('th', { class: 'num' }, 'score'))),
    el('tbody', null, rows));
  $('steps-chart').replaceChildren(stepsChart(steps.map((s) => [s.name, scoreOf(s.summary)])) || '');
}
/** summary.json: the headline numbers, per-dataset averages and the timing block. */
function renderSummary(summary) {
  const box = $('summary');
  if (!summary) {
    box.replaceChildren(el('p', { class: 'muted' }, 'No summary.json (the run or step is not finished, or was not evaluated).'));
    return;
  }
  const parts = [];
  if (summary.summary && typeof summary.summary === 'object') {
    parts.push(kvTable(summary.summary, 'Score', (k, v) => (typeof v === 'number' ? fmtScore(v) : fmtValue(k, v))));
  }
  if (summary.average && typeof summary.average === 'object') {
    const norm = summary.minmax_normalized_average || {};
    const rows = Object.entries(summary.average).map(([name, v]) => el('tr', null,
      el('th', null, name), el('td', { class: 'num' }, fmtScore(v)),
      el('td', { class: 'num' }, Array.isArray(norm[name]) ? fmtScore(norm[name][2]) : '—'),
      el('td', { class: 'num' }, Array.isArray(norm[name]) ? String(norm[name][1]) : '—')));
    parts.push(el('table', { class: 'kv' }, el('caption', null, 'Per dataset'),
      el('thead', null, el('tr', null, el('th', null, 'dataset'), el('th', { class: 'num' }, 'average'),
        el('th', { class: 'num' }, 'normalized'), el('th', { class: 'num' }, 'n'))),
      el('tbody', null, rows)));
  }
  // The cost figures are many: folded under their title, as the configuration is.
  if (summary.timing && typeof summary.timing === 'object') {
    parts.push(el('details', { class: 'timing' }, el('summary', null, 'Timing and cost per case'),
      kvTable(flatten(summary.timing))));
  }
  box.replaceChildren(...parts);
}

// ---- items ----

function resetItems() {
  if (state.detail) { state.detail.items = []; state.detail.total = 0; }
  $('items').tBodies[0].replaceChildren();
  $('items-more').hidden = true;
  $('items-count').textContent = '';
  $('item').hidden = true;
  $('item-placeholder').hidden = false;
}

/** The next page of items (100) of the current run and step. */
async function loadItems() {
  const d = state.detail, step = d.step;
  const more = $('items-more');
  more.disabled = true;
  let data;
  try {
    data = await api('/api/run/items' + query({ run: d.run, step, offset: d.items.length, limit: 100 }));
  } catch (e) {
    if (state.detail === d && d.step === step) showError('results-error', e);
    return;
  } finally {
    more.disabled = false;
  }
  if (state.detail !== d || d.step !== step) return; // another run or step meanwhile
  const items = data.items || [];
  d.items.push(...items);
  d.total = data.total || 0;
  $('items').tBodies[0].append(...items.map((it) => clickable(el('tr', { dataset: { index: it.index } },
    el('td', { class: 'num' }, String(it.index)),
    el('td', null, it.dataset || ''),
    el('td', { class: 'num' }, it.test_idx === null || it.test_idx === undefined ? '' : String(it.test_idx)),
    el('td', { class: 'num' }, fmtScore(it.score))),
  (e) => selectItem(it.index, e.currentTarget))));
  $('items-count').textContent = `(${d.items.length} of ${d.total})`;
  more.hidden = d.items.length >= d.total || items.length === 0;
  more.textContent = `Load more (${Math.min(100, d.total - d.items.length)})`;
  if (d.total === 0) $('items').tBodies[0].append(el('tr', { class: 'empty' }, el('td', { colspan: 4 }, 'No predictions recorded.')));
}

async function selectItem(index, row) {
  const d = state.detail, step = d.step;
  for (const tr of $('items').tBodies[0].rows) tr.classList.toggle('selected', tr === row);
  let item;
  try {
    item = await api('/api/run/item' + query({ run: d.run, step, index }));
  } catch (e) {
    showError('results-error', e);
    return;
  }
  if (state.detail !== d || d.step !== step) return;
  showError('results-error', null);
  renderItem(item);
}

function renderItem(it) {
  $('item-placeholder').hidden = true;
  $('item').hidden = false;
  $('item-title').textContent = `Item ${it.index} · ${it.dataset || '?'} · test_idx ${it.test_idx}`;
  $('item-question').textContent = it.question === null || it.question === undefined ? '—' : it.question;

  const retrieved = $('item-retrieved');
  if (!Array.isArray(it.retrieved)) {
    retrieved.replaceChildren(el('p', { class: 'muted' }, 'not recorded for this run'));
  } else if (!it.retrieved.length) {
    retrieved.replaceChildren(el('p', { class: 'muted' }, 'nothing retrieved'));
  } else {
    retrieved.replaceChildren(el('ol', { class: 'memories' }, it.retrieved.map((m) => el('li', null,
      el('div', { class: 'mem-head' },
        el('code', { class: 'doc-id' }, String(m.doc_id)),
        el('span', { class: 'mem-score' }, typeof m.score === 'number' ? m.score.toFixed(3) : '—')),
      el('div', { class: 'mem-text' }, m.text || '')))));
  }

  const prompt = it.prompt || '';
  $('item-prompt').textContent = prompt;
  $('item-prompt-size').textContent = `(${prompt.length} characters)`;

  // The messages before the last one (whose content is the prompt shown above).
  const others = (it.messages || []).slice(0, -1);
  $('item-messages').replaceChildren(others.length
    ? el('details', null, el('summary', null, `Other messages (${others.length})`), chatList(others))
    : '');

  $('item-response').textContent = it.response === null || it.response === undefined ? '—' : String(it.response);
  const ref = it.reference;
  $('item-reference').textContent = ref === null || ref === undefined ? '—' : typeof ref === 'string' ? ref : JSON.stringify(ref, null, 2);
  $('item-metrics').replaceChildren(it.metrics ? kvTable(it.metrics) : '—');

  const cost = [];
  if (it.timing) cost.push(kvTable(flatten(it.timing), 'Timing'));
  if (it.failures) cost.push(kvTable(flatten(it.failures), 'Failures'));
  if (it.fallbacks) cost.push(kvTable(flatten(it.fallbacks), 'Fallbacks'));
  $('item-cost').replaceChildren(...(cost.length ? cost : ['—']));
}

// ---- training dialogs (loaded when the <details> opens) ----

function resetDialogs() {
  const d = state.detail;
  if (d) Object.assign(d, { dialogs: 0, dialogsTotal: null, dialogsGen: (d.dialogsGen || 0) + 1, dialogsBusy: false });
  $('dialogs-summary').textContent = 'Training dialogs';
  $('dialogs-list').replaceChildren();
  $('dialogs-more').hidden = true;
  if ($('dialogs').open && d && d.data) loadDialogs();
}

async function loadDialogs() {
  const d = state.detail, gen = d.dialogsGen;
  if (d.dialogsBusy) return;
  d.dialogsBusy = true;
  const more = $('dialogs-more');
  more.disabled = true;
  let data;
  try {
    data = await api('/api/run/dialogs' + query({ run: d.run, step: d.step, offset: d.dialogs, limit: 50 }));
  } catch (e) {
    if (state.detail === d && d.dialogsGen === gen) $('dialogs-list').replaceChildren(el('p', { class: 'muted' }, e.message));
    return;
  } finally {
    more.disabled = false;
    if (d.dialogsGen === gen) d.dialogsBusy = false;
  }
  if (state.detail !== d || d.dialogsGen !== gen) return; // another run or step meanwhile
  const dialogs = data.dialogs || [];
  d.dialogs += dialogs.length;
  d.dialogsTotal = data.total || 0;
  $('dialogs-summary').textContent = `Training dialogs (${d.dialogsTotal})`;
  if (d.dialogsTotal === 0) $('dialogs-list').replaceChildren(el('p', { class: 'muted' }, 'No training dialogs recorded.'));
  $('dialogs-list').append(...dialogs.map((dlg) => el('div', { class: 'dialog' },
    el('h4', null, `test_idx ${dlg.test_idx}` + (dlg.dataset ? ` · ${dlg.dataset}` : '')),
    chatList(dlg.dialog),
    Array.isArray(dlg.implicit_feedback) ? el('div', { class: 'feedback' },
      el('h5', null, `Implicit feedback (${dlg.implicit_feedback.length})`),
      el('ul', null, dlg.implicit_feedback.map((f) =>
        el('li', null, typeof f === 'string' ? f : JSON.stringify(f, null, 2))))) : null)));
  more.hidden = d.dialogs >= d.dialogsTotal || dialogs.length === 0;
}

/** Wires the toolbar, the report, the step selector and the item/dialog pagers (once, by init). */
function bindResults() {
  $('runs-filter').addEventListener('input', filterRuns);
  $('refresh-runs').addEventListener('click', refreshRuns);
  $('show-report').addEventListener('click', toggleReport);
  $('report').addEventListener('click', onReportClick);
  $('items-more').addEventListener('click', loadItems);
  $('dialogs-more').addEventListener('click', loadDialogs);
  $('dialogs').addEventListener('toggle', () => {
    const d = state.detail;
    if ($('dialogs').open && d && d.data && d.dialogsTotal === null && d.dialogs === 0) loadDialogs();
  });
  $('step').addEventListener('change', () => { if (state.detail) location.hash = stepHref($('step').value); });
}

Object.assign(MB, { bindResults, enterResults });

})();
