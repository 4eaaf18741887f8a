// The session header's "Export" row: download the open session as Markdown, one
// self-contained HTML file or JSON (what `agtail export --format` writes, docs/share.md).
//
// Each is a plain link to the API's export endpoint, which answers an attachment with the
// secrets masked; the page never holds the document. The cookie goes with the request (same
// origin). "Hide home and user name" adds redact_paths to every link.

import { apiUrl, sessionPath } from '../api.js';
import { clear, h } from '../dom.js';

export const EXPORT_FORMATS = [
  ['md', 'Markdown'],
  ['html', 'HTML'],
  ['json', 'JSON'],
];

export function exportUrl(session, format, redactPaths) {
  const params = { format };
  if (redactPaths) params.redact_paths = 'true';
  if (session.imported && session.collection) params.collection = session.collection;
  // Absolute, so that it reads as what it is: a URL of this agtaild.
  return new URL(apiUrl(sessionPath(session.agent, session.id) + '/export', params), location.href).href;
}

export function exportBox(session) {
  const redact = h('input', { type: 'checkbox', class: 'export-redact' });
  const links = h('span', { class: 'export-links' });
  // The links are made anew (through dom.js) when the option changes: only dom.js sets hrefs.
  const update = () => {
    clear(links);
    for (const [format, label] of EXPORT_FORMATS) {
      links.append(h('a', { class: 'export-link', href: exportUrl(session, format, redact.checked), dataset: { format }, download: true, title: 'Download as ' + label + ' (secrets masked)', text: label }));
    }
  };
  redact.addEventListener('change', update);
  update();
  return h(
    'div',
    { class: 'export' },
    h('span', { class: 'label', text: 'Export' }),
    links,
    h('label', { class: 'export-option', title: 'Replace the home directory with ~ and the user name with <user>' }, redact, ' hide home and user name'),
  );
}
