// The Watch view (#watch/<job>): the job list, one job's state, progress bars and log over its
// SSE stream, Stop and Resume. Uses app.js's helpers through MB.
'use strict';

(function () {

const { $, el, api, enc, parseJson, isLive, showError, fmtTime, fmtDuration, keyInput, state } = MB;

const MAX_LOG_LINES = 2000;
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

function leaveWatch() {
  closeEvents();
  state.jobId = null;
  state.job = null;
}

function closeEvents() {
  if (state.events) { state.events.close(); state.events = null; }
}

async function enterWatch(id) {
  const seq = ++state.watchSeq;
  showError('watch-error', null);
  await refreshJobs();
  if (seq !== state.watchSeq) return;
  if (!id) {
    if (!state.jobs.length) { $('job').hidden = true; return; }
    id = state.jobs[0].id;
    history.replaceState(null, '', '#watch/' + enc(id));
  }
  if (id !== state.jobId) selectJob(id, seq);
  else renderJobList();
}

async function refreshJobs() {
  try {
    state.jobs = (await api('/api/jobs')) || [];
  } catch (e) {
    showError('watch-error', e);
  }
  renderJobList();
}

function renderJobList() {
  $('jobs-empty').hidden = state.jobs.length > 0;
  $('jobs').replaceChildren(...state.jobs.map((job) => {
    const href = '#watch/' + enc(job.id);
    const li = el('li', { dataset: { job: job.id }, class: job.id === state.jobId ? 'selected' : null },
      el('a', { href },
        el('span', { class: 'badge state-' + job.state }, job.state),
        el('span', { class: 'job-time' }, fmtTime(job.started)),
        el('span', { class: 'job-cmd' }, job.command || '')));
    li.addEventListener('click', (e) => { if (!e.target.closest('a')) location.hash = href; });
    return li;
  }));
}

/** Opens job `id`: its record, then its event stream (which replays the log). */
async function selectJob(id, seq) {
  closeEvents();
  state.jobId = id;
  state.job = null;
  state.runDirs = new Set();
  $('log').replaceChildren();
  $('progress').replaceChildren();
  $('job-runs').replaceChildren();
  renderJobList();
  let job;
  try {
    job = await api('/api/jobs/' + enc(id));
  } catch (e) {
    if (seq === state.watchSeq) { showError('watch-error', e); $('job').hidden = true; }
    return;
  }
  if (seq !== state.watchSeq) return;
  renderJob(job);
  openEvents(id);
}

/** The job's SSE stream: the log's tail first, then new lines (a reconnection sends
 *  Last-Event-ID, so the server resumes where it was); progress is a full snapshot each time;
 *  run dirs are deduplicated. */
function openEvents(id) {
  closeEvents();
  const events = new EventSource('/api/jobs/' + enc(id) + '/events');
  state.events = events;
  const mine = () => state.events === events;
  events.addEventListener('log', (e) => { if (mine()) appendLog(parseJson(e.data) || []); });
  events.addEventListener('progress', (e) => { if (mine()) renderProgress(parseJson(e.data)); });
  events.addEventListener('run_dir', (e) => { if (mine()) addRunDir(parseJson(e.data)); });
  events.addEventListener('state', (e) => {
    const job = parseJson(e.data);
    if (!mine() || !job) return;
    renderJob(job);
    if (!isLive(job.state)) { closeEvents(); refreshJobs(); }
  });
  events.addEventListener('error', () => {
    // A finished job's stream ends after its replay: do not let EventSource reconnect.
    if (mine() && state.job && !isLive(state.job.state)) closeEvents();
  });
}

function renderJob(job) {
  state.job = job;
  const i = state.jobs.findIndex((j) => j.id === job.id);
  if (i >= 0) { state.jobs[i] = job; renderJobList(); }
  const panel = $('job');
  panel.hidden = false;
  panel.dataset.state = job.state;
  panel.dataset.job = job.id;
  $('job-state').className = 'badge state-' + job.state;
  $('job-state').textContent = job.state;
  $('job-times').textContent = 'started ' + fmtTime(job.started) +
    (job.ended ? ` · ended ${fmtTime(job.ended)} (${fmtDuration(new Date(job.ended) - new Date(job.started))})` : '');
  $('job-command').textContent = job.command || '';
  const done = !isLive(job.state);
  $('job-exit').hidden = !done;
  $('job-exit').className = 'note ' + (job.exit_code === 0 ? 'ok' : 'warn');
  $('job-exit').textContent = done
    ? (job.exit_code === null || job.exit_code === undefined ? 'No exit code' : `Exit code ${job.exit_code}`) +
      (job.ended ? ` · ended ${fmtTime(job.ended)}` : '')
    : '';
  $('stop-button').disabled = job.state !== 'running';
  const resumable = Boolean(job.resumable) && done;
  $('resume-button').disabled = !resumable;
  const needed = resumable ? job.keys_needed || [] : [];
  $('resume-keys').replaceChildren(...needed.map((env) => keyInput('resume-key-', env)));
  $('resume-keys').hidden = needed.length === 0;
  (job.run_dirs || []).forEach(addRunDir);
}

function addRunDir(run) {
  if (typeof run !== 'string' || state.runDirs.has(run)) return;
  state.runDirs.add(run);
  $('job-runs').append(el('a', { class: 'open-run', href: '#results/' + enc(run) }, run));
  $('job-runs-box').hidden = false;
}

/** Appends lines, keeping at most MAX_LOG_LINES; follows the end only when already there. */
function appendLog(lines) {
  const log = $('log');
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 8;
  const fragment = document.createDocumentFragment();
  for (const line of lines) fragment.append(String(line).replace(ANSI, '') + '\n');
  log.append(fragment);
  while (log.childNodes.length > MAX_LOG_LINES) log.firstChild.remove();
  if (atBottom) log.scrollTop = log.scrollHeight;
}

function renderProgress(snapshot) {
  const bars = (snapshot && snapshot.bars) || [];
  $('progress').replaceChildren(...bars.map((b) => {
    const known = typeof b.len === 'number' && b.len > 0;
    const fill = el('div', { class: 'meter-fill' });
    if (known) fill.style.width = Math.min(100, (100 * b.pos) / b.len).toFixed(1) + '%';
    const count = known ? `${b.pos}/${b.len} ${b.unit || ''}` : `${b.pos} ${b.unit || ''}`;
    return el('div', { class: 'bar' + (b.done ? ' done' : '') + (known ? '' : ' unknown') },
      el('div', { class: 'bar-head' },
        el('span', { class: 'bar-label' }, b.label || ''),
        el('span', { class: 'bar-pos' }, count.trim()),
        known ? el('span', { class: 'bar-pct muted' }, Math.floor((100 * b.pos) / b.len) + '%') : null),
      el('div', { class: 'meter', role: 'progressbar', 'aria-valuenow': b.pos, 'aria-valuemax': known ? b.len : null }, fill),
      el('div', { class: 'bar-counts' + (b.fallbacks > 0 ? ' warn-text' : '') },
        `${b.calls || 0} model calls, ${b.input_tokens || 0} tokens in, ${b.output_tokens || 0} out, ${b.fallbacks || 0} fallbacks`));
  }));
}

async function stopJob() {
  if (!state.job) return;
  $('stop-button').disabled = true;
  try {
    renderJob(await api('/api/jobs/' + enc(state.job.id) + '/stop', { method: 'POST', body: {} }));
  } catch (e) {
    showError('watch-error', e);
    $('stop-button').disabled = state.job.state !== 'running';
  }
}

async function resumeJob() {
  if (!state.job) return;
  const keys = {};
  $('resume-keys').querySelectorAll('input[data-env]').forEach((n) => { if (n.value) keys[n.dataset.env] = n.value; });
  $('resume-button').disabled = true;
  try {
    const created = await api('/api/jobs/' + enc(state.job.id) + '/resume', { method: 'POST', body: { keys } });
    showError('watch-error', null, $('job'));
    location.hash = '#watch/' + enc(created.id);
  } catch (e) {
    showError('watch-error', e, $('job'), ['resume-key-']);
    $('resume-button').disabled = false;
  }
}

/** Wires the job panel's buttons (called once, by init). */
function bindWatch() {
  $('stop-button').addEventListener('click', stopJob);
  $('resume-button').addEventListener('click', resumeJob);
}

Object.assign(MB, { bindWatch, enterWatch, leaveWatch });

})();
