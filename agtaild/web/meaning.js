// Search by meaning as the page sees it: the embeddings status (docs/semantic.md), whether
// the semantic and hybrid modes can be chosen (and why not), and its line in the top bar.
//
// The status is /health's `embeddings` (docs/api.md; absent when search by meaning is not
// configured): progress.js polls it and the search view asks when it is shown; both feed
// update(), and every listener (the search view) is told. The top-bar line shows while vectors are being built,
// while the index is not covered yet, and while the model fails (with the backoff).

import { $, h } from './dom.js';
import { fmtInt } from './format.js';

const OFF = { enabled: false, backend: 'off', state: 'off', healthy: false, ready: false };

export const meaning = {
  status: null, // the last embeddings status seen, or null before the first
  listeners: [],
  node: null,

  onChange(fn) {
    this.listeners.push(fn);
  },

  // ``doc``: an embeddings status; undefined or null means none is configured.
  update(doc) {
    this.status = doc || OFF;
    this.render();
    for (const fn of this.listeners) fn(this.status);
  },

  // Polling faster while something moves: a build runs, the index is not covered, a retry waits.
  moving() {
    const s = this.status;
    return !!(s && s.enabled && (s.state === 'building' || s.error || (s.coverage !== undefined && s.coverage < 1)));
  },

  render() {
    if (!this.node) {
      this.fill = h('span', { class: 'index-progress-fill' });
      this.label = h('span', { class: 'index-progress-text' });
      this.node = h('div', { class: 'index-progress embed-progress', role: 'status', hidden: true }, h('span', { class: 'index-progress-bar' }, this.fill), this.label);
      const bar = $('.topbar');
      if (!bar) return;
      bar.insertBefore(this.node, $('#live-toggle'));
    }
    const s = this.status;
    const shown = this.moving();
    this.node.hidden = !shown;
    if (!shown) return;
    this.node.classList.toggle('failing', !!s.error);
    this.fill.style.width = Math.round(Math.min(Math.max(s.coverage || 0, 0), 1) * 100) + '%';
    this.label.textContent = shortText(s);
    this.node.title = statusText(s);
  },
};

function pct(coverage) {
  const p = (coverage || 0) * 100;
  return (p > 0 && p < 1 ? p.toFixed(1) : Math.floor(p)) + '%';
}

// The top bar's few words.
export function shortText(s) {
  if (s.error) return 'Embeddings failing' + (s.retry_in !== undefined ? ' · retry in ' + fmtInt(s.retry_in) + ' s' : '');
  let text = (s.state === 'building' ? 'Embedding ' : 'Embedded ') + pct(s.coverage);
  if (s.rate) text += ' · ' + fmtInt(Math.round(s.rate)) + ' texts/s';
  return text;
}

// Everything the status says, in one line (the search view shows it; the top bar's title).
export function statusText(s) {
  if (!s || !s.enabled) return 'Search by meaning is off' + (s && s.error ? ': ' + s.error : ': no backend configured (docs/semantic.md)');
  const parts = ['backend ' + s.backend];
  if (s.model) parts.push('model ' + s.model);
  if (s.events !== undefined) parts.push(fmtInt(s.events_embedded || 0) + '/' + fmtInt(s.events) + ' events (' + pct(s.coverage) + ')');
  if (s.chunks !== undefined) parts.push(fmtInt(s.chunks) + ' vectors');
  if (s.rate) parts.push(fmtInt(Math.round(s.rate)) + ' texts/s');
  let text = 'Search by meaning: ' + parts.join(', ') + '; ' + (s.state || 'idle');
  if (s.error) text += ': ' + s.error + (s.retry_in !== undefined ? ' (retrying in ' + fmtInt(s.retry_in) + ' s)' : '');
  return text;
}

// Why the semantic and hybrid modes cannot be chosen now, or null when they can.
export function unavailable(s) {
  if (!s) return 'Search by meaning: status not known yet';
  if (!s.enabled) return s.error ? 'Search by meaning is off: ' + s.error : 'Search by meaning is off: no backend configured (docs/semantic.md)';
  if (s.error) return 'The model is failing: ' + s.error + (s.retry_in !== undefined ? ' (retrying in ' + fmtInt(s.retry_in) + ' s)' : '');
  if (!s.chunks) return 'No vectors yet: ' + (s.state === 'building' ? 'the embedder is building them' : 'nothing is embedded') + ' (' + pct(s.coverage) + ')';
  return null;
}
