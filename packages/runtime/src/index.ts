/**
 * The package's entry (`@loyalty/runtime`): mount an engagement into an
 * element of your own page. The stylesheet is `@loyalty/runtime/runtime.css`;
 * `@loyalty/runtime/loyalty-runtime.js` is the same as a classic script
 * (global `LoyaltyRuntime`). The embed page the service serves uses main.ts.
 */
export { mount, type MountOptions } from './mount.js';
export { THEME_VARIABLES, type Theme, type ThemeName } from './theme.js';
export { CATALOGUES, chooseLocale, type Catalogue } from './i18n.js';
export { MESSAGE_SOURCE, MESSAGE_VERSION, type HostMessage, type ActivityCompletedMessage } from './messages.js';
