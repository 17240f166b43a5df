/**
 * The limits of each request body field, drawn at build time from the
 * service's own OpenAPI document (packages/sdk/openapi.json, the snapshot a
 * test keeps equal to what the service serves). The console's forms read them
 * through `virtual:request-rules` (src/lib/forms.ts): a limit changed on the
 * server changes the form's hint and its check, with no second copy to edit.
 *
 * The answer maps an operationId to its fields, each keyed by a JSON Pointer
 * in which an array's items are `*`: `/effects/*\/points`.
 */
import fs from 'node:fs';
import path from 'node:path';

const DOCUMENT = path.resolve(import.meta.dirname, '../sdk/openapi.json');
const KEPT = ['type', 'minLength', 'maxLength', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'pattern', 'format', 'enum', 'minItems', 'maxItems'];

function resolve(document, schema) {
  let current = schema;
  for (let depth = 0; current && current.$ref && depth < 20; depth += 1) {
    current = current.$ref.replace(/^#\//, '').split('/').reduce((node, key) => node?.[key], document);
  }
  return current ?? {};
}

function walk(document, schema, pointer, required, out, seen) {
  const node = resolve(document, schema);
  if (seen.has(node) || pointer.split('/').length > 8) return;
  const rule = {};
  for (const key of KEPT) if (node[key] !== undefined) rule[key] = node[key];
  if (Array.isArray(node.type)) rule.type = node.type.filter((t) => t !== 'null')[0];
  const union = node.anyOf ?? node.oneOf;
  if (union) {
    const literals = union.map((branch) => resolve(document, branch)).filter((branch) => branch.const !== undefined);
    if (literals.length === union.length) rule.enum = literals.map((branch) => branch.const);
  }
  if (node.const !== undefined) rule.enum = [node.const];
  if (required) rule.required = true;
  if (pointer && Object.keys(rule).length > 0) out[pointer] = { ...out[pointer], ...rule };
  const inner = new Set(seen).add(node);
  if (node.properties) {
    const needed = new Set(node.required ?? []);
    for (const [name, child] of Object.entries(node.properties)) walk(document, child, `${pointer}/${name}`, needed.has(name), out, inner);
  }
  if (node.items) walk(document, node.items, `${pointer}/*`, false, out, inner);
  for (const branch of union ?? node.allOf ?? []) {
    const resolved = resolve(document, branch);
    if (resolved.properties) walk(document, resolved, pointer, false, out, inner);
  }
}

/** operationId → JSON Pointer → the limits of that field. */
export function requestRules(document = JSON.parse(fs.readFileSync(DOCUMENT, 'utf8'))) {
  const rules = {};
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      const schema = operation?.requestBody?.content?.['application/json']?.schema;
      if (!operation?.operationId || !schema) continue;
      const fields = {};
      walk(document, schema, '', false, fields, new Set());
      rules[operation.operationId] = fields;
    }
  }
  return rules;
}

/** The esbuild plugin that serves `virtual:request-rules`. */
export const requestRulesPlugin = {
  name: 'request-rules',
  setup(build) {
    build.onResolve({ filter: /^virtual:request-rules$/ }, () => ({ path: 'request-rules', namespace: 'request-rules' }));
    build.onLoad({ filter: /.*/, namespace: 'request-rules' }, () => ({ contents: `export default ${JSON.stringify(requestRules())};`, loader: 'js' }));
  },
};
