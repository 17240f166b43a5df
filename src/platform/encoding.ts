import type { FastifyRequest } from 'fastify';

/**
 * Whether the request accepts a gzip-encoded answer (RFC 9110, 12.5.3):
 * `gzip` (or `x-gzip`) listed with a weight above zero, or `*` above zero
 * with gzip not refused by name. No header, or one that lists neither,
 * accepts only the identity.
 */
export function acceptsGzip(request: FastifyRequest): boolean {
  const header = request.headers['accept-encoding'];
  if (typeof header !== 'string') return false;
  let named: boolean | null = null;
  let any = false;
  for (const part of header.split(',')) {
    const [coding, ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase());
    const weight = parameters.find((parameter) => parameter.startsWith('q='));
    const accepted = weight === undefined || Number(weight.slice(2)) > 0;
    if (coding === 'gzip' || coding === 'x-gzip') named = (named ?? false) || accepted;
    else if (coding === '*') any = accepted;
  }
  return named ?? any;
}
