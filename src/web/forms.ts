// Reading submitted form fields (strings only; anything else counts as absent).
import type { FastifyRequest } from 'fastify';

export function field(req: FastifyRequest, name: string): string | undefined {
  const body = req.body as Record<string, unknown> | undefined;
  const v = body && typeof body === 'object' ? body[name] : undefined;
  return typeof v === 'string' ? v : undefined;
}

export function fieldList(req: FastifyRequest, name: string): string[] {
  const body = req.body as Record<string, unknown> | undefined;
  const v = body && typeof body === 'object' ? body[name] : undefined;
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  return [];
}

export function queryField(req: FastifyRequest, name: string): string | undefined {
  const q = req.query as Record<string, unknown> | undefined;
  const v = q && typeof q === 'object' ? q[name] : undefined;
  return typeof v === 'string' ? v : undefined;
}
