// Mentions in Markdown as to-dos read them (services/todos.ts): users and groups, who is addressed
// directly (the mentions a paragraph opens with), and what mentions nobody (code, e-mail addresses).
import { describe, expect, it } from 'vitest';
import { parseMentions } from '../../src/services/todos.js';

describe('parseMentions', () => {
  it('finds users and groups, lower case, without trailing punctuation', () => {
    expect(parseMentions('Hi @Alice, ask @team/sub. Then @bob!')).toEqual({ mentioned: ['alice', 'team/sub', 'bob'], direct: [] });
  });

  it('addresses directly the mentions a paragraph opens with, separated by spaces only', () => {
    expect(parseMentions('@alice @bob please look\n\nlater @carol').direct).toEqual(['alice', 'bob']);
    expect(parseMentions('@alice, @bob what do you think?').direct).toEqual(['alice']);
    expect(parseMentions('FYI: @alice').direct).toEqual([]);
    expect(parseMentions('intro\n\n  @dave here').direct).toEqual(['dave']);
  });

  it('ignores code spans, fenced blocks and e-mail addresses', () => {
    const text = 'mail bob@example.com, run `@carol`\n\n```\n@dave\n```\n\n~~~sh\n@erin\n~~~\nand @frank';
    expect(parseMentions(text)).toEqual({ mentioned: ['frank'], direct: [] });
  });

  it('is empty without text', () => {
    expect(parseMentions(null)).toEqual({ mentioned: [], direct: [] });
    expect(parseMentions('no mentions')).toEqual({ mentioned: [], direct: [] });
  });
});
