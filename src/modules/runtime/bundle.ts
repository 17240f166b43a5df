import path from 'node:path';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/**
 * The runtime bundle (packages/runtime), built with esbuild in memory on the
 * first request and kept for the life of the process, so `npm start` and
 * `npm test` need no build step. A failed build is not kept: the next
 * request tries again.
 */
export interface Asset {
  body: string;
  etag: string;
  contentType: string;
}

export interface RuntimeBundle {
  js: Asset;
  css: Asset;
  /** A short hash of both files, put in the asset URLs so a new build is never served from a stale cache. */
  version: string;
}

const ENTRY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../packages/runtime/src/main.ts');
/** Browsers the bundle is written for: every evergreen browser of the last few years. */
const TARGET = ['es2020'];

let building: Promise<RuntimeBundle> | null = null;

function asset(body: string, contentType: string): Asset {
  return { body, contentType, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

async function buildBundle(): Promise<RuntimeBundle> {
  const result = await build({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    outdir: 'runtime-out',
    format: 'iife',
    target: TARGET,
    minify: true,
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'silent',
  });
  const file = (extension: string) => {
    const found = result.outputFiles.find((f) => f.path.endsWith(extension));
    if (!found) throw new Error(`the runtime build produced no ${extension} file`);
    return found.text;
  };
  const js = asset(file('.js'), 'text/javascript; charset=utf-8');
  const css = asset(file('.css'), 'text/css; charset=utf-8');
  const version = createHash('sha256').update(js.etag).update(css.etag).digest('base64url').slice(0, 12);
  return { js, css, version };
}

export function runtimeBundle(): Promise<RuntimeBundle> {
  building ??= buildBundle().catch((error: unknown) => {
    building = null;
    throw error;
  });
  return building;
}
