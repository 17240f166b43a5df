import type { ReactNode } from 'react';
import i18n from '../i18n';
import type { Permission } from './permissions';

/** One link of the navigation: a screen, the permission that opens it, and its label's key. */
export interface NavItem {
  to: string;
  label: string;
  permission: Permission;
}

/** One screen at an address, reached only by the roles holding its permission. */
export interface AreaRoute {
  path: string;
  permission: Permission;
  element: ReactNode;
}

/**
 * A section of the console (programs, engagements, developers …): its
 * navigation group, its screens and its strings. Each section lives in
 * `routes/<section>/index.tsx` and is listed once in `src/areas.ts`, so a new
 * screen touches its own section and nothing shared.
 */
export interface ConsoleArea {
  key: string;
  /** The key of the navigation group's heading; sections without one (overview) show their links on top. */
  heading?: string;
  navigation: NavItem[];
  routes: AreaRoute[];
}

/** Adds a section's strings under their own keys (merged deeply into the one `translation` bundle of each language); German when given. */
export function registerStrings(strings: Record<string, unknown>, german?: Record<string, unknown>): void {
  i18n.addResourceBundle('en', 'translation', strings, true, true);
  if (german) i18n.addResourceBundle('de', 'translation', german, true, true);
}
