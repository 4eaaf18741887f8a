// Secrets (#/secrets, GET /secrets): what to rotate. One line per distinct secret the index
// found, the most recently seen first: its mask (rule and last characters — the page is only
// ever sent masks and fingerprints, never a secret), where it appeared (links to the events),
// first and last seen, and an Allowlist action (POST /secrets/allow: a false positive, or a key
// already revoked; it leaves this list and the badges, and stays masked everywhere).
// ?session=AGENT:ID narrows the list to one session; ?allowlisted=1 shows the allowlisted too.

import { api, postApi } from '../api.js';
import { $, clear, h } from '../dom.js';
import { fmtFull, fmtInt, relTime, toDate } from '../format.js';
import { queryHash, sessionHash, setHash } from '../router.js';
import { handleError } from '../ui.js';
import { agentBadge, tag } from '../widgets.js';

const when = (iso) => {
  const d = toDate(iso);
  return d ? h('time', { text: relTime(d), title: fmtFull(d), datetime: d.toISOString() }) : '-';
};

export const secretsView = {
  root: null,
  key: null,

  build() {
    this.root = $('#view-secrets');
  },

  async show(params, force) {
    if (!this.root) this.build();
    const p = { session: params.get('session') || '', allowlisted: params.get('allowlisted') ? '1' : '' };
    const key = JSON.stringify(p);
    if (key === this.key && !force) return;
    this.key = key;
    const body = h('div', { class: 'secrets-body' }, h('div', { class: 'loading', text: 'Loading…' }));
    const toggle = h('label', { class: 'check' }, h('input', { type: 'checkbox', class: 'show-allowlisted', checked: !!p.allowlisted }), ' allowlisted too');
    toggle.firstChild.addEventListener('change', (e) => setHash(queryHash('#/secrets', { session: p.session, allowlisted: e.target.checked ? '1' : '' })));
    clear(this.root).append(
      h('div', { class: 'toolbar' }, h('h1', { text: p.session ? 'Secrets in ' + p.session : 'Secrets: what to rotate' }), toggle, p.session ? h('a', { href: '#/secrets', text: 'all sessions' }) : null),
      h('p', { class: 'muted', text: 'One line per distinct secret the index found in your transcripts, the most recently seen first. Values are masked here and at every exit; rotate the key, then allowlist it (or allowlist a false positive).' }),
      body,
    );
    try {
      const doc = await api('/secrets', { session: p.session, allowlisted: p.allowlisted ? 'true' : '', places: 5, limit: 1000 });
      if (key !== this.key) return;
      this.draw(body, doc);
    } catch (err) {
      if (key !== this.key) return;
      clear(body);
      handleError(err, 'Secrets');
    }
  },

  draw(body, doc) {
    const secrets = doc.secrets || [];
    clear(body);
    if (doc.pending) body.append(h('p', { class: 'muted pending', text: fmtInt(doc.pending) + ' events not scanned yet: the list may grow.' }));
    if (!secrets.length) {
      const hidden = doc.allowlisted_hidden || 0;
      body.append(h('div', { class: 'empty', text: 'No secrets found.' + (hidden ? ' (' + hidden + ' allowlisted.)' : '') }));
      return;
    }
    const table = h(
      'table',
      { class: 'stats secrets-table' },
      h('thead', {}, h('tr', {}, h('th', { text: 'Last seen' }), h('th', { text: 'Secret' }), h('th', { text: 'Where' }), h('th', { text: 'First seen' }), h('th', { text: '' }))),
    );
    const tbody = h('tbody');
    for (const s of secrets) tbody.append(this.row(s));
    table.append(tbody);
    body.append(h('div', { class: 'table-wrap' }, table));
  },

  row(s) {
    const places = h(
      'ul',
      { class: 'places' },
      (s.places || []).map((pl) =>
        h('li', {}, agentBadge(pl.agent), ' ', h('a', { href: sessionHash(pl.agent, pl.id, pl.seq >= 0 ? pl.seq : null), text: pl.id.slice(0, 8) + (pl.seq >= 0 ? ' · event ' + pl.seq : ' · session') }), ' ', h('span', { class: 'mono muted', text: pl.field })),
      ),
    );
    const more = s.place_count > (s.places || []).length ? h('div', { class: 'muted', text: fmtInt(s.place_count) + ' places in ' + fmtInt(s.session_count) + ' session' + (s.session_count === 1 ? '' : 's') }) : null;
    const error = h('div', { class: 'state-error', role: 'alert' });
    let action;
    if (s.allowlisted) {
      action = h('button', { type: 'button', class: 'unallow', text: 'Unallowlist' });
      action.addEventListener('click', () => this.change('/secrets/unallow', { fingerprint: s.fingerprint }, error));
    } else {
      const reason = h('input', { type: 'text', class: 'allow-reason', placeholder: 'why (optional)', 'aria-label': 'Why allowlist it' });
      const button = h('button', { type: 'button', class: 'allow', text: 'Allowlist' });
      button.addEventListener('click', () => this.change('/secrets/allow', reason.value.trim() ? { fingerprint: s.fingerprint, reason: reason.value.trim() } : { fingerprint: s.fingerprint }, error));
      action = h('div', { class: 'allow-box' }, reason, button);
    }
    return h(
      'tr',
      { class: 'secret-row' + (s.allowlisted ? ' allowlisted' : ''), dataset: { fingerprint: s.fingerprint } },
      h('td', {}, when(s.last_seen)),
      h('td', { class: 'mask' }, h('div', { class: 'masked', text: s.masked }), h('div', {}, tag(s.rule, s.confidence === 'low' ? 'muted' : 'secret', s.confidence === 'low' ? 'low confidence' : null), s.allowlisted ? tag('allowlisted', 'muted') : null)),
      h('td', {}, places, more),
      h('td', {}, when(s.first_seen)),
      h('td', {}, action, error),
    );
  },

  async change(path, body, error) {
    error.textContent = '';
    try {
      await postApi(path, body);
      const r = new URLSearchParams(location.hash.split('?')[1] || '');
      await this.show(r, true);
    } catch (err) {
      error.textContent = err.message;
    }
  },
};
