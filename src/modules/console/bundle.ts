import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

/**
 * The console's files, held in memory for the life of the process. From the
 * compiled service (`npm start`, dist/) they are read from dist/console, which
 * `npm run build` wrote; from the TypeScript sources (tests, tsx) the console
 * is built with esbuild at the first request, so a test always sees the
 * current sources. A failed load is not kept: the next request tries again.
 */
export interface ConsoleAsset {
  body: Buffer;
  /** The body gzip-compressed, sent to browsers that accept it. */
  gzipped: Buffer;
  etag: string;
  contentType: string;
}

export interface ConsoleFiles {
  script: string;
  stylesheet: string;
  assets: Map<string, ConsoleAsset>;
}

const here = path.dirname(fileURLToPath(import.meta.url));
const FROM_SOURCES = import.meta.url.endsWith('.ts');
const DIST_DIR = path.resolve(here, '../../console');
const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

function asset(name: string, contents: Uint8Array): ConsoleAsset {
  const body = Buffer.from(contents);
  return {
    body,
    gzipped: gzipSync(body),
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
    contentType: CONTENT_TYPES[path.extname(name)] ?? 'application/octet-stream',
  };
}

async function load(): Promise<ConsoleFiles> {
  let built: { script: string; stylesheet: string; files: Array<{ name: string; contents: Uint8Array }> };
  if (FROM_SOURCES) {
    const { buildConsole } = await import('../../../packages/console/build.mjs');
    built = await buildConsole();
  } else {
    const manifest = JSON.parse(fs.readFileSync(path.join(DIST_DIR, 'manifest.json'), 'utf8')) as { script: string; stylesheet: string };
    const names = fs.readdirSync(DIST_DIR).filter((name) => name !== 'manifest.json');
    built = { ...manifest, files: names.map((name) => ({ name, contents: fs.readFileSync(path.join(DIST_DIR, name)) })) };
  }
  return { script: built.script, stylesheet: built.stylesheet, assets: new Map(built.files.map((file) => [file.name, asset(file.name, file.contents)])) };
}

let loading: Promise<ConsoleFiles> | null = null;

export function consoleFiles(): Promise<ConsoleFiles> {
  loading ??= load().catch((error: unknown) => {
    loading = null;
    throw error;
  });
  return loading;
}
