// String rules GitLab's models apply through Ruby, where JavaScript's built-ins differ: lengths in
// characters (code points, not UTF-16 units), String#strip (ASCII whitespace and NUL only), and
// Array#to_sentence for full error messages.

/** Characters as Ruby counts them. */
export function charLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Ruby's String#strip: JavaScript's trim also takes Unicode spaces, which Ruby keeps. */
export function rubyStrip(s: string): string {
  return s.replace(/^[ \t\n\v\f\r\0]+|[ \t\n\v\f\r\0]+$/g, '');
}

/** Rails' Array#to_sentence: "A", "A and B", "A, B, and C". */
export function toSentence(items: string[]): string {
  if (items.length <= 1) return items.join('');
  if (items.length === 2) return `${items[0]} and ${items[1]}`;
  return `${items.slice(0, -1).join(', ')}, and ${items[items.length - 1]}`;
}
