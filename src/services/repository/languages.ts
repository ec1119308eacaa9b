// A repository's languages (GitLab's GET /projects/:id/languages, Gitaly's CommitLanguages): the
// share of bytes on the default branch per language, read from file names. GITLAB-COMPAT: names
// and extensions, not Linguist's content heuristics; like Gitaly it counts programming and markup
// languages only and leaves out vendored code, documentation and dotfiles.
import { runGit } from '../../git/exec.js';

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

/** Languages and their share of bytes (percent, two decimals), largest first; {} for an empty tree. */
export async function repositoryLanguages(gitDir: string, commit: string): Promise<Record<string, number>> {
  const res = await runGit(['ls-tree', '-r', '-l', '-z', '--end-of-options', `${commit}^{tree}`], { gitDir, okCodes: [0, 128] });
  if (res.code !== 0) return {};
  const bytes = new Map<string, number>();
  let total = 0;
  for (const record of res.stdout.toString('utf8').split('\0')) {
    // "<mode> blob <oid> <size>\t<path>"
    const tab = record.indexOf('\t');
    if (tab < 0) continue;
    const [mode, type, , size] = record.slice(0, tab).trim().split(/\s+/);
    const path = record.slice(tab + 1);
    if (type !== 'blob' || mode === '120000' || SKIPPED.test(path)) continue;
    const name = path.slice(path.lastIndexOf('/') + 1);
    const dot = name.lastIndexOf('.');
    const language = BY_NAME[name] ?? (dot > 0 ? BY_EXTENSION[name.slice(dot + 1).toLowerCase()] : undefined);
    const n = Number(size);
    if (!language || !Number.isFinite(n) || n <= 0) continue;
    bytes.set(language, (bytes.get(language) ?? 0) + n);
    total += n;
  }
  if (!total) return {};
  const out: Record<string, number> = {};
  for (const [language, n] of [...bytes].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))) {
    out[language] = Math.round((n / total) * 10000) / 100;
  }
  return out;
}
