import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { tsImport } from 'tsx/esm/api';
import { repositoryRoot } from './repository.js';

/**
 * The console's translations, checked without a browser: every key a screen
 * asks for exists in English and in German, German has exactly the English
 * keys, and no visible text is written outside `t()`. The bundles are read as
 * the console builds them: the base strings (src/i18n) plus every
 * `registerStrings(english, german)` call, whose two arguments are resolved to
 * the strings modules they name and imported.
 */
const SRC = path.join(repositoryRoot, 'packages/console/src');

type Tree = { [key: string]: string | Tree };

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

const files = sourceFiles(SRC).map((file) => ({
  file,
  rel: path.relative(SRC, file),
  ast: ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS),
}));

function walk(node: ts.Node, visit: (node: ts.Node) => void): void {
  visit(node);
  node.forEachChild((child) => walk(child, visit));
}

function where(ast: ts.SourceFile, node: ts.Node): string {
  const { line } = ast.getLineAndCharacterOfPosition(node.getStart(ast));
  return `${path.relative(SRC, ast.fileName)}:${line + 1}`;
}

/** The module and export an identifier of a file stands for: an import, or the file's own `export const`. */
function resolveIdentifier(ast: ts.SourceFile, name: string): { module: string; exported: string } | null {
  for (const statement of ast.statements) {
    if (ts.isImportDeclaration(statement) && statement.importClause?.namedBindings && ts.isNamedImports(statement.importClause.namedBindings)) {
      for (const element of statement.importClause.namedBindings.elements) {
        if (element.name.text !== name) continue;
        const specifier = (statement.moduleSpecifier as ts.StringLiteral).text;
        const base = path.resolve(path.dirname(ast.fileName), specifier);
        const module = ['.ts', '.tsx', '/index.ts'].map((ext) => base + ext).find((candidate) => fs.existsSync(candidate));
        return module ? { module, exported: (element.propertyName ?? element.name).text } : null;
      }
    }
    if (ts.isVariableStatement(statement) && statement.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) {
      for (const declaration of statement.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name) && declaration.name.text === name) return { module: ast.fileName, exported: name };
      }
    }
  }
  return null;
}

function merge(into: Tree, from: Tree): void {
  for (const [key, value] of Object.entries(from)) {
    if (typeof value === 'object' && typeof into[key] === 'object') merge(into[key] as Tree, value);
    else into[key] = typeof value === 'object' ? structuredClone(value) : value;
  }
}

function flatten(tree: Tree, prefix = ''): string[] {
  return Object.entries(tree).flatMap(([key, value]) => (typeof value === 'object' ? flatten(value, `${prefix}${key}.`) : [`${prefix}${key}`]));
}

/** A console source module (TypeScript, run through tsx: the tests themselves may run compiled). */
const importSource = (file: string) => tsImport(pathToFileURL(file).href, import.meta.url) as Promise<Record<string, Tree>>;

/** The English and German bundles, as the running console has them once every section is registered. */
async function loadBundles(): Promise<{ en: Tree; de: Tree; problems: string[] }> {
  const en: Tree = structuredClone((await importSource(path.join(SRC, 'i18n/en.ts'))).en);
  const de: Tree = structuredClone((await importSource(path.join(SRC, 'i18n/de.ts'))).de);
  const problems: string[] = [];
  for (const { ast } of files) {
    const calls: ts.CallExpression[] = [];
    walk(ast, (node) => {
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'registerStrings') calls.push(node);
    });
    for (const call of calls) {
      if (call.arguments.length !== 2) {
        problems.push(`${where(ast, call)}: registerStrings needs the English strings and their German (registerStrings(strings, stringsDe))`);
        continue;
      }
      const bundles = [en, de];
      for (const [i, argument] of call.arguments.entries()) {
        const target = ts.isIdentifier(argument) ? resolveIdentifier(ast, argument.text) : null;
        if (!target) {
          problems.push(`${where(ast, call)}: registerStrings takes strings exported from a strings module (strings.ts / strings.de.ts), not ${argument.getText(ast).slice(0, 40)}`);
          continue;
        }
        const strings = (await importSource(target.module))[target.exported] as Tree | undefined;
        if (!strings) problems.push(`${where(ast, call)}: ${path.relative(SRC, target.module)} exports no ${target.exported}`);
        else merge(bundles[i], strings);
      }
    }
  }
  return { en, de, problems };
}

const PLURAL = /_(zero|one|two|few|many|other)$/;

function lookup(tree: Tree, key: string): string | Tree | undefined {
  let node: string | Tree | undefined = tree;
  for (const part of key.split('.')) {
    if (typeof node !== 'object') return undefined;
    node = node[part];
  }
  return node;
}

/** A key `t()` resolves: the string itself or, with a count, its plural forms. */
function hasKey(tree: Tree, key: string): boolean {
  return typeof lookup(tree, key) === 'string' || typeof lookup(tree, `${key}_other`) === 'string';
}

/** The keys a `t(…)` argument can stand for: literals, both branches of a condition, or a template's fixed prefix. */
function keysOf(node: ts.Expression): { keys: string[]; prefixes: string[] } {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return { keys: [node.text], prefixes: [] };
  if (ts.isParenthesizedExpression(node)) return keysOf(node.expression);
  if (ts.isConditionalExpression(node)) {
    const [a, b] = [keysOf(node.whenTrue), keysOf(node.whenFalse)];
    return { keys: [...a.keys, ...b.keys], prefixes: [...a.prefixes, ...b.prefixes] };
  }
  if (ts.isTemplateExpression(node) && node.head.text.includes('.')) return { keys: [], prefixes: [node.head.text.slice(0, node.head.text.lastIndexOf('.'))] };
  return { keys: [], prefixes: [] };
}

function isTranslateCall(node: ts.CallExpression): boolean {
  const callee = node.expression;
  return (ts.isIdentifier(callee) && callee.text === 't') || (ts.isPropertyAccessExpression(callee) && callee.name.text === 't');
}

/** Every key the console's code names: in `t(…)` calls and in the sections' navigation (`label`, `heading` of a ConsoleArea). */
function usedKeys(): { key: string; at: string; prefix: boolean }[] {
  const used: { key: string; at: string; prefix: boolean }[] = [];
  for (const { ast } of files) {
    const isArea = /ConsoleArea/.test(ast.text);
    walk(ast, (node) => {
      if (ts.isCallExpression(node) && isTranslateCall(node) && node.arguments[0]) {
        const { keys, prefixes } = keysOf(node.arguments[0]);
        for (const key of keys) used.push({ key, at: where(ast, node), prefix: false });
        for (const key of prefixes) used.push({ key, at: where(ast, node), prefix: true });
      }
      if (isArea && ts.isPropertyAssignment(node) && ts.isIdentifier(node.name) && ['label', 'heading'].includes(node.name.text) && ts.isStringLiteral(node.initializer)) {
        used.push({ key: node.initializer.text, at: where(ast, node), prefix: false });
      }
    });
  }
  return used;
}

const bundles = loadBundles();

test('every key the console asks for exists in English and in German', async () => {
  const { en, de } = await bundles;
  const used = usedKeys();
  assert.ok(used.length > 500, `the scan found the console's t() calls (${used.length})`);
  const missing = used.flatMap(({ key, at, prefix }) =>
    [['English', en], ['German', de]].flatMap(([language, tree]) => {
      const found = prefix ? typeof lookup(tree as Tree, key) === 'object' : hasKey(tree as Tree, key);
      return found ? [] : [`${at}: ${prefix ? `no ${language} strings under ${key}.*` : `no ${language} string for ${key}`}`];
    }),
  );
  assert.deepEqual(missing, []);
});

test('every section registers its English strings with their German, from strings modules', async () => {
  const { problems } = await bundles;
  assert.deepEqual(problems, []);
});

test('the German bundle has exactly the English keys, and every German string is filled in', async () => {
  const { en, de } = await bundles;
  const english = new Set(flatten(en));
  const german = new Set(flatten(de));
  assert.deepEqual([...english].filter((key) => !german.has(key)), [], 'English keys without German');
  assert.deepEqual([...german].filter((key) => !english.has(key)), [], 'German keys English lacks');
  const blank = [...german].filter((key) => !String(lookup(de, key)).trim());
  assert.deepEqual(blank, [], 'empty German strings');
  const placeholders = (text: string) => [...text.matchAll(/\{\{\s*(\w+)/g)].map((m) => m[1]).sort().join(',');
  const differing = [...english].filter((key) => german.has(key) && placeholders(String(lookup(en, key))) !== placeholders(String(lookup(de, key))));
  assert.deepEqual(differing, [], 'German strings that use other {{placeholders}} than the English');
  // A plural needs its `_other` form in both languages, or i18next falls back to the bare key.
  const plurals = [...english].filter((key) => PLURAL.test(key)).map((key) => key.replace(PLURAL, '_other'));
  assert.deepEqual(plurals.filter((key) => !english.has(key)), [], 'plurals without an _other form');
  // A sentence left in English is a translation not done (single words and names may well be the same: Status, Code, Quiz).
  const untranslated = [...english].filter((key) => german.has(key) && String(lookup(en, key)).split(/\s+/).length >= 3 && lookup(en, key) === lookup(de, key));
  assert.deepEqual(untranslated, [], 'German strings still in English');
});

/** The keys of `t('literal', { count, … })` calls: a count decides the grammar of what follows it. */
function countedKeys(): { key: string; at: string }[] {
  const counted: { key: string; at: string }[] = [];
  for (const { ast } of files) {
    walk(ast, (node) => {
      if (!ts.isCallExpression(node) || !isTranslateCall(node) || !node.arguments[0]) return;
      const options = node.arguments[1];
      if (!options || !ts.isObjectLiteralExpression(options) || !options.properties.some((p) => p.name?.getText(ast) === 'count')) return;
      for (const key of keysOf(node.arguments[0]).keys) counted.push({ key, at: where(ast, node) });
    });
  }
  return counted;
}

test('a count followed by a word has its plural forms (_one, _other) in both languages', async () => {
  const { en, de } = await bundles;
  const missing = countedKeys().flatMap(({ key, at }) => {
    const english = lookup(en, key) ?? lookup(en, `${key}_other`);
    if (typeof english !== 'string' || !/\{\{count\}\}\s*\p{L}/u.test(english)) return [];
    return [['English', en], ['German', de]].flatMap(([language, tree]) =>
      typeof lookup(tree as Tree, `${key}_one`) === 'string' && typeof lookup(tree as Tree, `${key}_other`) === 'string' ? [] : [`${at}: ${key} ("${english}") needs ${language} ${key}_one and ${key}_other`],
    );
  });
  assert.deepEqual(missing, []);
});

/** Attributes whose text a person reads or a screen reader speaks. */
const VISIBLE_ATTRIBUTES = new Set(['label', 'title', 'placeholder', 'aria-label', 'description', 'alt', 'error', 'message', 'confirmLabel']);
const LETTERS = /\p{L}/u;
/** A technical example rather than language (`https://`, `channel=app`, `properties.amount`): one token with code punctuation. */
const CODE_EXAMPLE = /^[\w.:/=-]*[.:/=_][\w.:/=-]*$/;

function isLanguage(text: string): boolean {
  return LETTERS.test(text) && !CODE_EXAMPLE.test(text.trim());
}

function literalText(node: ts.Node | undefined): string | null {
  if (!node) return null;
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isJsxExpression(node)) return literalText(node.expression);
  if (ts.isParenthesizedExpression(node)) return literalText(node.expression);
  if (ts.isConditionalExpression(node)) return literalText(node.whenTrue) ?? literalText(node.whenFalse);
  if (ts.isBinaryExpression(node) && [ts.SyntaxKind.BarBarToken, ts.SyntaxKind.QuestionQuestionToken].includes(node.operatorToken.kind)) return literalText(node.right);
  if (ts.isTemplateExpression(node)) return [node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join(' ');
  return null;
}

test('no visible text outside t(): no JSX text or label, title, placeholder, aria-label, description with letters', () => {
  const found: string[] = [];
  for (const { ast, rel } of files) {
    if (!rel.endsWith('.tsx')) continue;
    walk(ast, (node) => {
      if (ts.isJsxText(node) && LETTERS.test(node.text)) found.push(`${where(ast, node)}: text "${node.text.trim().slice(0, 50)}"`);
      if (ts.isJsxExpression(node) && ts.isJsxElement(node.parent) && node.expression) {
        const text = literalText(node.expression);
        if (text && LETTERS.test(text)) found.push(`${where(ast, node)}: text {"${text.slice(0, 50)}"}`);
      }
      if (ts.isJsxAttribute(node) && VISIBLE_ATTRIBUTES.has(node.name.getText(ast))) {
        const text = literalText(node.initializer);
        if (text && isLanguage(text)) found.push(`${where(ast, node)}: ${node.name.getText(ast)}="${text.slice(0, 50)}"`);
      }
    });
  }
  assert.deepEqual(found, []);
});

test('times and numbers go through lib/format: no toLocale…String or date formatting in the browser\'s language and zone', () => {
  const found: string[] = [];
  for (const { ast, rel } of files) {
    if (rel === path.join('lib', 'zoned.ts')) continue;
    walk(ast, (node) => {
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && /^toLocale(Date|Time)?String$/.test(node.expression.name.text)) {
        found.push(`${where(ast, node)}: ${node.expression.name.text}() (use useFormat(): f.dateTime, f.date, f.number, f.money)`);
      }
      // A month's name in the console's language is fine when the zone is named (a calendar day given as UTC midnight).
      const options = ts.isNewExpression(node) ? node.arguments?.[1] : undefined;
      const namesZone = options && ts.isObjectLiteralExpression(options) && options.properties.some((p) => p.name?.getText(ast) === 'timeZone');
      if (ts.isNewExpression(node) && node.expression.getText(ast) === 'Intl.DateTimeFormat' && !namesZone) found.push(`${where(ast, node)}: Intl.DateTimeFormat in the browser's zone (use useFormat(), which writes times in the tenant's zone)`);
    });
  }
  assert.deepEqual(found, []);
});
