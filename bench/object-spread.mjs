// Why the presenters build entities with property stores: on Node 20 (V8 11.3) an object literal
// that starts with a spread and goes on with more members is very slow.
//   node bench/object-spread.mjs
function basic(u) {
  return { id: u.id, username: u.username, public_email: u.public_email, name: u.name, state: u.state, locked: false, avatar_url: null, web_url: `x/${u.username}` };
}
const u = { id: 1, username: 'root', public_email: null, name: 'A', state: 'active', created_at: 'x', bio: '', location: '' };
const cases = {
  'spread first, then 8 members': (v) => ({ ...basic(v), created_at: v.created_at, bio: v.bio, location: v.location, a: 1, b: 2, c: 3, d: 4, e: 5 }),
  'Object.assign({}, base, {...})': (v) => Object.assign({}, basic(v), { created_at: v.created_at, bio: v.bio, location: v.location, a: 1, b: 2, c: 3, d: 4, e: 5 }),
  'property stores': (v) => {
    const o = basic(v);
    o.created_at = v.created_at; o.bio = v.bio; o.location = v.location; o.a = 1; o.b = 2; o.c = 3; o.d = 4; o.e = 5;
    return o;
  },
};
for (const [name, f] of Object.entries(cases)) {
  for (let i = 0; i < 2000; i++) f(u);
  const t = performance.now();
  for (let i = 0; i < 100_000; i++) f(u);
  console.log(`${name.padEnd(34)} ${(((performance.now() - t) / 100_000) * 1000).toFixed(2)} µs per object (${process.version})`);
}
