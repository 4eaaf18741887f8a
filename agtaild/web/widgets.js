// Small pieces several views share: agent badges, tags, the agent and machine menus, usage
// cards and a session's row in a list.

import { h } from './dom.js';
import { fmtCost, fmtFull, fmtInt, fmtTokens, fmtUsageCost, rowTime, sessionDate, sessionTitle, unpricedTitle } from './format.js';
import { sessionHash } from './router.js';
import { state } from './state.js';

export function agentBadge(agent) {
  const slug = String(agent || 'unknown').replace(/[^a-z0-9-]/gi, '').toLowerCase();
  return h('span', { class: 'badge agent agent-' + slug, text: agent || '?' });
}

export function tag(text, cls, title) {
  return h('span', { class: 'tag ' + (cls || ''), text, title });
}

export function sessionTags(s) {
  const tags = [];
  const own = s.state;
  if (own && own.starred) tags.push(tag('\u2605', 'starred', 'Starred'));
  if (own && own.hidden) tags.push(tag('hidden', 'muted', 'Hidden from lists, search and stats'));
  if (own && own.labels) for (const k of Object.keys(own.labels).sort()) tags.push(tag(own.labels[k] ? k + '=' + own.labels[k] : k, 'label'));
  if (s.secrets) tags.push(tag(s.secrets + ' secret' + (s.secrets === 1 ? '' : 's'), 'secret', 'Holds ' + s.secrets + ' secret' + (s.secrets === 1 ? '' : 's') + ' you have not allowlisted (shown masked): see Secrets'));
  if (s.parent) tags.push(tag('subagent', 'sub'));
  if (s.machine) tags.push(tag('on ' + s.machine, 'machine', 'Pushed by this machine to the team server'));
  if (s.imported) tags.push(tag(s.collection ? 'imported · ' + s.collection : 'imported', 'imported', 'Imported from another machine; not resumable here'));
  if (s.archived) tags.push(tag('archived', 'archived', 'The agent deleted the native file; shown from agtail\u2019s archive'));
  if (s.truncated) tags.push(tag('truncated', 'warn', 'The last line of the file is incomplete'));
  if (s.bad_lines) tags.push(tag(s.bad_lines + ' bad line' + (s.bad_lines === 1 ? '' : 's'), 'warn'));
  if (s.ending) tags.push(tag(s.ending, 'warn', 'How the session ended'));
  if (s.programmatic) tags.push(tag(s.origin || 'sdk', 'muted', 'Driven programmatically'));
  return tags;
}


export function machineSelect(current, onChange) {
  if (!state.machines.length) return null;
  const sel = h('select', { class: 'machine-select', 'aria-label': 'Machine' }, h('option', { value: '', text: 'All machines' }));
  for (const m of state.machines) sel.append(h('option', { value: m, text: m }));
  sel.value = current || '';
  sel.addEventListener('change', () => onChange(sel.value));
  return sel;
}

export function agentSelect(current, onChange) {
  const sel = h('select', { class: 'agent-select', 'aria-label': 'Agent' }, h('option', { value: '', text: 'All agents' }));
  // Agents with no session at all only clutter the menu.
  const ids = state.agents.filter((a) => a.sessions !== 0).map((a) => a.id);
  if (current && !ids.includes(current)) ids.push(current);
  for (const id of ids) {
    const a = state.agents.find((x) => x.id === id) || { id };
    const n = typeof a.sessions === 'number' ? ' (' + fmtInt(a.sessions) + ')' : '';
    sel.append(h('option', { value: id, text: (a.name || id) + n }));
  }
  sel.value = current || '';
  sel.addEventListener('change', () => onChange(sel.value));
  return sel;
}

// Usage with no time at all (neither the records nor their sessions say when) is on no day.
export function undatedNote(u) {
  if (!u || !u.total_tokens) return null;
  return h('p', { class: 'muted undated', text: 'Not in this range: ' + fmtTokens(u.total_tokens) + ' tokens (' + fmtCost(u.cost_usd) + ') of usage with no time at all (neither the records nor their sessions say when).' });
}

export function usageCards(u) {
  if (!u) return null;
  const card = (label, value, title) => h('div', { class: 'ucard', title: title || null }, h('div', { class: 'uval', text: value }), h('div', { class: 'ulabel', text: label }));
  return h(
    'div',
    { class: 'usage' },
    card('input', fmtTokens(u.input_tokens), fmtInt(u.input_tokens) + ' input tokens (without cache)'),
    card('output', fmtTokens(u.output_tokens), fmtInt(u.output_tokens) + ' output tokens'),
    card('cache read', fmtTokens(u.cache_read_tokens), fmtInt(u.cache_read_tokens) + ' tokens read from cache'),
    card('cache write', fmtTokens(u.cache_write_tokens), fmtInt(u.cache_write_tokens) + ' tokens written to cache'),
    u.reasoning_tokens ? card('reasoning', fmtTokens(u.reasoning_tokens), fmtInt(u.reasoning_tokens) + ' reasoning tokens (part of output)') : null,
    card('total', fmtTokens(u.total_tokens), fmtInt(u.total_tokens) + ' tokens in all'),
      card('cost', fmtUsageCost(u), unpricedTitle(u)),
  );
}

export function sessionRow(s) {
  const d = sessionDate(s);
  const meta = [agentBadge(s.agent)];
  if (s.project) meta.push(h('span', { class: 'project', text: s.project, title: s.cwd || null }));
  if (s.git_branch) meta.push(h('span', { class: 'branch', text: s.git_branch }));
  if (s.models && s.models.length) meta.push(h('span', { class: 'models', text: s.models.join(', ') }));
  return h(
    'a',
    { class: 'srow', href: sessionHash(s.agent, s.id), role: 'listitem', dataset: { agent: s.agent, id: s.id } },
    h('div', { class: 'srow-main' }, h('div', { class: 'srow-title', text: sessionTitle(s) }), h('div', { class: 'srow-meta' }, meta, sessionTags(s))),
    h(
      'div',
      { class: 'srow-side' },
      h('time', { text: rowTime(d), title: fmtFull(d), datetime: d ? d.toISOString() : null }),
      h(
        'span',
        { class: 'counts' },
        fmtInt(s.messages || 0) + ' msg' + (s.messages === 1 ? '' : 's'),
        s.usage && s.usage.total_tokens ? ' · ' + fmtTokens(s.usage.total_tokens) + ' tok' : null,
      ),
    ),
  );
}
