// The user's own order in the viewer (docs/organize.md): on a session, a star toggle, a title
// of one's own, label chips with an add box, and a hide action with undo; on the list, a star
// filter, a "hidden too / only hidden" menu and a row of label chips to filter by.
//
// Every change is one POST /api/v1/sessions/{agent}/{id}/state (agtaild/api/organize.py),
// which answers the session as it now is: the bar is drawn again from that answer, never
// from what the page guessed. Label text is shown through textContent like every string.

import { postApi, sessionPath } from './api.js';
import { clear, h } from './dom.js';

export async function changeState(s, body) {
  const which = s.collection ? { collection: s.collection, path: s.path } : { path: s.path };
  return postApi(sessionPath(s.agent, s.id) + '/state', Object.assign(which, body));
}

const labelText = (k, v) => (v ? k + '=' + v : k);

// The bar under a session's title. onChanged(session) gets the session after each change.
export function stateBar(session, onChanged) {
  const bar = h('div', { class: 'state-bar', role: 'group', 'aria-label': 'Your labels, star, title and hide' });
  let s = session;
  const error = h('div', { class: 'state-error', role: 'alert' });

  async function send(body) {
    error.textContent = '';
    try {
      const doc = await changeState(s, body);
      s = doc.session;
      const refused = (doc.changes || []).filter((c) => !c.accepted);
      draw();
      if (refused.length) error.textContent = 'Kept as it was: set by someone who outranks this change.';
      onChanged(s);
      return true;
    } catch (err) {
      error.textContent = err.message;
      return false;
    }
  }

  function titleEditor() {
    const input = h('input', { type: 'text', class: 'title-input', value: (s.state && s.state.title) || s.title || '', maxlength: '300', 'aria-label': 'Your title' });
    const save = h('button', { type: 'button', class: 'title-save', text: 'Save' });
    const cancel = h('button', { type: 'button', class: 'title-cancel', text: 'Cancel' });
    const box = h('span', { class: 'title-editor' }, input, save, cancel);
    const commit = () => {
      const text = input.value.trim();
      send(text ? { title: text } : { clear_title: true });
    };
    save.addEventListener('click', commit);
    cancel.addEventListener('click', draw);
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') commit();
      else if (e.key === 'Escape') draw();
    });
    setTimeout(() => input.focus(), 0);
    return box;
  }

  function draw() {
    clear(bar);
    const st = s.state || { labels: {}, starred: false, hidden: false, title: null };
    const star = h('button', { type: 'button', class: 'star-toggle' + (st.starred ? ' on' : ''), 'aria-pressed': st.starred ? 'true' : 'false', title: st.starred ? 'Unstar' : 'Star', text: st.starred ? '\u2605 Starred' : '\u2606 Star' });
    star.addEventListener('click', () => send({ star: !st.starred }));
    const edit = h('button', { type: 'button', class: 'title-edit', text: st.title ? 'Edit title' : 'Set title', title: st.title && s.agent_title ? 'The agent\u2019s title: ' + s.agent_title : null });
    edit.addEventListener('click', () => edit.replaceWith(titleEditor()));
    const chips = h('span', { class: 'label-chips' });
    for (const k of Object.keys(st.labels || {}).sort()) {
      const remove = h('button', { type: 'button', class: 'label-remove', 'aria-label': 'Remove label ' + k, text: '\u00d7' });
      remove.addEventListener('click', () => send({ unlabel: k }));
      chips.append(h('span', { class: 'label-chip', dataset: { key: k } }, h('a', { href: '#/?label=' + encodeURIComponent(labelText(k, st.labels[k])), text: labelText(k, st.labels[k]) }), remove));
    }
    const adder = h('input', { type: 'text', class: 'label-add', placeholder: 'add label: key or key=value', 'aria-label': 'Add a label', autocomplete: 'off', spellcheck: 'false' });
    adder.addEventListener('keydown', async (e) => {
      if (e.key !== 'Enter' || !adder.value.trim()) return;
      await send({ label: adder.value.trim() });
    });
    const hide = h('button', { type: 'button', class: 'hide-toggle', text: st.hidden ? 'Unhide' : 'Hide', title: st.hidden ? 'Show it in lists, search and stats again' : 'Leave it out of lists, search and stats (nothing on disk changes)' });
    hide.addEventListener('click', () => send({ hide: !st.hidden }));
    bar.append(star, edit, chips, adder, hide);
    if (st.hidden) {
      const undo = h('button', { type: 'button', class: 'hide-undo', text: 'Undo' });
      undo.addEventListener('click', () => send({ hide: false }));
      bar.append(h('span', { class: 'hidden-note', role: 'status' }, 'Hidden from lists, search and stats. ', undo));
    }
    bar.append(error);
  }

  draw();
  return bar;
}

// The list's filters from the user's state: params.label, params.starred, params.hidden.
// onChange(next) gets the new params; labels are those of the sessions shown so far.
export function listFilters(params, sessions, onChange) {
  const box = h('span', { class: 'state-filters' });
  const star = h('button', { type: 'button', class: 'starred-filter' + (params.starred ? ' on' : ''), 'aria-pressed': params.starred ? 'true' : 'false', text: params.starred ? '\u2605 Starred' : '\u2606 Starred' });
  star.addEventListener('click', () => onChange({ starred: params.starred ? '' : 'true' }));
  const hidden = h(
    'select',
    { class: 'hidden-select', 'aria-label': 'Hidden sessions' },
    h('option', { value: '', text: 'Without hidden' }),
    h('option', { value: 'include', text: 'Hidden too' }),
    h('option', { value: 'only', text: 'Only hidden' }),
  );
  hidden.value = params.hidden || '';
  hidden.addEventListener('change', () => onChange({ hidden: hidden.value }));
  const chips = h('span', { class: 'label-filter', role: 'list', 'aria-label': 'Filter by label' });
  const seen = new Set();
  if (params.label) seen.add(params.label);
  for (const s of sessions) {
    const labels = (s.state && s.state.labels) || {};
    for (const k of Object.keys(labels)) seen.add(labelText(k, labels[k]));
  }
  for (const text of [...seen].sort().slice(0, 30)) {
    const on = text === params.label;
    const chip = h('button', { type: 'button', role: 'listitem', class: 'label-chip filter' + (on ? ' on' : ''), 'aria-pressed': on ? 'true' : 'false', text: on ? text + ' \u00d7' : text });
    chip.addEventListener('click', () => onChange({ label: on ? '' : text }));
    chips.append(chip);
  }
  box.append(star, hidden, chips);
  return box;
}
