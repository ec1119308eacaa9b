// A repository's languages (GitLab's GET /projects/:id/languages, Gitaly's CommitLanguages): the
// share of bytes on the default branch per language, read from file names. GITLAB-COMPAT: names
// and extensions, not Linguist's content heuristics; like Gitaly it counts programming and markup
// languages only and leaves out vendored code, documentation and dotfiles. The first 200,000 files
// of a tree are counted; results are kept per commit.
import { spawnGit } from '../../git/exec.js';

const BY_EXTENSION: Record<string, string> = {
  js: 'JavaScript', mjs: 'JavaScript', cjs: 'JavaScript', jsx: 'JavaScript',
  ts: 'TypeScript', mts: 'TypeScript', cts: 'TypeScript', tsx: 'TSX',
  py: 'Python', pyw: 'Python', pyx: 'Cython',
  rb: 'Ruby', rake: 'Ruby', gemspec: 'Ruby', ru: 'Ruby',
  go: 'Go', rs: 'Rust', java: 'Java', kt: 'Kotlin', kts: 'Kotlin', scala: 'Scala', groovy: 'Groovy', gradle: 'Groovy',
  c: 'C', h: 'C', cc: 'C++', cpp: 'C++', cxx: 'C++', hpp: 'C++', hh: 'C++', hxx: 'C++', cs: 'C#', fs: 'F#', m: 'Objective-C', mm: 'Objective-C++',
  swift: 'Swift', php: 'PHP', pl: 'Perl', pm: 'Perl', lua: 'Lua', r: 'R', dart: 'Dart', ex: 'Elixir', exs: 'Elixir', erl: 'Erlang', hrl: 'Erlang',
  hs: 'Haskell', clj: 'Clojure', cljs: 'Clojure', ml: 'OCaml', elm: 'Elm', jl: 'Julia', nim: 'Nim', zig: 'Zig', v: 'V', vue: 'Vue', svelte: 'Svelte',
  sh: 'Shell', bash: 'Shell', zsh: 'Shell', fish: 'fish', ps1: 'PowerShell', psm1: 'PowerShell', bat: 'Batchfile', cmd: 'Batchfile',
  html: 'HTML', htm: 'HTML', xhtml: 'HTML', css: 'CSS', scss: 'SCSS', sass: 'Sass', less: 'Less', styl: 'Stylus',
  erb: 'HTML+ERB', haml: 'Haml', slim: 'Slim', twig: 'Twig', mustache: 'Mustache', hbs: 'Handlebars',
  sql: 'PLpgSQL', pls: 'PLSQL', tf: 'HCL', hcl: 'HCL', nix: 'Nix', proto: 'Protocol Buffer', graphql: 'GraphQL', gql: 'GraphQL',
  asm: 'Assembly', s: 'Assembly', f90: 'Fortran', f: 'Fortran', pas: 'Pascal', vb: 'Visual Basic .NET', coffee: 'CoffeeScript', cr: 'Crystal', d: 'D', tex: 'TeX',
};
const BY_NAME: Record<string, string> = {
  Dockerfile: 'Dockerfile', Makefile: 'Makefile', GNUmakefile: 'Makefile', Rakefile: 'Ruby', Gemfile: 'Ruby', Vagrantfile: 'Ruby', Jenkinsfile: 'Groovy', 'CMakeLists.txt': 'CMake',
};
/** Vendored code and documentation (enry's IsVendor / IsDocumentation, the common cases). */
const SKIPPED = /(^|\/)(node_modules|vendor|bower_components|third[-_]party|dist|docs?|Documentation)\/|(^|\/)\.[^/]*$|\.min\.(js|css)$/;

/** At most this many tree entries are read (a tree of a million files is cut there, not read whole). */
export const MAX_LANGUAGE_ENTRIES = 200_000;
const cache = new Map<string, Record<string, number>>();
const CACHE_SIZE = 256;

/** The entries of a tree, streamed, at most MAX_LANGUAGE_ENTRIES: "<mode> <type> <oid> <size>\t<path>". */
function treeEntries(gitDir: string, commit: string, each: (record: string) => void): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawnGit(['ls-tree', '-r', '-l', '-z', '--end-of-options', `${commit}^{tree}`], { gitDir });
    let rest = '';
    let count = 0;
    let done = false;
    const finish = (ok: boolean) => {
      if (done) return;
      done = true;
      child.kill();
      resolve(ok);
    };
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      if (done) return;
      const parts = (rest + chunk).split('\0');
      rest = parts.pop() ?? '';
      for (const record of parts) {
        each(record);
        if (++count >= MAX_LANGUAGE_ENTRIES) return finish(true);
      }
    });
    child.on('close', (code) => finish(code === 0));
    child.on('error', () => finish(false));
  });
}

/** Languages and their share of bytes (percent, two decimals), largest first; {} for an empty tree. Kept per commit. */
export async function repositoryLanguages(gitDir: string, commit: string): Promise<Record<string, number>> {
  const key = `${gitDir}\0${commit}`;
  const kept = cache.get(key);
  if (kept) return kept;
  const bytes = new Map<string, number>();
  let total = 0;
  const ok = await treeEntries(gitDir, commit, (record) => {
    const tab = record.indexOf('\t');
    if (tab < 0) return;
    const [mode, type, , size] = record.slice(0, tab).trim().split(/\s+/);
    const path = record.slice(tab + 1);
    if (type !== 'blob' || mode === '120000' || SKIPPED.test(path)) return;
    const name = path.slice(path.lastIndexOf('/') + 1);
    const dot = name.lastIndexOf('.');
    const language = BY_NAME[name] ?? (dot > 0 ? BY_EXTENSION[name.slice(dot + 1).toLowerCase()] : undefined);
    const n = Number(size);
    if (!language || !Number.isFinite(n) || n <= 0) return;
    bytes.set(language, (bytes.get(language) ?? 0) + n);
    total += n;
  });
  const out: Record<string, number> = {};
  if (ok && total) {
    for (const [language, n] of [...bytes].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))) {
      out[language] = Math.round((n / total) * 10000) / 100;
    }
  }
  if (ok) {
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(key, out);
  }
  return out;
}
