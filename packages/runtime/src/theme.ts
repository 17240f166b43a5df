/**
 * The runtime's look is a set of CSS custom properties, `--lk-<name>`, with
 * defaults in runtime.css. They are set, later winning:
 *
 * 1. by runtime.css (the defaults, at zero specificity, so any host rule wins);
 * 2. by a page that holds the runtime itself, in its own CSS;
 * 3. by the tenant, in the engagement's `canvas.theme` (`{"color-accent": "#0f766e"}`);
 * 4. by the host, per embed: `lk-<name>=<value>` parameters of the embed URL,
 *    or the `theme` option of `mount`.
 *
 * Values are checked against their kind (a colour, a length, a font list)
 * before they are set, so a theme cannot smuggle in anything else (an image
 * URL, another declaration); a value that fails is ignored with a warning.
 */
export type ThemeKind = 'color' | 'length' | 'font';

export const THEME_VARIABLES = {
  'color-text': 'color',
  'color-muted': 'color',
  'color-accent': 'color',
  'color-on-accent': 'color',
  'color-background': 'color',
  'color-subtle': 'color',
  'color-border': 'color',
  'color-danger': 'color',
  'color-success': 'color',
  'color-focus': 'color',
  'font-family': 'font',
  'font-size': 'length',
  radius: 'length',
  spacing: 'length',
} as const satisfies Record<string, ThemeKind>;

export type ThemeName = keyof typeof THEME_VARIABLES;
export type Theme = Partial<Record<ThemeName, string>>;

const VALUE_MAX_LENGTH = 200;
const PATTERNS: Record<ThemeKind, RegExp> = {
  color: /^(#[0-9a-f]{3,8}|[a-z]{3,30}|(rgb|rgba|hsl|hsla|oklch|oklab)\([0-9a-z.,%\s/+-]{1,60}\))$/i,
  length: /^(0|\d{1,4}(\.\d{1,3})?(px|rem|em))$/,
  font: /^[a-z0-9 ,"'-]{1,200}$/i,
};

function isThemeName(name: string): name is ThemeName {
  return Object.prototype.hasOwnProperty.call(THEME_VARIABLES, name);
}

/** Whether `value` is a usable value of the variable `name`. */
export function validThemeValue(name: ThemeName, value: string): boolean {
  const kind = THEME_VARIABLES[name];
  if (value.length > VALUE_MAX_LENGTH || !PATTERNS[kind].test(value)) return false;
  // Where the browser can tell, a colour must also be one it understands.
  if (kind === 'color' && typeof CSS !== 'undefined' && typeof CSS.supports === 'function') return CSS.supports('color', value);
  return true;
}

/** The usable entries of a free-form object (a definition's `canvas.theme`, a mount option); others are reported. */
export function themeFrom(source: unknown, where: string): Theme {
  const theme: Theme = {};
  if (typeof source !== 'object' || source === null || Array.isArray(source)) return theme;
  for (const [name, value] of Object.entries(source)) {
    if (isThemeName(name) && typeof value === 'string' && validThemeValue(name, value.trim())) theme[name] = value.trim();
    else console.warn(`[loyalty-runtime] ${where}: ignored theme entry ${JSON.stringify(name)}`);
  }
  return theme;
}

/** The `lk-<name>=<value>` parameters of a query string. */
export function themeFromQuery(query: URLSearchParams): Theme {
  const entries: Record<string, string> = {};
  for (const [key, value] of query) if (key.startsWith('lk-')) entries[key.slice(3)] = value;
  return themeFrom(entries, 'the embed URL');
}

/** Sets the theme's variables on `element` (inline, through the CSSOM, which the page's CSP allows). */
export function applyTheme(element: HTMLElement, theme: Theme): void {
  for (const [name, value] of Object.entries(theme)) element.style.setProperty(`--lk-${name}`, value);
}
