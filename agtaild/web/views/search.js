// Search (#/search): best first, snippets with the matches marked; full-text, or by meaning
// (semantic, hybrid: docs/semantic.md) when vectors and a model are there. Without a mode in
// the address the daemon picks (hybrid once the vectors cover the index, else full-text) and
// the menu shows what it picked; every hit says which ranking found it.

import { api, ApiError } from '../api.js';
import { $, add, clear, h, snippetNodes } from '../dom.js';
import { fmtFull, fmtInt, oneLine, relTime, sessionDate, sessionTitle, toDate } from '../format.js';
import { queryHash, sessionHash, setHash } from '../router.js';
import { meaning, statusText, unavailable } from '../meaning.js';
import { handleError } from '../ui.js';
import { agentBadge, agentSelect, sessionTags, tag } from '../widgets.js';
import { branchMark } from './branches.js';
import { resultText } from './events.js';

const SEARCH_PAGE = 40;
const MODES = [
  ['phrase', 'Full-text'],
  ['semantic', 'Semantic'],
  ['hybrid', 'Hybrid'],
];
const KINDS = ['text', 'thinking', 'tool_use', 'tool_result', 'hook', 'summary', 'system', 'unknown'];

export const searchView = {
  root: null,
  key: null,
  next: null,
  loading: false,
  params: {},

  build() {
    this.root = $('#view-search');
    this.q = h('input', { type: 'search', class: 'search-q', placeholder: 'Words or a phrase…', 'aria-label': 'Search query', autocomplete: 'off', spellcheck: 'false' });
    this.agentBox = h('span');
    this.kind = h('select', { class: 'kind-select', 'aria-label': 'Event kind' }, h('option', { value: '', text: 'All kinds' }), KINDS.map((k) => h('option', { value: k, text: k.replace('_', ' ') })));
    this.mode = h('select', { class: 'mode-select', 'aria-label': 'Ranking' }, MODES.map(([v, label]) => h('option', { value: v, text: label })));
    this.form = h('form', { class: 'toolbar search-form', role: 'search' }, h('h1', { text: 'Search' }), this.q, this.mode, this.agentBox, this.kind, h('button', { type: 'submit', class: 'primary', text: 'Search' }));
    this.form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.submit();
    });
    this.kind.addEventListener('change', () => this.submit());
    this.mode.addEventListener('change', () => {
      this.params.mode = this.mode.value;
      this.submit();
    });
    // Why semantic and hybrid cannot be chosen (or how far the vectors are), and the status.
    this.modeNote = h('div', { class: 'mode-note' });
    this.meaningLine = h('div', { class: 'meaning-line' });
    meaning.onChange((st) => this.applyMeaning(st));
    this.status = h('div', { class: 'status-line' });
    this.results = h('div', { class: 'hits' });
    this.moreBox = h('div', { class: 'more-box' });
    add(this.root, [this.form, this.modeNote, this.meaningLine, this.status, this.results, this.moreBox]);
    this.applyMeaning(meaning.status);
  },

  submit(agent) {
    setHash(queryHash('#/search', { q: this.q.value.trim(), mode: this.params.mode, agent: agent !== undefined ? agent : this.params.agent, kind: this.kind.value }));
  },

  // The semantic and hybrid options, enabled or not (with the reason), and the status line.
  applyMeaning(st) {
    if (!this.root) return;
    const reason = unavailable(st);
    for (const opt of this.mode.options) if (opt.value !== 'phrase') opt.disabled = !!reason;
    let note = reason || '';
    if (!reason && st.coverage !== undefined && st.coverage < 1) note = 'The vectors cover ' + Math.floor(st.coverage * 100) + '% of the index: semantic and hybrid find only what is embedded so far.';
    this.modeNote.textContent = note;
    this.modeNote.hidden = !note;
    this.modeNote.classList.toggle('unavailable', !!reason);
    this.mode.title = reason || 'How hits are ranked: full-text (the words), semantic (meaning), hybrid (both fused)';
    this.meaningLine.textContent = st && st.enabled ? statusText(st) : '';
    this.meaningLine.hidden = !(st && st.enabled);
  },

  show(params) {
    if (!this.root) this.build();
    const p = { q: params.get('q') || '', mode: params.get('mode') || '', agent: params.get('agent') || '', kind: params.get('kind') || '' };
    this.params = p;
    this.q.value = p.q;
    this.kind.value = p.kind;
    this.mode.value = p.mode || (meaning.status && meaning.status.ready ? 'hybrid' : 'phrase');
    this.askMeaning();
    clear(this.agentBox).append(agentSelect(p.agent, (v) => this.submit(v)));
    $('#quicksearch-q').value = p.q;
    const key = JSON.stringify(p);
    if (key === this.key) return;
    this.key = key;
    clear(this.results);
    clear(this.moreBox);
    this.next = null;
    if (!p.q) {
      this.status.textContent = 'Search every transcript: messages, thinking, tool calls and their results.';
      this.q.focus();
      return;
    }
    this.load(false);
  },

  // The embeddings status now (the top bar's poll may be 20 s old): /health's `embeddings`,
  // absent where search by meaning is not configured (or a server has none).
  async askMeaning() {
    try {
      meaning.update((await api('/health')).embeddings);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) handleError(err, 'Search');
    }
  },

  async load(more) {
    const key = this.key;
    const p = this.params;
    this.loading = true;
    if (!more) this.status.textContent = 'Searching…';
    this.renderMore();
    try {
      const body = await api('/search', { q: p.q, mode: p.mode, agent: p.agent, kind: p.kind, limit: SEARCH_PAGE, cursor: more ? this.next : null });
      if (key !== this.key) return;
      if (!p.mode) this.mode.value = body.mode || 'phrase'; // what the daemon picked
      const hits = body.hits || [];
      const frag = document.createDocumentFragment();
      for (const hit of hits) frag.append(hitRow(hit, p.q));
      this.results.append(frag);
      this.next = body.next || null;
      const n = this.results.childElementCount;
      this.status.textContent = (n ? fmtInt(n) + (this.next ? '+' : '') + ' match' + (n === 1 && !this.next ? '' : 'es') + ', best first' : 'Nothing matches \u201c' + p.q + '\u201d.') + (body.note ? ' (' + body.note + ')' : '');
    } catch (err) {
      if (key !== this.key) return;
      if (err instanceof ApiError && (err.status === 400 || err.status === 409)) {
        this.status.textContent = err.message;
        if (err.status === 409) this.askMeaning(); // the model failed: the menu says so now
      }
      else handleError(err, 'Search');
    } finally {
      this.loading = false;
      this.renderMore();
    }
  },

  renderMore() {
    clear(this.moreBox);
    if (this.next) this.moreBox.append(h('button', { type: 'button', class: 'load-more', disabled: this.loading, text: this.loading ? 'Loading…' : 'More matches', onclick: () => this.load(true) }));
  },

  // Another view is shown: the top bar's box holds a query only here (show() puts it back),
  // unless the reader is typing into it.
  leave() {
    const box = $('#quicksearch-q');
    if (box && document.activeElement !== box) box.value = '';
  },
};

function hitRow(hit, query) {
  const s = hit.session || {};
  const ev = hit.event || {};
  const d = toDate(ev.ts) || sessionDate(s);
  const where = [ev.kind === 'text' ? ev.role || 'text' : String(ev.kind || '').replace('_', ' '), ev.tool].filter(Boolean).join(' · ');
  const snippet = hit.snippet !== undefined && hit.snippet !== null ? hit.snippet : oneLine(ev.text || resultText(ev.result), 240);
  return h(
    'a',
    { class: 'hit', href: sessionHash(s.agent, s.id, ev.seq) },
    h('div', { class: 'hit-head' }, agentBadge(s.agent), h('span', { class: 'hit-title', text: sessionTitle(s) }), s.project ? h('span', { class: 'project', text: s.project }) : null, sessionTags(s)),
    h('div', { class: 'snippet' }, snippetNodes(snippet, query)),
    h('div', { class: 'hit-meta' }, foundBy(hit), h('span', { class: 'kind', text: where }), branchMark(ev) && branchMark(ev).branch === 'inactive' ? tag('inactive branch', 'branch-tag', 'On a conversation branch that was rewound or edited away; opening it shows that branch') : null, d ? h('time', { text: relTime(d), title: fmtFull(d) }) : null),
  );
}

// Which ranking found the hit: a full-text search's are all full-text; semantic and hybrid
// hits say so in `found_by`.
function foundBy(hit) {
  const by = Array.isArray(hit.found_by) && hit.found_by.length ? hit.found_by : ['full-text'];
  const text = by.join(' + ');
  return tag(text, 'found-by', 'Found by the ' + (by.length > 1 ? 'full-text and the semantic rankings' : by[0] + ' ranking'));
}
