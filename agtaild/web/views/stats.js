// Tokens and cost (#/stats): totals, the day chart, tables, the hour heat map, tool calls.

import { api } from '../api.js';
import { $, clear, h } from '../dom.js';
import { counted, fmtCost, fmtInt, fmtTokens, fmtUsageCost, unpricedTitle } from '../format.js';
import { queryHash, setHash } from '../router.js';
import { handleError } from '../ui.js';
import { agentSelect, undatedNote, usageCards } from '../widgets.js';

export const statsView = {
  root: null,
  key: null,

  build() {
    this.root = $('#view-stats');
  },

  async show(params) {
    if (!this.root) this.build();
    const p = { agent: params.get('agent') || '', days: params.get('days') || '30', stack: params.get('stack') || '' };
    const key = JSON.stringify(p);
    if (key === this.key) return;
    this.key = key;
    const since = p.days === 'all' ? null : new Date(Date.now() - Number(p.days) * 86400000).toISOString().slice(0, 10);
    const range = h('select', { class: 'range-select', 'aria-label': 'Period' }, [['7', 'Last 7 days'], ['30', 'Last 30 days'], ['90', 'Last 90 days'], ['365', 'Last year'], ['all', 'All time']].map(([v, t]) => h('option', { value: v, text: t })));
    range.value = p.days;
    range.addEventListener('change', () => setHash(queryHash('#/stats', { agent: p.agent, days: range.value, stack: p.stack })));
    const body = h('div', { class: 'stats-body' }, h('div', { class: 'loading', text: 'Loading…' }));
    clear(this.root).append(
      h('div', { class: 'toolbar' }, h('h1', { text: 'Usage' }), agentSelect(p.agent, (v) => setHash(queryHash('#/stats', { agent: v, days: p.days }))), range),
      body,
    );
    try {
      const q = { agent: p.agent, since };
      const [byDay, byModel, byAgent, byTool, byHour] = await Promise.all(
        ['day', 'model', 'agent', 'tool', 'hour'].map((by) => api('/stats', Object.assign({ by }, q))),
      );
      if (key !== this.key) return;
      const stack = STACKS.includes(p.stack) ? p.stack : 'model';
      const stackSel = h('select', { class: 'stack-select', 'aria-label': 'Stack the bars by' }, STACKS.map((v) => h('option', { value: v, text: v === 'none' ? 'Not stacked' : 'By ' + v })));
      stackSel.value = stack;
      stackSel.addEventListener('change', () => setHash(queryHash('#/stats', { agent: p.agent, days: p.days, stack: stackSel.value })));
      clear(body).append(
        usageCards(byDay.totals || {}),
        undatedNote(byDay.undated),
        dayChart(byDay.rows || [], stack === 'none' ? null : stack, stackSel),
        h('div', { class: 'stats-cols' }, statsTable('By model', byModel.rows || [], 'Model', true), statsTable('By agent', byAgent.rows || [], 'Agent', true)),
        hourMap(byHour.rows || []),
        toolTable(byTool.rows || []),
        statsTable('By day', (byDay.rows || []).slice().sort((a, b) => String(b.key).localeCompare(String(a.key))), 'Day'),
      );
    } catch (err) {
      if (key !== this.key) return;
      clear(body);
      handleError(err, 'Stats');
    }
  },
};

// Every day from the first to the last row's, with the days without usage as zero.
function fillDays(rows) {
  const byKey = new Map();
  for (const r of rows) if (/^\d{4}-\d{2}-\d{2}$/.test(String(r.key))) byKey.set(r.key, r);
  const keys = [...byKey.keys()].sort();
  if (!keys.length) return [];
  const out = [];
  const day = new Date(keys[0] + 'T00:00:00Z');
  const last = new Date(keys[keys.length - 1] + 'T00:00:00Z');
  for (let i = 0; day <= last && i < 4000; i++) {
    const key = day.toISOString().slice(0, 10);
    out.push(byKey.get(key) || { key, total_tokens: 0, cost_usd: 0 });
    day.setUTCDate(day.getUTCDate() + 1);
  }
  return out;
}

const STACKS = ['model', 'agent', 'none'];
const PALETTE = 8; // series colours (.s0 … .s7 in style.css); the rest share "other"

// Tokens per day; stacked by model or agent (the day rows' split), with a legend.
function dayChart(rows, stack, control) {
  const days = fillDays(rows);
  if (!days.length) return h('div', { class: 'empty', text: 'No usage in this period.' });
  const max = Math.max(1, ...days.map((r) => r.total_tokens || 0));
  const chart = h('div', { class: 'chart', role: 'img', 'aria-label': 'Tokens per day' + (stack ? ' by ' + stack : '') });
  const totals = new Map();
  if (stack) for (const r of days) for (const [k, v] of Object.entries((r.split && r.split[stack]) || {})) totals.set(k, (totals.get(k) || 0) + v);
  const series = [...totals.entries()].sort((a, b) => b[1] - a[1]).map(([k]) => k);
  const colour = (k) => {
    const i = series.indexOf(k);
    return i >= 0 && i < PALETTE ? 's' + i : 'sx';
  };
  for (const r of days) {
      const col = h('div', { class: 'col', title: r.key + ': ' + counted(r.total_tokens || 0, 'token') + ', ' + fmtUsageCost(r) });
    const parts = stack && r.split ? Object.entries(r.split[stack] || {}).filter(([, v]) => v > 0) : [];
    if (parts.length) {
      parts.sort((a, b) => series.indexOf(b[0]) - series.indexOf(a[0]));
      const stackBox = h('div', { class: 'stack' });
      stackBox.style.height = Math.max(1, Math.round(((r.total_tokens || 0) / max) * 100)) + '%';
      for (const [k, v] of parts) {
        const seg = h('div', { class: 'seg ' + colour(k), title: r.key + ' \u00b7 ' + k + ': ' + fmtInt(v) + ' tokens' });
        seg.style.height = (v / Math.max(1, r.total_tokens || 1)) * 100 + '%';
        stackBox.append(seg);
      }
      col.append(stackBox);
    } else {
      const bar = h('div', { class: 'bar' + (r.total_tokens ? '' : ' zero') });
      bar.style.height = (r.total_tokens ? Math.max(1, Math.round((r.total_tokens / max) * 100)) : 0) + '%';
      col.append(bar);
    }
    chart.append(col);
  }
  const legend = series.length
    ? h('div', { class: 'legend' }, series.slice(0, PALETTE).map((k) => h('span', { class: 'lg' }, h('i', { class: 'sw ' + colour(k) }), k)), series.length > PALETTE ? h('span', { class: 'lg' }, h('i', { class: 'sw sx' }), 'other') : null)
    : null;
  return h(
    'figure',
    { class: 'chart-box' },
    h('div', { class: 'chart-head' }, h('span', { class: 'chart-title', text: 'Tokens per day' }), control || null, h('span', { class: 'chart-max', text: 'peak ' + fmtTokens(max) })),
    chart,
    h('figcaption', {}, h('span', { text: days[0].key }), h('span', { text: days[days.length - 1].key })),
    legend,
  );
}

// Activity by hour of day × weekday (local time): a heat map of events per cell.
function hourMap(rows) {
  const days = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
  const cells = new Map(rows.map((r) => [r.weekday + ' ' + r.hour, r]));
  const max = Math.max(1, ...rows.map((r) => r.events || 0));
  const grid = h('div', { class: 'heat', role: 'img', 'aria-label': 'Activity by hour and weekday' });
  grid.append(h('span', { class: 'hl' }));
  for (let hr = 0; hr < 24; hr++) grid.append(h('span', { class: 'hh', text: hr % 3 === 0 ? String(hr) : '' }));
  for (let d = 1; d <= 7; d++) {
    grid.append(h('span', { class: 'hl', text: days[d - 1] }));
    for (let hr = 0; hr < 24; hr++) {
      const r = cells.get(d + ' ' + hr);
      const n = (r && r.events) || 0;
        const cell = h('span', { class: 'hc' + (n ? '' : ' none'), dataset: { day: d, hour: hr, events: n }, title: days[d - 1] + ' ' + String(hr).padStart(2, '0') + ':00 \u00b7 ' + counted(n, 'event') + (r && r.total_tokens ? ', ' + fmtTokens(r.total_tokens) + ' tokens' : '') });
      if (n) cell.style.opacity = String(0.15 + 0.85 * (n / max));
      grid.append(cell);
    }
  }
  return h('section', { class: 'stats-sec' }, h('h2', { text: 'Activity by hour (local time)' }), h('div', { class: 'heat-box' }, grid));
}

// Tool calls: calls, errors and the agents that made them.
function toolTable(rows) {
  const max = Math.max(1, ...rows.map((r) => r.calls || 0));
  const tbody = h('tbody');
  for (const r of rows.slice(0, 60)) {
    const bar = h('span', { class: 'minibar' });
    bar.style.width = Math.round(((r.calls || 0) / max) * 100) + '%';
    const agents = Object.entries(r.agents || {}).sort((a, b) => b[1] - a[1]).map(([a, n]) => a + ' ' + fmtInt(n)).join(', ');
    tbody.append(
      h(
        'tr',
        {},
        h('td', { class: 'key mono', text: String(r.key) }),
        h('td', { class: 'num total' }, h('span', { class: 'total-wrap' }, h('span', { class: 'minibar-box' }, bar), h('span', { text: fmtInt(r.calls || 0) }))),
        h('td', { class: 'num' + (r.errors ? ' err' : ''), text: fmtInt(r.errors || 0) }),
        h('td', { class: 'num', text: r.calls ? Math.round((100 * (r.errors || 0)) / r.calls) + '%' : '-' }),
        h('td', { class: 'muted', text: agents }),
      ),
    );
  }
  if (!rows.length) tbody.append(h('tr', {}, h('td', { colspan: 5, class: 'muted', text: 'No tool calls in this period.' })));
  const table = h('table', { class: 'stats tools' }, h('thead', {}, h('tr', {}, h('th', { text: 'Tool' }), h('th', { class: 'num', text: 'Calls' }), h('th', { class: 'num', text: 'Errors' }), h('th', { class: 'num', text: 'Error rate' }), h('th', { text: 'Agents' }))), tbody);
  return h('section', { class: 'stats-sec' }, h('h2', { text: 'Tool calls' }), h('div', { class: 'table-wrap' }, table));
}

function statsTable(title, rows, keyLabel, compact) {
  const sorted = keyLabel === 'Day' ? rows : rows.slice().sort((a, b) => (b.total_tokens || 0) - (a.total_tokens || 0));
  const max = Math.max(1, ...sorted.map((r) => r.total_tokens || 0));
  const cols = compact
    ? [['Input', 'input_tokens'], ['Output', 'output_tokens']]
    : [['Input', 'input_tokens'], ['Output', 'output_tokens'], ['Cache read', 'cache_read_tokens'], ['Cache write', 'cache_write_tokens']];
  const table = h(
    'table',
    { class: 'stats' },
    h('thead', {}, h('tr', {}, h('th', { text: keyLabel }), cols.map(([t]) => h('th', { class: 'num', text: t })), h('th', { class: 'num', text: 'Total' }), h('th', { class: 'num', text: 'Cost' }))),
  );
  const tbody = h('tbody');
  for (const r of sorted) {
    const total = r.total_tokens || 0;
    const bar = h('span', { class: 'minibar' });
    bar.style.width = Math.round((total / max) * 100) + '%';
    tbody.append(
      h(
        'tr',
        {},
        h('td', { class: 'key', text: r.key === null || r.key === undefined || r.key === '' ? '(unknown)' : String(r.key) }),
        cols.map(([, f]) => h('td', { class: 'num', text: fmtTokens(r[f] || 0), title: fmtInt(r[f] || 0) })),
        h('td', { class: 'num total', title: fmtInt(total) }, h('span', { class: 'total-wrap' }, h('span', { class: 'minibar-box' }, bar), h('span', { text: fmtTokens(total) }))),
          h('td', { class: 'num', text: fmtUsageCost(r), title: r.cost_usd === null || r.cost_usd === undefined ? unpricedTitle(r) : null }),
      ),
    );
  }
  if (!sorted.length) tbody.append(h('tr', {}, h('td', { colspan: cols.length + 3, class: 'muted', text: 'No usage in this period.' })));
  table.append(tbody);
  return h('section', { class: 'stats-sec' }, h('h2', { text: title }), h('div', { class: 'table-wrap' }, table));
}
