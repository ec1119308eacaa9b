// Which PostgreSQL plans of a list page's ids the walk replaces (http/ordered-walk.ts): those that
// sort every match under the Limit, also through a parallel Gather Merge; not those that read the
// page in order from an index.
import { describe, expect, it } from 'vitest';
import { pgPlanSorts, type PgPlanNode } from '../../src/http/ordered-walk.js';

const node = (type: string, ...children: PgPlanNode[]): PgPlanNode => ({ 'Node Type': type, ...(children.length ? { Plans: children } : {}) });

describe('pgPlanSorts', () => {
  it('sees a sort of every match under the Limit, directly or under a Gather Merge', () => {
    expect(pgPlanSorts(node('Limit', node('Sort', node('Nested Loop', node('Hash Join'), node('Index Only Scan')))))).toBe(true);
    expect(pgPlanSorts(node('Limit', node('Gather Merge', node('Sort', node('Parallel Seq Scan')))))).toBe(true);
  });

  it('leaves alone a page read in order from an index, and anything without a Limit', () => {
    expect(pgPlanSorts(node('Limit', node('Index Scan Backward')))).toBe(false);
    expect(pgPlanSorts(node('Limit', node('Incremental Sort', node('Index Scan'))))).toBe(false);
    expect(pgPlanSorts(node('Sort', node('Seq Scan')))).toBe(false);
    expect(pgPlanSorts(undefined)).toBe(false);
  });
});
