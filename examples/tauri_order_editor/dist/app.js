// The Order Editor's page: draws the windows the bridge publishes and sends the user's edits
// back as the user. One script for the three pages (body[data-page]): "main" (index.html: the
// Order Editor, the journal, the switches), "dialog" (dialog.html?window=ID: "Confirm order")
// and "report" (report.html?window=ID: "Report Details").
//
// Every string here can come from an agent (a field's value, a summary, a journal entry): it is
// set with textContent or as an element's value, never parsed as HTML.

import * as bridge from './bridge.js';

const PAGE = document.body.dataset.page;
/** The bridge window this page shows (dialog and report pages: the plugin's scope for this
 * Tauri window, else the `window` query parameter the plugin opens the page with); null on the
 * main page. */
let OWN = PAGE === 'main' ? null : new URLSearchParams(location.search).get('window');
/** How long the window an agent touched stays highlighted. */
const HIGHLIGHT_MS = 3000;
/** Report rows per page: the first page is the snapshot's (the report's table block keeps 20
 * rows), the others come from `load_rows`, called as the user only when the user pages. */
const ROWS_PER_PAGE = 20;
/** Journal rows the panel keeps (the newest). */
const JOURNAL_ROWS = 200;
/** Windows the plugin opens as their own Tauri windows (dialog.html, report.html; main.rs
 * `own_window`). */
const OWN_WINDOW_TITLES = new Set(['Confirm order', 'Report Details']);

/** The last snapshot: `{operableWindowIds, windows}`. */
let snapshot = { operableWindowIds: [], windows: [] };
/** Per report: the page shown and its rows (from `load_rows`). */
const reportPages = new Map();
/** Per field `${windowId}/${label}`: the refusal of the user's last commit. */
const rejected = new Map();
/** The agent's last call: `{windowId, seq, tool, ok, until}`. */
let agentMark = null;
let journalSeq = 0;

// ---------------------------------------------------------------------------------------------
// Small DOM helpers: elements with text, never HTML.

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('data-')) node.setAttribute(key, String(value));
    else if (key in node) node[key] = value;
    else node.setAttribute(key, String(value));
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

const asText = (value) => (value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value));

function status(text, ok = true) {
  const bar = document.getElementById('status');
  if (!bar) return;
  bar.textContent = text;
  bar.className = ok ? 'status' : 'status status-error';
}

const errorText = (e) => (e && typeof e === 'object' ? `${e.code ?? 'error'}: ${e.message ?? JSON.stringify(e)}` : String(e));

/** Runs tool `name` as the user; shows the outcome in the status bar. Resolves with the result or null. */
async function userCall(name, args = {}) {
  try {
    const result = await bridge.call(name, args);
    status(result?.message ?? 'Done');
    return result;
  } catch (e) {
    status(errorText(e), false);
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// Which windows this page shows

function shownHere(win) {
  if (PAGE !== 'main') return win.id === OWN;
  // The main page shows every window the plugin does not give a Tauri window of its own.
  return !OWN_WINDOW_TITLES.has(win.title);
}

const operable = (id) => snapshot.operableWindowIds.includes(id);
const blocks = (win, type) => win.blocks.filter((b) => b.type === type);

// ---------------------------------------------------------------------------------------------
// Rendering

/** Draws window `win` (a snapshot entry) into its section, creating it when new. */
function renderWindow(win) {
  const container = document.getElementById('windows');
  let section = document.querySelector(`section.window[data-window-id="${CSS.escape(win.id)}"]`);
  // A field the user is typing in keeps their text (committed on Enter or focus loss).
  const focused = document.activeElement;
  let draft = null;
  if (section && focused && section.contains(focused) && focused.dataset.field !== undefined) {
    draft = {
      field: focused.dataset.field,
      value: focused.value,
      // Not the text of a commit under way: the new state replaces it.
      dirty: focused.value !== focused.dataset.model && focused.value !== focused.dataset.pending,
      start: focused.selectionStart,
      end: focused.selectionEnd,
    };
  }
  const fresh = el('section', { class: 'window', 'data-window-id': win.id, 'data-version': win.version });
  fresh.append(...windowBody(win));
  if (section) section.replaceWith(fresh);
  else container.append(fresh);
  section = fresh;
  if (draft) {
    const input = section.querySelector(`input[data-field="${CSS.escape(draft.field)}"]`);
    if (input && !input.disabled) {
      if (draft.dirty) input.value = draft.value;
      input.focus();
      try {
        input.setSelectionRange(draft.start, draft.end);
      } catch {
        // Password inputs may refuse selections.
      }
    }
  }
  markAgent();
  if (PAGE !== 'main') document.title = win.title;
}

function windowBody(win) {
  const out = [];
  out.push(el('h2', { class: 'summary', text: win.summary ?? win.title }));
  const meta = el('p', { class: 'meta' }, el('span', { text: `${win.title} · window ${win.id} · version ${win.version}` }));
  meta.append(el('span', { class: 'agent-note', text: '• The agent is working in this window' }));
  if (!operable(win.id)) meta.append(el('span', { class: 'blocked-note', text: 'Waiting for the dialog to be answered' }));
  out.push(meta);
  const fieldset = el('fieldset', { disabled: !operable(win.id) });
  out.push(fieldset);
  const kind = windowKind(win);
  if (kind === 'editor') fieldset.append(...editorBody(win));
  else if (kind === 'dialog') fieldset.append(...dialogBody(win));
  else if (kind === 'report') fieldset.append(...reportBody(win));
  else fieldset.append(...win.blocks.map(genericBlock));
  if (win.title === 'Session locked') {
    fieldset.append(actionButton('Unlock', `${win.id}__unlock`, 'unlock'));
  }
  return out;
}

function windowKind(win) {
  if (blocks(win, 'fields').length > 0) return 'editor';
  if (win.title === 'Confirm order') return 'dialog';
  if (win.title === 'Report Details') return 'report';
  return 'other';
}

function actionButton(label, tool, name, args = {}) {
  const button = el('button', { type: 'button', text: label, 'data-action': name });
  button.addEventListener('click', () => userCall(tool, args).catch(() => {}));
  return button;
}

function genericBlock(block) {
  switch (block.type) {
    case 'text':
      return el('p', { class: 'text', 'data-block': block.id, text: block.text });
    case 'notice':
      return el('p', { class: `notice notice-${block.severity}`, 'data-block': block.id, text: block.text });
    case 'table':
      return table(block.columns, block.rows, block.id);
    case 'list': {
      const list = el(block.ordered ? 'ol' : 'ul', { 'data-block': block.id });
      for (const item of block.items) list.append(el('li', { text: asText(item) }));
      return list;
    }
    default:
      // media and custom: shown as their JSON, as text (no remote images under this CSP).
      return el('pre', { class: 'custom', 'data-block': block.id, text: JSON.stringify(block, null, 2) });
  }
}

function table(columns, rows, id) {
  const head = el('tr', {}, ...columns.map((c) => el('th', { text: asText(c) })));
  const body = el('tbody');
  for (const row of rows) body.append(el('tr', {}, ...row.map((v) => el('td', { text: asText(v) }))));
  return el('table', { 'data-block': id }, el('thead', {}, head), body);
}

// The Order Editor: the form (committed on Enter or focus loss), products, notices, submit, undo.
function editorBody(win) {
  const out = [];
  for (const block of blocks(win, 'fields')) {
    const form = el('div', { class: 'form', 'data-block': block.id });
    for (const item of block.items) form.append(...fieldRow(win, item));
    out.push(form);
  }
  for (const block of win.blocks) {
    if (block.type === 'table') out.push(el('h3', { text: 'Products' }), table(block.columns, block.rows, block.id));
    else if (block.type !== 'fields') out.push(genericBlock(block));
  }
  out.push(el('div', { class: 'actions' }, actionButton('Submit order', `${win.id}__submit`, 'submit')));
  const undo = el('button', { type: 'button', text: "Undo agent's change", id: `undo-${win.id}`, 'data-action': 'undo', disabled: true });
  const note = el('span', { class: 'undo-note', 'data-undo-note': win.id });
  undo.addEventListener('click', async () => {
    try {
      const done = await bridge.undo(win.id);
      status(`Undid the agent's ${done.tool.split('__').pop()}`);
    } catch (e) {
      status(errorText(e), false);
    }
  });
  out.push(el('div', { class: 'undo' }, undo, note));
  refreshUndo(win.id, undo, note);
  return out;
}

async function refreshUndo(id, button, note) {
  try {
    const point = await bridge.canUndo(id);
    button.disabled = false;
    note.textContent = `The agent's ${point.tool.split('__').pop()} (before it: version ${point.versionBefore})`;
  } catch (e) {
    button.disabled = true;
    note.textContent = e?.message ?? String(e);
  }
}

function fieldRow(win, item) {
  const key = `${win.id}/${item.label}`;
  const secret = item.sensitive === true;
  const model = asText(item.value);
  const input = el('input', {
    type: secret ? 'password' : 'text',
    value: model,
    'data-field': item.label,
    'data-model': model,
    autocomplete: 'off',
    spellcheck: false,
  });
  input.id = `field-${win.id}-${item.label.replace(/[^A-Za-z0-9]/g, '-')}`;
  const commit = () => commitField(win.id, item.label, secret, input);
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      commit();
    } else if (e.key === 'Escape') {
      input.value = input.dataset.model;
    }
  });
  input.addEventListener('blur', commit);
  const error = rejected.get(key);
  return [
    el('label', { htmlFor: input.id, text: item.label }),
    input,
    el('span', { class: 'field-error', text: error && error.model === model ? error.text : '' }),
  ];
}

/** Commits the user's text in `input` if it differs from the model: `edit_field` as the user, or
 * `set_payment_password` for the secret (its parameter is sensitive: the journal masks it). */
async function commitField(id, label, secret, input) {
  const value = input.value;
  if (value === input.dataset.model || value === input.dataset.pending) return;
  input.dataset.pending = value;
  const key = `${id}/${label}`;
  try {
    if (secret) await userCall(`${id}__set_payment_password`, { password: value });
    else await userCall(`${id}__edit_field`, { field: label, value });
    rejected.delete(key);
    // Until the new state is drawn, this text is the model: focus loss does not send it again.
    input.dataset.model = value;
  } catch (e) {
    const fieldError = e?.fields?.[0]?.error;
    rejected.set(key, { model: input.dataset.model, text: fieldError ?? e?.message ?? String(e) });
    // The user's text stays in the field (with the refusal beside it) until the model moves on.
    delete input.dataset.pending;
    const win = snapshot.windows.find((w) => w.id === id);
    if (win) renderWindow(win);
  } finally {
    delete input.dataset.pending;
  }
}

// "Confirm order": a window-level modal of the editor.
function dialogBody(win) {
  const grid = el('dl', { class: 'dialog-grid' });
  for (const block of blocks(win, 'text')) {
    grid.append(el('dt', { text: block.id === 'amount' ? 'Amount' : block.id === 'recipient' ? 'Recipient' : block.id }));
    grid.append(el('dd', { 'data-block': block.id, text: block.text }));
  }
  const out = [grid];
  if ((win.summary ?? '').startsWith('Waiting for the user')) {
    out.push(el('p', { class: 'user-note', text: 'Only you can confirm this order: the agent cannot.' }));
  }
  out.push(el('div', { class: 'actions' },
    actionButton('Confirm', `${win.id}__confirm`, 'confirm'),
    actionButton('Cancel', `${win.id}__cancel`, 'cancel')));
  return out;
}

// "Report Details": the snapshot holds the first rows; pages come from `load_rows`.
function reportBody(win) {
  const [block] = blocks(win, 'table');
  const total = block?.total ?? block?.rows.length ?? 0;
  const state = reportPages.get(win.id) ?? { page: 0, rows: null };
  const pages = Math.max(1, Math.ceil(total / ROWS_PER_PAGE));
  const first = state.page * ROWS_PER_PAGE;
  const last = Math.min(first + ROWS_PER_PAGE, total);
  const prev = el('button', { type: 'button', text: '< Previous', 'data-action': 'previous', disabled: state.page === 0 });
  const next = el('button', { type: 'button', text: 'Next >', 'data-action': 'next', disabled: state.page + 1 >= pages });
  prev.addEventListener('click', () => loadPage(win.id, state.page - 1));
  next.addEventListener('click', () => loadPage(win.id, state.page + 1));
  const pager = el('div', { class: 'pager' }, prev, el('span', { class: 'range', text: `Rows ${first + 1}–${last} of ${total}` }), next);
  const rows = state.rows ?? (block ? block.rows.slice(0, ROWS_PER_PAGE) : []);
  const columns = block?.columns ?? ['Order', 'Customer', 'Total ($)'];
  const out = [pager, table(columns, rows, 'rows')];
  if (state.rows === null && state.page > 0) loadPage(win.id, state.page);
  out.push(el('div', { class: 'actions' }, actionButton('Close', `${win.id}__close`, 'close')));
  return out;
}

async function loadPage(id, page) {
  try {
    const result = await bridge.call(`${id}__load_rows`, { offset: page * ROWS_PER_PAGE, limit: ROWS_PER_PAGE });
    const rows = result.result.rows.map((r) => [r.order, r.customer, r.total.toFixed(2)]);
    reportPages.set(id, { page, rows });
    const win = snapshot.windows.find((w) => w.id === id);
    if (win) renderWindow(win);
  } catch (e) {
    status(errorText(e), false);
  }
}

// ---------------------------------------------------------------------------------------------
// The state: a full read at start, then only the windows `bridge://changed` names.

async function readAll() {
  snapshot = await bridge.windows();
  const shown = snapshot.windows.filter(shownHere);
  const ids = new Set(shown.map((w) => w.id));
  for (const section of document.querySelectorAll('section.window')) {
    if (!ids.has(section.dataset.windowId)) section.remove();
  }
  for (const win of shown) renderWindow(win);
  if (PAGE !== 'main' && !snapshot.windows.some((w) => w.id === OWN)) status('This window has closed.');
}

async function onChanged(event) {
  snapshot = await bridge.windows();
  for (const id of event.closed) {
    document.querySelector(`section.window[data-window-id="${CSS.escape(id)}"]`)?.remove();
    reportPages.delete(id);
  }
  const redraw = new Set(event.changed);
  if (event.operableChanged) for (const w of snapshot.windows) redraw.add(w.id);
  for (const win of snapshot.windows) {
    if (redraw.has(win.id) && shownHere(win)) {
      if (windowKind(win) === 'report' && event.changed.includes(win.id)) reportPages.delete(win.id);
      renderWindow(win);
    }
  }
  if (PAGE === 'main') refreshUserConfirms();
}

// ---------------------------------------------------------------------------------------------
// The agent's last call, highlighted for a few seconds

function noteAgentCall(call) {
  if (!call || (agentMark && agentMark.seq === call.seq)) return;
  const age = call.ageMs ?? 0;
  agentMark = { ...call, until: Date.now() + Math.max(0, HIGHLIGHT_MS - age) };
  markAgent();
  setTimeout(markAgent, HIGHLIGHT_MS + 50);
}

function markAgent() {
  const live = agentMark && Date.now() < agentMark.until;
  for (const section of document.querySelectorAll('section.window')) {
    section.classList.toggle('agent', Boolean(live && section.dataset.windowId === agentMark.windowId));
  }
  const badge = document.getElementById('agent-status');
  if (badge) {
    badge.textContent = live ? `Agent: ${agentMark.action} on ${agentMark.windowId ?? 'the app'}${agentMark.ok ? '' : ' (refused)'}` : 'Agent idle';
    badge.classList.toggle('live', Boolean(live));
  }
  document.body.dataset.agentHighlight = live ? agentMark.windowId ?? 'app' : '';
}

/** The agent's last call when the page starts (later ones come as events). */
async function pollAgent() {
  try {
    noteAgentCall(await bridge.lastAgentCall());
  } catch {
    // The bridge stopped: nothing to highlight.
  }
}

// ---------------------------------------------------------------------------------------------
// The journal panel (main page)

function who(actor) {
  if (actor.kind === 'user') return 'You';
  if (actor.kind === 'app') return 'App';
  let label = 'Agent';
  if (actor.clientInfo?.name) label += ` ${actor.clientInfo.name}`;
  if (actor.token) label += ` · token ${actor.token}`;
  else if (actor.connection) label += ` · ${actor.connection}`;
  return label;
}

function what(op) {
  const action = (tool) => tool.split('__').pop();
  switch (op.kind) {
    case 'tool':
      return action(op.name);
    case 'undo':
      return `undo ${action(op.tool)}`;
    case 'clearFailure':
      return 'clear failure';
    default:
      return op.kind;
  }
}

function versions(entry) {
  const [b, a] = [entry.versionBefore, entry.versionAfter];
  if (b != null && a != null) return a !== b ? `v${b}→${a}` : `v${b}`;
  if (a != null) return `→v${a}`;
  if (b != null) return `v${b}→closed`;
  return '';
}

function journalRow(entry) {
  const ok = entry.outcome.status === 'ok';
  const outcome = ok ? 'ok' : entry.outcome.code ?? entry.outcome.status;
  const args = entry.arguments && typeof entry.arguments === 'object' && Object.keys(entry.arguments).length === 0 ? '' : asText(entry.arguments);
  const time = new Date(entry.at).toTimeString().slice(0, 8);
  return el('li', {
      class: `${entry.actor.kind} ${ok ? 'ok' : 'refused'}`,
      'data-seq': entry.seq,
      'data-actor': entry.actor.kind,
      'data-what': what(entry.operation),
      'data-window': entry.windowId ?? 'app',
      'data-outcome': outcome,
    },
    el('span', { class: 'time', text: time }),
    el('span', { class: 'who', text: who(entry.actor) }),
    el('span', { class: 'what', text: what(entry.operation) }),
    el('span', { class: 'win', text: entry.windowId ?? 'app' }),
    el('span', { class: 'outcome', text: entry.count > 1 ? `${outcome} ×${entry.count}` : outcome }),
    el('span', { class: 'versions', text: versions(entry) }),
    el('span', { class: 'args', text: args }));
}

let journalBusy = false;
let journalAgain = false;
async function refreshJournal() {
  // One read at a time; an event during a read asks for one more after it (none is lost).
  if (journalBusy) {
    journalAgain = true;
    return;
  }
  journalBusy = true;
  try {
    // The newest entry again: identical refusals in a row are folded into it (its count grows).
    const entries = await bridge.journal(Math.max(0, journalSeq - 1));
    const list = document.getElementById('journal-rows');
    for (const entry of entries) {
      const row = journalRow(entry);
      const old = list.querySelector(`li[data-seq="${entry.seq}"]`);
      if (old) old.replaceWith(row);
      else list.prepend(row);
      journalSeq = Math.max(journalSeq, entry.seq);
    }
    while (list.children.length > JOURNAL_ROWS) list.lastElementChild.remove();
    document.getElementById('journal-count').textContent = `(${journalSeq} entries)`;
  } catch {
    // The bridge stopped.
  } finally {
    journalBusy = false;
  }
  if (journalAgain) {
    journalAgain = false;
    refreshJournal();
  }
}

// ---------------------------------------------------------------------------------------------
// The main page's switches

const invoke = (cmd, args) => window.__TAURI__.core.invoke(cmd, args ?? {});

async function refreshUserConfirms() {
  try {
    document.getElementById('user-confirms').checked = await invoke('user_confirms');
  } catch (e) {
    status(String(e), false);
  }
}

function setupMain() {
  document.getElementById('new-report').addEventListener('click', () => userCall('app__new_report').catch(() => {}));
  document.getElementById('lock').addEventListener('click', () => userCall('app__lock').catch(() => {}));
  const box = document.getElementById('user-confirms');
  box.addEventListener('change', async () => {
    try {
      box.checked = await invoke('set_user_confirms', { on: box.checked });
      status(box.checked ? 'Only you confirm orders now' : 'Agents may confirm orders again');
    } catch (e) {
      status(String(e), false);
      refreshUserConfirms();
    }
  });
  document.getElementById('mcp-config').addEventListener('click', async () => {
    const pre = document.getElementById('mcp-config-text');
    try {
      const config = await bridge.mcpConfig();
      const text = JSON.stringify({ mcpServers: config.mcpServers }, null, 2);
      pre.textContent = config.transport === 'http'
        ? `URL: ${config.url}\nToken: ${config.token}\n\n${text}`
        : `MCP over stdio: the MCP host that started this app is connected.\n\n${text}`;
      pre.hidden = false;
      try {
        await navigator.clipboard.writeText(text);
        status('MCP configuration copied to the clipboard');
      } catch {
        status('MCP configuration shown below (no clipboard here): copy it into your MCP host');
      }
    } catch (e) {
      status(errorText(e), false);
    }
  });
  refreshUserConfirms();
  refreshJournal();
  // Every journal append is an event (bridge://journal): the panel never polls, so the page
  // idles like one without bridge.
  bridge.onJournal(() => refreshJournal()).catch((e) => status(errorText(e), false));
}

// ---------------------------------------------------------------------------------------------

async function start() {
  if (PAGE === 'main') setupMain();
  else OWN = (await bridge.scope())?.windowId ?? OWN;
  await bridge.onChanged((event) => onChanged(event).catch((e) => status(errorText(e), false)));
  // Every agent call, refused ones and a `focus` included (they change no window).
  await bridge.onAgentCall(noteAgentCall);
  await readAll();
  pollAgent();
  document.body.dataset.ready = '1';
}

start().catch((e) => status(errorText(e), false));
