import { randomBytes } from 'node:crypto';

/**
 * The console's one HTML page, served for every client-side path under
 * `/console`, and its Content-Security-Policy: scripts from the service only
 * (no inline script at all), styles from the service plus the `<style>`
 * elements the component library writes, which must carry this response's
 * nonce; calls to the service only; never framed.
 */
export function consoleCsp(styleNonce: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${styleNonce}'`,
    "img-src 'self' data: https:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function newStyleNonce(): string {
  return randomBytes(16).toString('base64');
}

export function consolePage(input: { script: string; stylesheet: string; styleNonce: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<meta name="style-nonce" content="${input.styleNonce}">
<title>Loyalty console</title>
<link rel="stylesheet" href="/console/assets/${encodeURIComponent(input.stylesheet)}">
<script type="module" src="/console/assets/${encodeURIComponent(input.script)}"></script>
</head>
<body>
<div id="root"></div>
<noscript><p>The console needs JavaScript.</p></noscript>
</body>
</html>
`;
}
