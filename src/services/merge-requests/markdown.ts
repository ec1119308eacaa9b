// A deliberately small Markdown renderer for title_html / description_html: everything is
// HTML-escaped first, then a few inline forms and paragraphs are added, so no user input can
// produce markup of its own (no raw HTML, no javascript: links).
// GITLAB-COMPAT: GitLab renders full GitLab Flavored Markdown; this covers paragraphs, line breaks,
// emphasis, inline code and http(s) links.

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** One pass over the text (five chained passes cost a second on a megabyte of `&<>"'`). */
function escapeHtml(s: string): string {
  return /[&<>"']/.test(s) ? s.replace(/[&<>"']/g, (ch) => ENTITIES[ch]!) : s;
}

/** The inline forms; each pattern runs only when its marker is in the text (most paragraphs have none). */
function inline(escaped: string): string {
  let out = escaped;
  if (out.includes('`')) out = out.replace(/`([^`]+)`/g, '<code>$1</code>');
  if (out.includes('*')) {
    out = out.replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>').replace(/(^|[\s(])\*([^*\s][^*]*)\*/g, '$1<em>$2</em>');
  }
  // Bounded runs that stop at the next bracket: linear in the input ("[[[[…" was quadratic).
  if (out.includes('](')) out = out.replace(/\[([^[\]]{1,1000})\]\((https?:\/\/[^\s()"[\]]{1,2048})\)/g, '<a href="$2" rel="nofollow noreferrer noopener" target="_blank">$1</a>');
  return out;
}

export function renderMarkdown(text: string, opts: { inline?: boolean } = {}): string {
  const escaped = escapeHtml(text);
  if (opts.inline) return inline(escaped);
  if (!text.trim()) return '';
  return escaped
    .split(/\n{2,}/)
    .filter((p) => p.trim())
    .map((p) => `<p dir="auto">${p.includes('\n') ? inline(p).replace(/\n/g, '<br>\n') : inline(p)}</p>`)
    .join('\n');
}
