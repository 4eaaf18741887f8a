// A file's recorded history (#/file?path=…, GET /files/history): every change any agent
// session made to it, newest first, each with its session (a link to that event), the prompt
// that led to it and its diff. Reached from the file name above any diff (views/diff.js).

import { api } from '../api.js';
import { $, clear, h } from '../dom.js';
import { fmtFull, oneLine, toDate } from '../format.js';
import { sessionHash } from '../router.js';
import { handleError } from '../ui.js';
import { agentBadge } from '../widgets.js';
import { diffView } from './diff.js';

const MATCH = { symlink: 'through a symlink', case: 'recorded with another case', renamed: 'before a rename' };

export const fileView = {
  root: null,
  key: null,

  async show(params) {
    if (!this.root) this.root = $('#view-file');
    const path = params.get('path') || '';
    if (path === this.key) return;
    this.key = path;
    const body = h('div', { class: 'file-history' }, h('div', { class: 'loading', text: 'Loading…' }));
    clear(this.root).append(h('div', { class: 'toolbar' }, h('h1', { class: 'mono', text: path || 'File' })), body);
    if (!path) {
      clear(body).append(h('div', { class: 'empty', text: 'No file named.' }));
      return;
    }
    try {
      const doc = await api('/files/history', { path, limit: 200 });
      if (path !== this.key) return;
      clear(body);
      const records = doc.records || [];
      if (!records.length) {
        body.append(h('div', { class: 'empty', text: 'No recorded agent session changed this file' + (doc.exists ? '.' : ' (it does not exist).') }));
        return;
      }
      const shown = doc.truncated ? records.length + ' of ' + doc.total : String(records.length);
      body.append(h('p', { class: 'file-summary', text: shown + ' recorded changes, newest first' + (doc.git ? ' · ' + doc.git.root : '') }));
      for (const r of records) body.append(this.record(r));
    } catch (err) {
      if (path !== this.key) return;
      clear(body);
      handleError(err, 'File history');
    }
  },

  record(r) {
    const s = r.session || {};
    const d = toDate(r.time);
    const head = h(
      'div',
      { class: 'change-head' },
      h('span', { class: 'when', text: d ? fmtFull(d) : '(no time)' }),
      ' ',
      agentBadge(s.agent),
      ' ',
      h('a', { class: 'mono change-session', href: sessionHash(s.agent, s.id, r.seq), text: (s.short_id || s.id) + ' #' + r.seq }),
      ' ',
      h('span', { class: 'change-kind', text: r.kind + (r.failed ? ' (failed)' : '') }),
      MATCH[r.match] ? h('span', { class: 'change-match', text: ' · ' + MATCH[r.match] + ': ' + r.path }) : null,
    );
    const box = h('div', { class: 'change', dataset: { kind: r.kind } }, head);
    const prompt = r.prompt && r.prompt.text;
    if (prompt) box.append(h('div', { class: 'change-prompt', text: '> ' + oneLine(prompt, 300) }));
    if (r.command) box.append(h('div', { class: 'change-command mono', text: '$ ' + oneLine(r.command, 300) }));
    if ((r.hunks || []).length) {
      const op = r.kind === 'create' ? 'create' : r.kind === 'delete' ? 'delete' : 'update';
      box.append(diffView({ files: [{ path: r.path, op, hunks: r.hunks, numbered: r.numbered, cut: r.cut }] }, 120));
    }
    return box;
  },
};
