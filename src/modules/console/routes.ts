import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { acceptsGzip } from '../../platform/encoding.js';
import { notFound } from '../../platform/errors.js';
import { consoleFiles } from './bundle.js';
import { consoleCsp, consolePage, newStyleNonce } from './page.js';

/**
 * The console's routes are pages and files for a browser, not an API: they
 * stay out of /openapi.json (and so out of the SDK), like /docs.
 */
const hide = true;
/** Asset names carry a hash of their content: a new build has new names, so browsers may keep them for a year. */
const ASSET_MAX_AGE_SECONDS = 31_536_000;
const HTML = Type.String({ description: 'The console page.' });
const AssetParams = Type.Object({ name: Type.String({ pattern: '^[A-Za-z0-9_.-]{1,120}$' }) });

/** Every client-side path gets the same page; the app reads the path itself. */
async function sendPage(reply: FastifyReply) {
  const files = await consoleFiles();
  const styleNonce = newStyleNonce();
  return reply
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', consoleCsp(styleNonce))
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'same-origin')
    .header('cache-control', 'no-store')
    .send(consolePage({ script: files.script, stylesheet: files.stylesheet, styleNonce }));
}

export const rootRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const page = {
    config: { auth: 'public' as const },
    schema: { hide, summary: 'The console (a single-page app; every path under /console answers with its page)', response: { 200: { description: 'The console page.', content: { 'text/html': { schema: HTML } } } } },
  };
  app.get('/console', page, async (_request, reply) => sendPage(reply));
  app.get('/console/*', page, async (_request, reply) => sendPage(reply));

  app.get(
    '/console/assets/:name',
    {
      config: { auth: 'public' },
      schema: {
        hide,
        summary: 'A script or stylesheet of the console (content-hashed name)',
        params: AssetParams,
        response: { 200: { description: 'The file.', content: { 'text/javascript': { schema: Type.String() }, 'text/css': { schema: Type.String() } } }, 304: { description: 'Not modified (ETag).', type: 'null' } },
      },
    },
    async (request, reply) => {
      const file = (await consoleFiles()).assets.get(request.params.name);
      if (!file) throw notFound('console file');
      reply
        .header('content-type', file.contentType)
        .header('etag', file.etag)
        .header('x-content-type-options', 'nosniff')
        .header('cross-origin-resource-policy', 'same-origin')
        .header('vary', 'accept-encoding')
        .header('cache-control', `public, max-age=${ASSET_MAX_AGE_SECONDS}, immutable`);
      if (request.headers['if-none-match'] === file.etag) return reply.status(304).send();
      if (acceptsGzip(request)) return reply.header('content-encoding', 'gzip').send(file.gzipped);
      return reply.send(file.body);
    },
  );
};
