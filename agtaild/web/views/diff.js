// Edits as unified diffs. Adapters put every agent's edit in one shape, extra.edit =
// { files: [{ path, op, hunks: [{ old_start, new_start, lines: [' ctx', '-old', '+new'] }], numbered, cut }] }.

import { h } from '../dom.js';
import { fmtInt, oneLine } from '../format.js';

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
    box.append(h('div', { class: 'diff-file mono', text: String(f.path || '?') + op }));
    for (const hk of Array.isArray(f.hunks) ? f.hunks : []) {
      let oldNo = Number(hk.old_start) || 1;
      let newNo = Number(hk.new_start) || 1;
      const lines = (hk.lines || []).filter((l) => typeof l === 'string');
      if (budget !== null && budget <= 0) {
        hidden += lines.length;
        continue;
      }
      const approx = f.numbered ? '' : '~';
      box.append(h('div', { class: 'dl hunk', title: f.numbered ? 'Line numbers of the file' : 'Line numbers counted from the edited snippet (the file position was not recorded)' }, h('span', { class: 'no' }), h('span', { class: 'no' }), h('span', { class: 'code', text: '@@ ' + approx + '-' + oldNo + ' ' + approx + '+' + newNo + ' @@' })));
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
    if (f.cut) box.append(h('div', { class: 'dl cut', text: '\u2026 ' + fmtInt(f.cut) + ' more diff lines were not recorded (a very large edit)' }));
  }
  if (hidden) {
    box.append(h('button', { type: 'button', class: 'more', text: 'Show ' + fmtInt(hidden) + ' more diff lines', onclick: () => box.replaceWith(diffView(edit, null)) }));
  }
  return box;
}
