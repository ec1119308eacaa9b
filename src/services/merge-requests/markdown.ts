// A deliberately small Markdown renderer for title_html / description_html: everything is
// HTML-escaped first, then a few inline forms and paragraphs are added, so no user input can
// produce markup of its own (no raw HTML, no javascript: links).
// GITLAB-COMPAT: GitLab renders full GitLab Flavored Markdown; this covers paragraphs, line breaks,
// emphasis, inline code and http(s) links.

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

function inline(escaped: string): string {
  return escaped
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[\s(])\*([^*\s][^*]*)\*/g, '$1<em>$2</em>')
    // Bounded runs that stop at the next bracket: linear in the input ("[[[[…" was quadratic).
    .replace(/\[([^[\]]{1,1000})\]\((https?:\/\/[^\s()"[\]]{1,2048})\)/g, '<a href="$2" rel="nofollow noreferrer noopener" target="_blank">$1</a>');
}

export function renderMarkdown(text: string, opts: { inline?: boolean } = {}): string {
  const escaped = escapeHtml(text);
  if (opts.inline) return inline(escaped);
  if (!text.trim()) return '';
  return escaped
    .split(/\n{2,}/)
    .filter((p) => p.trim())
    .map((p) => `<p dir="auto">${inline(p).replace(/\n/g, '<br>\n')}</p>`)
    .join('\n');
}
