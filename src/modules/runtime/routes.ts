import { Type } from '@sinclair/typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, fieldError } from '../../platform/errors.js';
import { embedSettings } from '../engagements/index.js';
import { runtimeBundle, type Asset } from './bundle.js';
import { pageLanguage, type PageTexts } from './page-texts.js';
import { demoHostPage, errorPage, notAvailable, runtimeCsp, runtimeShell, type PageError } from './pages.js';

const tags = ['runtime'];
const Slug = Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$' });
const SiteParams = Type.Object({ tenantSlug: Slug, siteSlug: Slug });
const HTML = Type.String({ description: 'An HTML page.' });

const htmlResponse = (description: string) => ({ description, content: { 'text/html': { schema: HTML } } });
/** Errors of the pages are pages too; the JSON error body is what a non-browser client may see from the shared hooks. */
const htmlOrError = (description: string) => ({
  description,
  content: { 'text/html': { schema: HTML }, 'application/json': { schema: Type.Ref('ErrorResponse') } },
});
const pageErrors = {
  400: htmlOrError('The address is not valid (an HTML page saying so).'),
  404: htmlOrError('No published engagement on this site (an HTML page saying so).'),
  429: htmlOrError('Too many requests from this address (an HTML page saying so, with Retry-After).'),
  500: htmlOrError('The service failed (an HTML page saying so).'),
};

/** A preview is framed by the console only, on the service's own origin (runtimeCsp adds 'self'). */
const PREVIEW_FRAME_ANCESTORS = ["'self'"];

const ASSET_MAX_AGE_SECONDS = 300;
const VERSIONED_ASSET_MAX_AGE_SECONDS = 31_536_000;

function pageErrorOf(error: FastifyError | AppError, t: PageTexts): { status: number; page: PageError } {
  if (error instanceof AppError) {
    if (error.status === 429) return { status: 429, page: { code: error.code, title: t.tooManyTitle, message: t.tooManyMessage } };
    if (error.status === 404) return { status: 404, page: { code: error.code, ...notAvailable(t) } };
    // The service's detail is written in English.
    if (error.status < 500) return { status: error.status, page: { code: error.code, title: t.notAvailableTitle, message: error.message } };
  }
  if ((error as FastifyError).validation) {
    return { status: 400, page: { code: 'VALIDATION_INVALID_REQUEST', title: t.invalidAddressTitle, message: t.invalidAddressMessage } };
  }
  return { status: 500, page: { code: 'INTERNAL_ERROR', title: t.serviceProblemTitle, message: t.serviceProblemMessage } };
}

const languageOf = (request: FastifyRequest) => pageLanguage((request.query as Record<string, unknown> | undefined)?.locale, request.headers['accept-language']);

function sendPage(reply: FastifyReply, status: number, html: string, csp: string) {
  return reply
    .status(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', csp)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-cache')
    .send(html);
}

/** The runtime's script and stylesheet, built on first request (see bundle.ts). */
const assetRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const serve = async (request: FastifyRequest, reply: FastifyReply, pick: (b: Awaited<ReturnType<typeof runtimeBundle>>) => Asset) => {
    const bundle = await runtimeBundle();
    const file = pick(bundle);
    const versioned = (request.query as { v?: string }).v === bundle.version;
    reply
      .header('content-type', file.contentType)
      .header('etag', file.etag)
      .header('x-content-type-options', 'nosniff')
      .header('cross-origin-resource-policy', 'same-origin')
      .header('cache-control', `public, max-age=${versioned ? `${VERSIONED_ASSET_MAX_AGE_SECONDS}, immutable` : ASSET_MAX_AGE_SECONDS}`);
    if (request.headers['if-none-match'] === file.etag) return reply.status(304).send();
    return reply.send(file.body);
  };
  const AssetQuery = Type.Object({ v: Type.Optional(Type.String({ maxLength: 64, description: 'The build version (cache buster).' })) });
  const assetResponse = (type: string) => ({ 200: { description: `The ${type}.`, content: { [type]: { schema: Type.String() } } }, 304: { description: 'Not modified (ETag).', type: 'null' } });

  app.get(
    '/embed/assets/runtime.js',
    { config: { auth: 'public' }, schema: { tags, operationId: 'getEmbedRuntimeScript', summary: 'The runtime script (built from packages/runtime with esbuild at first use)', querystring: AssetQuery, response: assetResponse('text/javascript') } },
    async (request, reply) => serve(request, reply, (b) => b.js),
  );
  app.get(
    '/embed/assets/runtime.css',
    { config: { auth: 'public' }, schema: { tags, operationId: 'getEmbedRuntimeStylesheet', summary: 'The runtime stylesheet', querystring: AssetQuery, response: assetResponse('text/css') } },
    async (request, reply) => serve(request, reply, (b) => b.css),
  );
};

/** The runtime page, and in development the demo host page. Errors here are HTML pages, never a raw error body. */
const pageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.ctx;

  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    const { language, texts } = languageOf(request);
    const { status, page } = pageErrorOf(error, texts);
    if (status >= 500) request.log.error({ err: error }, 'runtime page failed');
    if (error instanceof AppError) for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
    return sendPage(reply, status, errorPage(page, language), runtimeCsp(null));
  });

  app.get(
    '/embed/:tenantSlug/:siteSlug',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        operationId: 'getEmbedPage',
        summary: 'The embeddable runtime page of a site (put it in an iframe)',
        description:
          'An HTML page that renders the published engagement of the site with the runtime script, through the public and session routes only. ' +
          'Pass a server-issued session in the fragment, `#session=<session_id>` (never sent to a server, so never in a log); without one the page asks for an anonymous session when the engagement allows it. ' +
          'Theme it with `lk-<name>=<value>` parameters, one per theme variable (`lk-color-accent=%230f766e`, `lk-radius=4px`; the list is in packages/runtime/README.md); they override the engagement\'s `canvas.theme`. ' +
          'The page posts `activity:completed` messages to the host window (see the README). Its Content-Security-Policy `frame-ancestors` is the engagement\'s `embed_origins` and the service\'s own origin (`\'self\'`, for the console\'s live preview), or `*` when none are set.',
        params: SiteParams,
        querystring: Type.Object(
          {
            engagement_id: Type.Optional(Type.String({ format: 'uuid', description: 'The engagement the host embeds (as in embed-url); the page says it is not available when the site now serves another one.' })),
            host_origin: Type.Optional(Type.String({ maxLength: 255, description: 'The host page\'s origin, to address messages to when the browser does not tell it.' })),
            preview: Type.Optional(
              Type.Literal('1', {
                description:
                  "A draft's preview (the console's editor): the page is served whether or not the site serves a published engagement, marks itself as a preview, and loads the draft for the preview session in its fragment (`startEngagementPreview`). Only the service's own origin may frame it.",
              }),
            ),
            locale: Type.Optional(
              Type.String({
                maxLength: 35,
                description: 'The participant\'s language (a BCP 47 tag such as `de-DE`). Without it the browser\'s language decides; languages the runtime does not have fall back to English.',
              }),
            ),
          },
          { additionalProperties: true },
        ),
        response: { 200: htmlResponse('The runtime page.'), ...pageErrors },
      },
    },
    async (request, reply) => {
      const { tenantSlug, siteSlug } = request.params;
      const { language, texts } = languageOf(request);
      if (request.query.preview === '1') {
        // The shell holds nothing of the draft: the runtime reads it with the preview session, which is checked then.
        const bundle = await runtimeBundle();
        const html = runtimeShell({ title: texts.previewTitle, tenantSlug, siteSlug, assetVersion: bundle.version, language, texts, preview: true });
        return sendPage(reply, 200, html, runtimeCsp(PREVIEW_FRAME_ANCESTORS));
      }
      const settings = await embedSettings(db, tenantSlug, siteSlug);
      if (!settings) return sendPage(reply, 404, errorPage({ code: 'SITE_NOT_FOUND', ...notAvailable(texts) }, language), runtimeCsp(null));
      const bundle = await runtimeBundle();
      const html = runtimeShell({ title: settings.name, tenantSlug, siteSlug, assetVersion: bundle.version, language, texts });
      return sendPage(reply, 200, html, runtimeCsp(settings.embedOrigins));
    },
  );

  if (config.env === 'production') return;

  app.get(
    '/embed-demo/:tenantSlug/:siteSlug',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        operationId: 'getEmbedDemoPage',
        summary: 'A demo host page that embeds the runtime page in an iframe (not served in production)',
        description:
          'Plays a tenant\'s web page: embeds `/embed/{tenantSlug}/{siteSlug}` from `embed_base` (default: this service), passes on `#session=<session_id>` from its own fragment, and lists the messages the runtime posts.',
        params: SiteParams,
        querystring: Type.Object(
          {
            engagement_id: Type.Optional(Type.String({ format: 'uuid' })),
            embed_base: Type.Optional(Type.String({ maxLength: 255, pattern: '^https?://', description: 'Where the runtime page is served from, when not from this address (for a cross-origin demo: localhost vs 127.0.0.1).' })),
          },
          { additionalProperties: false },
        ),
        response: { 200: htmlResponse('The demo host page.'), ...pageErrors },
      },
    },
    async (request, reply) => {
      const { tenantSlug, siteSlug } = request.params;
      let embedOrigin = `${request.protocol}://${request.host}`;
      if (request.query.embed_base) {
        try {
          embedOrigin = new URL(request.query.embed_base).origin;
        } catch {
          throw new AppError('invalid', 'VALIDATION_INVALID_VALUE', 'embed_base must be an http(s) URL', { errors: [fieldError('/embed_base', 'format', 'must be an http(s) URL', { in: 'query' })] });
        }
      }
      const { html, csp } = demoHostPage({ tenantSlug, siteSlug, engagementId: request.query.engagement_id ?? null, embedOrigin });
      return sendPage(reply, 200, html, csp);
    },
  );
};

export const rootRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(assetRoutes);
  await app.register(pageRoutes);
};
