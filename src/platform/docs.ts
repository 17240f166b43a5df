import type { FastifyPluginAsync } from 'fastify';
import swaggerUi from '@fastify/swagger-ui';

/**
 * The API reference page, `/docs` (Swagger UI over the generated OpenAPI
 * document), with headers of its own: no site may frame it, and it runs
 * scripts from the service only.
 *
 * The page @fastify/swagger-ui serves has no inline script (its start-up code
 * is the file `static/swagger-initializer.js`), so `script-src 'self'` holds
 * without a hash or nonce. Styles keep `'unsafe-inline'`: Swagger UI sets
 * style attributes as it renders (swagger-api/swagger-ui#10655), and a style
 * cannot run code. The page fetches its document from `/docs/json` and sends
 * "Try it out" requests to the document's server, this service
 * (`connect-src 'self'`, plus PUBLIC_BASE_URL's origin when the page is
 * reached under another name). Icons are SVG `data:` images in the stylesheet.
 */
export function docsContentSecurityPolicy(publicBaseUrl: string | null): string {
  const connect = ["'self'"];
  const origin = originOf(publicBaseUrl);
  if (origin) connect.push(origin);
  return [
    "default-src 'self'",
    "base-uri 'self'",
    `connect-src ${connect.join(' ')}`,
    "font-src 'self' data:",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "img-src 'self' data:",
    "object-src 'none'",
    "script-src 'self'",
    "script-src-attr 'none'",
    "style-src 'self' 'unsafe-inline'",
  ].join('; ');
}

function originOf(url: string | null): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.origin : null;
  } catch {
    return null;
  }
}

/**
 * Registers Swagger UI at `/docs`. Encapsulated, so that the headers hook
 * covers the page, its scripts and styles (served by @fastify/static inside
 * the plugin) and `/docs/json`, and nothing else of the API.
 */
export const docsUi: FastifyPluginAsync<{ publicBaseUrl: string | null }> = async (app, options) => {
  const policy = docsContentSecurityPolicy(options.publicBaseUrl);
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('content-security-policy', policy);
    reply.header('x-frame-options', 'DENY');
    reply.header('x-content-type-options', 'nosniff');
    return payload;
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
};
