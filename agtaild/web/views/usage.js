// Live usage (#/live, GET /usage/live): the limit windows, today's total, and the active
// sessions sorted by burn, each with a small chart of its tokens per minute over 30 minutes.
//
// Asked again every REFRESH_MS while shown (the page keeps one SSE stream, /changes; this view
// does not open a second one): burn rates and reset times move with the clock alone.

import { api } from '../api.js';
import { $, clear, h } from '../dom.js';
import { fmtTokens, fmtUsageCost, oneLine, shortId } from '../format.js';
import { sessionHash } from '../router.js';
import { handleError } from '../ui.js';
import { agentBadge } from '../widgets.js';

const REFRESH_MS = 5000;

function duration(seconds) {
  if (seconds === null || seconds === undefined) return '-';
  const s = Math.max(0, Math.floor(Math.abs(seconds)));
  if (s < 60) return s + 's';
  if (s < 3600) return Math.floor(s / 60) + 'm';
  if (s < 86400) return Math.floor(s / 3600) + 'h' + String(Math.floor((s % 3600) / 60)).padStart(2, '0') + 'm';
  return Math.floor(s / 86400) + 'd' + String(Math.floor((s % 86400) / 3600)).padStart(2, '0') + 'h';
}

function rate(r) {
  const dollars = r.usd_per_hour === null ? (r.usd_per_hour_known ? '$' + r.usd_per_hour_known.toFixed(2) + '+?' : '?') : '$' + r.usd_per_hour.toFixed(2);
  return fmtTokens(Math.round(r.tokens_per_minute || 0)) + '/min · ' + dollars + '/h';
}

function windowText(w) {
  if (w.kind === 'block') {
    let text = `5-hour block ${w.start.slice(11, 16)}–${w.end.slice(11, 16)} UTC: ${fmtTokens(w.usage.total_tokens)} tokens, ${fmtUsageCost(w.usage)}; resets in ${duration(w.resets_in_seconds)}`;
    if (w.projection) text += ` · projection: ${fmtTokens(w.projection.total_tokens)} tokens by the end`;
    return text;
  }
  if (w.kind === 'week') return `last 7 days: ${fmtTokens(w.usage.total_tokens)} tokens, ${fmtUsageCost(w.usage)} (computed; no limit recorded)`;
  const age = `recorded ${duration(w.age_seconds)} ago`;
  const unknown = w.unknown ? ' · unknown fields: ' + Object.keys(w.unknown).sort().join(', ') : '';
  if (w.kind === 'snapshot') return `rate limits: ${w.plan_type ? 'plan ' + w.plan_type : 'no window recorded'} (${age})${unknown}`;
  const used = w.used_percent === null ? '?' : w.used_percent + '%';
  const resets = w.resets_in_seconds === null ? 'reset time unknown' : w.resets_in_seconds >= 0 ? 'resets in ' + duration(w.resets_in_seconds) : 'reset passed';
  return `${w.kind} (${w.window_minutes} min): ${used} used, ${resets} (${age})${unknown}`;
}

function chart(minutes) {
  const max = Math.max(1, ...minutes);
  const box = h('span', { class: 'burn-chart', role: 'img', 'aria-label': 'tokens per minute, last 30 minutes' });
  for (const n of minutes) {
    const bar = h('span', { class: 'burn-bar', title: fmtTokens(n) + ' tokens' });
    bar.style.height = Math.round((n / max) * 100) + '%';
    box.append(bar);
  }
  return box;
}

export const usageView = {
  root: null,
  timer: null,
  seq: 0,

  async show() {
    this.root = $('#view-live');
    if (!this.root.firstChild) this.root.append(h('div', { class: 'toolbar' }, h('h1', { text: 'Live usage' })), h('div', { class: 'live-body' }, h('div', { class: 'loading', text: 'Loading…' })));
    await this.refresh();
  },

  leave() {
    clearTimeout(this.timer);
    this.timer = null;
  },

  async refresh() {
    clearTimeout(this.timer);
    const seq = ++this.seq;
    const body = this.root.querySelector('.live-body');
    try {
      const doc = await api('/usage/live', {});
      if (seq !== this.seq) return;
      clear(body).append(...this.render(doc));
    } catch (err) {
      if (seq !== this.seq) return;
      handleError(err, 'Live usage');
    }
    this.timer = setTimeout(() => this.refresh(), REFRESH_MS);
  },

  render(doc) {
    const windows = h('ul', { class: 'live-windows' }, doc.windows.map((w) => h('li', { class: 'live-window', dataset: { kind: w.kind, source: w.source } }, agentBadge(w.agent), ' ', windowText(w))));
    const today = h('p', { class: 'live-today', text: `Today (${doc.today.day}): ${fmtTokens(doc.today.usage.total_tokens)} tokens, ${fmtUsageCost(doc.today.usage)}` });
    if (!doc.sessions.length) return [windows, today, h('div', { class: 'empty', text: `No session active in the last ${doc.active_minutes} minutes.` })];
    const head = h('thead', {}, h('tr', {}, ['Session', 'Last 30 min', 'Burn 5 min', 'Burn 30 min', 'So far', 'Model', 'Idle'].map((t) => h('th', { text: t }))));
    const rows = doc.sessions.map((s) =>
      h(
        'tr',
        { class: 'live-session', dataset: { agent: s.agent, id: s.id } },
        h('td', {}, agentBadge(s.agent), ' ', h('a', { href: sessionHash(s.agent, s.id), text: oneLine(s.title || shortId(s.id), 80) }), h('div', { class: 'mono', text: s.project || s.cwd || '' })),
        h('td', {}, chart(s.minutes || [])),
        h('td', { class: 'num', text: rate(s.burn['5m']) }),
        h('td', { class: 'num', text: rate(s.burn['30m']) }),
        h('td', { class: 'num', text: fmtTokens(s.usage.total_tokens) + ' · ' + fmtUsageCost(s.usage) }),
        h('td', { class: 'mono', text: s.model || '-' }),
        h('td', { class: 'num', text: duration(s.idle_seconds) }),
      ),
    );
    return [windows, today, h('div', { class: 'table-wrap' }, h('table', { class: 'stats live' }, head, h('tbody', {}, rows)))];
  },
};
