// Addresses under a project's full path routed at fixed prefixes (http/web-addresses.ts): what is
// rewritten, to what, and what is left alone.
import { expect, it } from 'vitest';
import { rewriteWebAddress } from '../../src/http/web-addresses.js';

it('routes git over HTTP, web archives and older upload links of any depth at their prefixes', () => {
  expect(rewriteWebAddress('/g/p.git/info/refs?service=git-upload-pack')).toBe('/-/git-http/g/p.git/info/refs?service=git-upload-pack');
  expect(rewriteWebAddress('/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/proj/git-receive-pack')).toBe('/-/git-http/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/proj/git-receive-pack');
  expect(rewriteWebAddress('/g/sub/p/git-upload-pack')).toBe('/-/git-http/g/sub/p/git-upload-pack');
  expect(rewriteWebAddress('/g/p/-/archive/main/p-main.zip?path=docs')).toBe('/-/web-archive/g/p/-/archive/main/p-main.zip?path=docs');
  const secret = '0123456789abcdef0123456789abcdef';
  expect(rewriteWebAddress(`/g/sub/p/uploads/${secret}/a%20b.png?x=1`)).toBe(`/-/project/g%2Fsub%2Fp/uploads/${secret}/a%20b.png?x=1`);
});

it('leaves the API, the /-/ pages, one-segment paths and everything else alone', () => {
  for (const url of [
    '/api/v4/projects/1/repository/files/info/refs',
    '/api/v4/x/y/info/refs',
    '/-/project/1/uploads/0123456789abcdef0123456789abcdef/a.png',
    '/-/git-http/g/p/info/refs',
    '/p/info/refs',
    '/g/p/-/archive',
    '/p/-/archive/main/p-main.zip',
    '/g/p/-/x/info/refs',
    '//g/p/info/refs',
    '/g/p/uploads/info/refs?service=git-upload-pack', // git of a project named uploads? no: g/p/uploads
    '/g/p/uploads/abc/file.png',
    '/uploads/-/system/group/avatar/1/a.png',
    '/api/v4/projects/1/uploads/0123456789abcdef0123456789abcdef/a.png',
    '/users/sign_in',
  ]) {
    const out = rewriteWebAddress(url);
    if (url === '/g/p/uploads/info/refs?service=git-upload-pack') expect(out).toBe(`/-/git-http${url}`);
    else expect([url, out]).toEqual([url, null]);
  }
});
