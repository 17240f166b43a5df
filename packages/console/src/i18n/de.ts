import type { en } from './en';
import type { Translation } from './strings';

/** Every string the console shows, in German (filled in by the German console work; falls back to English meanwhile). */
export const de: Partial<Translation<typeof en>> = {};
