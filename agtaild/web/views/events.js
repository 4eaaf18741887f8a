// One event of a transcript as DOM: messages, thinking, tool calls with their results, hooks,
// system records, compactions.

import { h, inlineNodes, preBlock, richText, TEXT_LIMIT } from '../dom.js';
import { fmtClock, fmtFull, fmtTokens, oneLine, pretty, sessionTitle, toDate } from '../format.js';
import { sessionHash } from '../router.js';
import { diffFold, editOf, foldText } from './diff.js';

export function roleGroup(ev) {
  if (ev.kind === 'hook' || ev.kind === 'system' || ev.kind === 'summary' || ev.kind === 'unknown') return 'meta';
  if (ev.kind === 'tool_result') return 'assistant';
  return ev.role === 'user' ? 'user' : ev.role === 'assistant' || !ev.role ? 'assistant' : ev.role;
}

export function childLink(child, agent) {
  return h('a', { class: 'child-link', href: sessionHash(child.agent || agent, child.id), text: '↳ subagent transcript: ' + sessionTitle(child) });
}

const ROLE_LABEL = { user: 'User', assistant: 'Assistant', meta: null };

export function renderEvent(ev, showRole, view) {
  const group = roleGroup(ev);
  const node = h('div', {
    class: 'ev ev-' + String(ev.kind).replace(/[^a-z_]/g, '') + ' role-' + group + (ev.sidechain ? ' sidechain' : ''),
    id: 'ev-' + ev.seq,
    dataset: { seq: ev.seq, role: showRole ? 'shown' : 'hidden' },
  });
  const d = toDate(ev.ts);
  if (showRole && ROLE_LABEL[group] !== null) {
    const label = ROLE_LABEL[group] || String(ev.role || group);
    node.append(
      h(
        'div',
        { class: 'ev-head' },
        h('span', { class: 'role', text: label }),
        ev.model && group === 'assistant' ? h('span', { class: 'model', text: ev.model }) : null,
        d ? h('time', { text: fmtClock(d), title: fmtFull(d) }) : null,
      ),
    );
  }
  const anchor = h('a', { class: 'ev-anchor', href: sessionHash(view.agent, view.id, ev.seq), title: 'Link to this event' + (d ? ' · ' + fmtFull(d) : ''), text: '#' + ev.seq });
  let body;
  switch (ev.kind) {
      case 'text': {
        // Edits written in the text (Aider's SEARCH/REPLACE blocks): the text without them, then their diff.
        const edit = editOf(ev);
        body = edit ? h('div', {}, richText(foldText(ev.text || '', edit), TEXT_LIMIT), diffFold(edit)) : richText(ev.text || '', TEXT_LIMIT);
      break;
      }
    case 'thinking':
        body = h('details', { class: 'fold thinking' }, h('summary', {}, h('span', { class: 'fold-title', text: 'Thinking' }), h('span', { class: 'fold-hint', text: oneLine(String(ev.text || '').replace(/\*\*([^*\n]+)\*\*/g, '$1'), 120) })), richText(ev.text || '', TEXT_LIMIT));
      break;
    case 'tool_use':
      body = toolBlock(ev, view);
      break;
    case 'tool_result':
      body = h(
        'details',
        { class: 'fold tool' + (ev.is_error ? ' error' : '') },
        h('summary', {}, h('span', { class: 'fold-title', text: 'Tool result' }), ev.tool ? h('span', { class: 'tool-name', text: ev.tool }) : null, h('span', { class: 'fold-hint', text: oneLine(resultText(ev.result !== null && ev.result !== undefined ? ev.result : ev.text), 120) })),
        h('div', { class: 'tool-body' }, resultView(ev.result !== null && ev.result !== undefined ? ev.result : ev.text, ev.is_error)),
      );
      break;
    case 'hook':
      body = hookBlock(ev);
      break;
    case 'summary':
    case 'system':
      body = metaBlock(ev);
      break;
    default:
      body = h('details', { class: 'fold meta unknown' }, h('summary', {}, h('span', { class: 'fold-title', text: 'Unmapped record' }), h('span', { class: 'fold-hint', text: oneLine(ev.text || (ev.raw && ev.raw.type) || '', 100) })), preBlock(pretty(ev.raw !== null && ev.raw !== undefined ? ev.raw : ev.text), 'json'));
  }
  node.append(h('div', { class: 'ev-body' }, body, anchor));
  return node;
}

function toolSummary(tool, input, edit) {
  // An edit names the files it touches (an apply_patch input is the whole patch).
  if (edit && Array.isArray(edit.files) && edit.files.length) {
    return oneLine(edit.files.map((f) => (f.path || '?') + (f.op === 'create' ? ' (new file)' : f.op === 'delete' ? ' (deleted)' : '')).join(', '), 160);
  }
  if (input === null || input === undefined) return '';
  if (typeof input === 'string') return oneLine(input, 160);
  if (typeof input !== 'object') return oneLine(String(input), 160);
  const keys = ['command', 'cmd', 'file_path', 'path', 'filePath', 'pattern', 'url', 'query', 'description', 'prompt', 'skill', 'subject', 'notebook_path'];
  for (const k of keys) {
    const v = input[k];
    if (typeof v === 'string' && v) return oneLine(v, 160);
    if (Array.isArray(v) && v.length && v.every((x) => typeof x === 'string')) return oneLine(v.join(' '), 160);
  }
  for (const k of Object.keys(input)) if (typeof input[k] === 'string' && input[k]) return oneLine(input[k], 160);
  return '';
}

function toolBlock(ev, view) {
  const hasResult = ev.result !== null && ev.result !== undefined;
  const status = ev.is_error ? h('span', { class: 'status err', text: 'error' }) : hasResult ? h('span', { class: 'status ok', text: '✓', title: 'Completed' }) : h('span', { class: 'status pending', text: '…', title: 'No result yet' });
  const details = h(
    'details',
    { class: 'fold tool' + (ev.is_error ? ' error' : ''), dataset: ev.tool_use_id ? { toolUseId: ev.tool_use_id } : null },
      h('summary', {}, h('span', { class: 'tool-name', text: ev.tool || 'tool' }), h('span', { class: 'fold-hint mono', text: toolSummary(ev.tool, ev.input, ev.extra && ev.extra.edit) }), status),
    h(
      'div',
      { class: 'tool-body' },
      h('div', { class: 'tool-sec' }, h('div', { class: 'sec-label', text: 'Input' }), inputView(ev.input)),
      hasResult || ev.is_error ? h('div', { class: 'tool-sec' }, h('div', { class: 'sec-label', text: ev.is_error ? 'Error' : 'Result' }), resultView(ev.result, ev.is_error)) : null,
    ),
  );
  const edit = editOf(ev);
  const wrap = h('div', { class: 'tool-wrap', dataset: ev.tool_use_id ? { toolUseId: ev.tool_use_id } : null }, details, edit ? diffFold(edit) : null);
  const child = ev.tool_use_id && view.children.get(ev.tool_use_id);
  if (child) wrap.append(childLink(child, view.agent));
  return wrap;
}

function inputView(input) {
  if (input === null || input === undefined) return h('div', { class: 'muted', text: '(no input)' });
  if (typeof input !== 'object' || Array.isArray(input)) return preBlock(pretty(input), typeof input === 'string' ? '' : 'json');
  const keys = Object.keys(input);
  if (!keys.length) return h('div', { class: 'muted', text: '(no input)' });
  const grid = h('div', { class: 'kv' });
  for (const k of keys) {
    const v = input[k];
    const cls = k === 'old_string' ? 'del' : k === 'new_string' ? 'add' : '';
    let val;
    if (typeof v === 'string') {
      val = v.includes('\n') || v.length > 120 || cls ? preBlock(v, cls) : h('span', { class: 'mono', text: v });
    } else if (v !== null && typeof v === 'object') {
      val = preBlock(pretty(v), 'json');
    } else {
      val = h('span', { class: 'mono', text: String(v) });
    }
    grid.append(h('div', { class: 'k', text: k }), h('div', { class: 'v' }, val));
  }
  return grid;
}

export function resultText(result) {
  if (result === null || result === undefined) return '';
  if (typeof result === 'string') return result;
  if (Array.isArray(result)) {
    return result.map((b) => (b && typeof b === 'object' ? (typeof b.text === 'string' ? b.text : b.type ? '[' + b.type + ']' : '') : String(b))).join('\n');
  }
  if (typeof result === 'object') {
    for (const k of ['output', 'stdout', 'content', 'text']) if (typeof result[k] === 'string') return result[k];
  }
  return pretty(result);
}

function resultView(result, isError) {
  const cls = isError ? 'err' : '';
  if (result === null || result === undefined) return h('div', { class: 'muted', text: '(empty)' });
  if (typeof result === 'string') return preBlock(result, cls);
  if (Array.isArray(result) && result.every((b) => b && typeof b === 'object' && typeof b.type === 'string')) {
    const box = h('div', { class: 'blocks' });
    for (const b of result) {
      if (typeof b.text === 'string') box.append(preBlock(b.text, cls));
      else box.append(h('div', { class: 'muted', text: '[' + b.type + ']' }));
    }
    return box;
  }
  return preBlock(pretty(result), 'json ' + cls);
}

function hookBlock(ev) {
  const hk = ev.hook || {};
  const label = ['Hook', hk.event, hk.tool].filter(Boolean).join(' · ');
  const hint = hk.command || oneLine(hk.text || ev.text || '', 120);
  const detail = [];
  if (hk.command) detail.push(h('div', { class: 'kv' }, h('div', { class: 'k', text: 'command' }), h('div', { class: 'v' }, h('span', { class: 'mono', text: hk.command }))));
  if (hk.plugin) detail.push(h('div', { class: 'kv' }, h('div', { class: 'k', text: 'plugin' }), h('div', { class: 'v', text: hk.plugin })));
  const text = hk.text || ev.text;
  if (text) detail.push(preBlock(text, ''));
  if (!detail.length) return h('div', { class: 'metaline' }, h('span', { class: 'fold-title', text: label }));
  return h('details', { class: 'fold meta hook' }, h('summary', {}, h('span', { class: 'fold-title', text: label }), h('span', { class: 'fold-hint mono', text: oneLine(hint, 120) })), h('div', { class: 'tool-body' }, detail));
}

// A compaction: an inline divider; the summary the agent wrote stays folded under it.
function compactionBlock(ev) {
  const x = ev.extra || {};
  const meta = x.compactMetadata && typeof x.compactMetadata === 'object' ? x.compactMetadata : {};
  const bits = [meta.trigger, typeof meta.preTokens === 'number' ? fmtTokens(meta.preTokens) + ' tokens before' : null].filter(Boolean);
  const line = h('div', { class: 'compact-divider', role: 'separator' }, h('span', { text: 'Context compacted' + (bits.length ? ' \u00b7 ' + bits.join(' \u00b7 ') : '') }));
  if (!ev.text || ev.subtype === 'compact_boundary') return line;
  return h('div', {}, line, h('details', { class: 'fold meta compact-summary' }, h('summary', {}, h('span', { class: 'fold-title', text: 'Summary' }), h('span', { class: 'fold-hint', text: oneLine(ev.text, 120) })), richText(ev.text, TEXT_LIMIT)));
}

function metaBlock(ev) {
  if (ev.subtype === 'compact_boundary' || ev.subtype === 'compaction') return compactionBlock(ev);
  if (ev.kind === 'summary' && (ev.subtype === 'compact_summary' || ev.subtype === 'compactionSummary')) {
    return h('details', { class: 'fold meta compact-summary' }, h('summary', {}, h('span', { class: 'fold-title', text: 'Compaction summary' }), h('span', { class: 'fold-hint', text: oneLine(ev.text || '', 120) })), richText(ev.text || '', TEXT_LIMIT));
  }
  const label = ev.kind === 'summary' ? 'Summary' : 'System' + (ev.subtype ? ' · ' + ev.subtype : '');
  const text = ev.text || '';
  if (text.length <= 200 && !text.includes('\n')) {
    return h('div', { class: 'metaline' }, h('span', { class: 'fold-title', text: label }), text ? h('span', { class: 'meta-text' }, inlineNodes(text)) : null);
  }
  return h('details', { class: 'fold meta' }, h('summary', {}, h('span', { class: 'fold-title', text: label }), h('span', { class: 'fold-hint', text: oneLine(text, 120) })), richText(text, TEXT_LIMIT));
}
