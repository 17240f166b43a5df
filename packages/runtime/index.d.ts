/**
 * Declarations of the built package (`@loyalty/runtime`), written by hand:
 * the sources' types name the SDK's generated types, which the package does
 * not ship. The package test compiles a consumer against them.
 */
export type ThemeName =
  | 'color-text'
  | 'color-muted'
  | 'color-accent'
  | 'color-on-accent'
  | 'color-background'
  | 'color-subtle'
  | 'color-border'
  | 'color-danger'
  | 'color-success'
  | 'color-focus'
  | 'font-family'
  | 'font-size'
  | 'radius'
  | 'spacing';

/** Theme variables by name without `--lk-`, e.g. `{ 'color-accent': '#0f766e' }`. */
export type Theme = Partial<Record<ThemeName, string>>;

export declare const THEME_VARIABLES: Readonly<Record<ThemeName, 'color' | 'length' | 'font'>>;

/** A message the runtime sends (`source: 'loyalty-runtime'`, `version: 1`); see the repository README. */
export interface HostMessage {
  source: 'loyalty-runtime';
  version: 1;
  type: 'runtime:ready' | 'activity:completed' | 'runtime:error' | 'runtime:resize';
  [field: string]: unknown;
}

export interface MountOptions {
  /** The service's origin, or the path a reverse proxy serves it under (the service sends no CORS headers). */
  baseUrl: string;
  tenantSlug: string;
  siteSlug: string;
  engagementId?: string | null;
  /** A server-issued session (`POST /api/v1/sessions`); without one an anonymous session is started when allowed. */
  sessionId?: string | null;
  /** The participant's language (BCP 47): `en` or `de`; others fall back to the browser's languages, then English. */
  locale?: string | null;
  theme?: Theme;
  /** Where the theme's variables are set (default: the mount element). */
  themeTarget?: HTMLElement;
  onMessage?: (message: HostMessage) => void;
}

/** Renders the site's published engagement into `element`; settles once it (or an error) is shown. */
export declare function mount(element: HTMLElement, options: MountOptions): Promise<void>;

/** The languages the runtime has texts for, by language subtag. */
export declare const CATALOGUES: Readonly<Record<string, Record<string, unknown>>>;

/** The locale the runtime would choose from an explicit locale, the participant's and the browser's languages. */
export declare function chooseLocale(explicit: string | null | undefined, participant: string | null | undefined, browser: readonly string[]): string;

export declare const MESSAGE_SOURCE: 'loyalty-runtime';
export declare const MESSAGE_VERSION: 1;
