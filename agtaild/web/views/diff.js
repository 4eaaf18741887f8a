// Edits as unified diffs. Adapters put every agent's edit in one shape, extra.edit =
// { files: [{ path, op, hunks: [{ old_start, new_start, lines: [' ctx', '-old', '+new'] }], numbered, cut }] }.

import { h } from '../dom.js';
import { counted, fmtInt, oneLine } from '../format.js';

const DIFF_LINES = 300; // diff lines shown before "show all"

export function editOf(ev) {
  const e = ev && ev.extra && ev.extra.edit;
  return e && Array.isArray(e.files) && e.files.length ? e : null;
}

export function diffFold(edit) {
  let added = 0;
  let removed = 0;
  for (const f of edit.files) {
    for (const hk of (f && f.hunks) || []) {
      for (const l of hk.lines || []) {
        if (typeof l !== 'string') continue;
        if (l[0] === '+') added++;
        else if (l[0] === '-') removed++;
      }
    }
  }
  const paths = edit.files.map((f) => String((f && f.path) || '?'));
  return h(
    'details',
    { class: 'fold diff-fold', open: true },
    h('summary', {}, h('span', { class: 'fold-title', text: 'Diff' }), h('span', { class: 'fold-hint mono', text: oneLine(paths.join(', '), 120) }), h('span', { class: 'diff-stat' }, h('span', { class: 'add', text: '+' + added }), ' ', h('span', { class: 'del', text: '\u2212' + removed }))),
    diffView(edit, DIFF_LINES),
  );
}

export function diffView(edit, limit) {
  const box = h('div', { class: 'diff' });
  let budget = limit;
  let hidden = 0;
  for (const f of edit.files) {
    if (!f || typeof f !== 'object') continue;
    const op = f.op === 'create' ? ' (new file)' : f.op === 'delete' ? ' (deleted)' : '';
    const name = String(f.path || '?');
    // An absolute path (not a move "a → b") links to its history: #/file?path=…
    const link = /^(\/|[A-Za-z]:\\)/.test(name) && !name.includes(' \u2192 ');
    box.append(
      link
        ? h('div', { class: 'diff-file mono' }, h('a', { href: '#/file?path=' + encodeURIComponent(name), title: 'Every recorded change of this file', text: name }), op)
        : h('div', { class: 'diff-file mono', text: name + op }),
    );
    for (const hk of Array.isArray(f.hunks) ? f.hunks : []) {
        let oldNo = Math.max(Number(hk.old_start) || 1, 1);
        let newNo = Math.max(Number(hk.new_start) || 1, 1);
      const lines = (hk.lines || []).filter((l) => typeof l === 'string');
      if (budget !== null && budget <= 0) {
        hidden += lines.length;
        continue;
      }
        const approx = f.numbered ? '' : '  ~ lines counted from the edit, not the file';
        box.append(h('div', { class: 'dl hunk', title: f.numbered ? 'Line numbers of the file' : 'Line numbers counted from the edited snippet (the file position was not recorded)' }, h('span', { class: 'no' }), h('span', { class: 'no' }), h('span', { class: 'code', text: hunkHeader(hk, lines) + approx })));
      for (const l of lines) {
        if (budget !== null) {
          if (budget <= 0) {
            hidden++;
            continue;
          }
          budget--;
        }
        const sign = l[0];
        const body = l.slice(1);
        if (sign === '-') box.append(h('div', { class: 'dl del' }, h('span', { class: 'no', text: oldNo++ }), h('span', { class: 'no' }), h('span', { class: 'code', text: '-' + body })));
        else if (sign === '+') box.append(h('div', { class: 'dl add' }, h('span', { class: 'no' }), h('span', { class: 'no', text: newNo++ }), h('span', { class: 'code', text: '+' + body })));
        else box.append(h('div', { class: 'dl ctx' }, h('span', { class: 'no', text: oldNo++ }), h('span', { class: 'no', text: newNo++ }), h('span', { class: 'code', text: ' ' + body })));
      }
    }
      if (f.cut) box.append(h('div', { class: 'dl cut', text: '\u2026 ' + counted(f.cut, 'more diff line') + (f.cut === 1 ? ' was' : ' were') + ' not recorded (a very large edit)' }));
  }
  if (hidden) {
      box.append(h('button', { type: 'button', class: 'more', text: 'Show ' + counted(hidden, 'more diff line'), onclick: () => box.replaceWith(diffView(edit, null)) }));
  }
  return box;
}

// The text with the lines where it writes its edits (edit.in_text: 0-based first and last) folded
// into one line each: the diff shown after it has them (the CLI's diff.fold_text).
export function foldText(text, edit) {
  const spans = (Array.isArray(edit.in_text) ? edit.in_text : []).filter((s) => Array.isArray(s) && s.length === 2 && s.every(Number.isInteger)).sort((a, b) => a[0] - b[0]);
  if (!spans.length) return text;
  const lines = text.split('\n');
  const out = [];
  let i = 0;
  for (const [first, last] of spans) {
    if (first < i || first > last) continue;
    out.push(...lines.slice(i, first), '\u270e (an edit: its diff follows)');
    i = last + 1;
  }
  return out.concat(lines.slice(i)).join('\n');
}

// "@@ -1,5 +1,5 @@": a real unified hunk header with the line counts (the CLI's diff.hunk_header).
export function hunkHeader(hk, lines) {
  const start = (v) => (Number.isInteger(v) && v >= 0 ? v : 1);
  const oldN = lines.filter((l) => l[0] === ' ' || l[0] === '-').length;
  const newN = lines.filter((l) => l[0] === ' ' || l[0] === '+').length;
  const oldAt = oldN ? start(hk.old_start) : Math.max(start(hk.old_start) - 1, 0);
  const newAt = newN ? start(hk.new_start) : Math.max(start(hk.new_start) - 1, 0);
  return '@@ -' + oldAt + ',' + oldN + ' +' + newAt + ',' + newN + ' @@' + (typeof hk.section === 'string' && hk.section ? ' ' + hk.section : '');
}

