/**
 * The texts of the pages the service renders itself (the shell before the
 * script runs, and the error pages), in the runtime's languages. The runtime's
 * own texts live in packages/runtime/src/i18n.ts; these few are kept here
 * because the compiled service (dist/, one file per source file under src/)
 * cannot import the runtime's TypeScript sources. A test checks both offer
 * the same languages.
 */
export interface PageTexts {
  loading: string;
  needsJavaScript: string;
  notAvailableTitle: string;
  notAvailableMessage: string;
  invalidAddressTitle: string;
  invalidAddressMessage: string;
  tooManyTitle: string;
  tooManyMessage: string;
  serviceProblemTitle: string;
  serviceProblemMessage: string;
  /** The marker above a draft's preview (the console's editor). */
  previewMarker: string;
  previewTitle: string;
}

export const PAGE_TEXTS: Record<string, PageTexts> = {
  en: {
    loading: 'Loading…',
    needsJavaScript: 'This engagement needs JavaScript.',
    notAvailableTitle: 'Not available',
    notAvailableMessage: 'This engagement is not available. It may have ended or not be published yet.',
    invalidAddressTitle: 'Invalid address',
    invalidAddressMessage: 'This engagement address is not valid. Check the link you followed.',
    tooManyTitle: 'Too many requests',
    tooManyMessage: 'Too many requests came from your address. Please try again in a minute.',
    serviceProblemTitle: 'Service problem',
    serviceProblemMessage: 'The engagement could not be shown. Please try again in a moment.',
    previewMarker: 'Preview — test data. Nothing here counts: no points, rewards or codes are given.',
    previewTitle: 'Preview',
  },
  de: {
    loading: 'Wird geladen …',
    needsJavaScript: 'Diese Aktion braucht JavaScript.',
    notAvailableTitle: 'Nicht verfügbar',
    notAvailableMessage: 'Diese Aktion ist nicht verfügbar. Vielleicht ist sie beendet oder noch nicht veröffentlicht.',
    invalidAddressTitle: 'Ungültige Adresse',
    invalidAddressMessage: 'Die Adresse dieser Aktion ist ungültig. Prüfen Sie den Link, dem Sie gefolgt sind.',
    tooManyTitle: 'Zu viele Anfragen',
    tooManyMessage: 'Von Ihrer Adresse kamen zu viele Anfragen. Bitte versuchen Sie es in einer Minute erneut.',
    serviceProblemTitle: 'Problem beim Dienst',
    serviceProblemMessage: 'Die Aktion konnte nicht angezeigt werden. Bitte versuchen Sie es gleich erneut.',
    previewMarker: 'Vorschau — Testdaten. Hier zählt nichts: Es werden keine Punkte, Prämien oder Codes vergeben.',
    previewTitle: 'Vorschau',
  },
};

const ACCEPT_LANGUAGE_ENTRIES_MAX = 10;

/** The language subtags of an `Accept-Language` header, most preferred first. */
function acceptedLanguages(header: string | undefined): string[] {
  return (header ?? '')
    .split(',')
    .slice(0, ACCEPT_LANGUAGE_ENTRIES_MAX)
    .map((entry) => {
      const [tag, ...parameters] = entry.trim().split(';');
      const q = parameters.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find(Boolean);
      return { tag: tag.trim(), q: q === undefined ? 1 : Number(q) };
    })
    .filter((entry) => entry.tag && entry.tag !== '*' && entry.q > 0)
    .sort((a, b) => b.q - a.q)
    .map((entry) => entry.tag);
}

/**
 * The language of a page: the embed URL's `locale`, then the browser's
 * `Accept-Language`, then English (the runtime's order, with the header
 * standing in for `navigator.languages`).
 */
export function pageLanguage(explicit: unknown, acceptLanguage: string | undefined): { language: string; texts: PageTexts } {
  const candidates = [typeof explicit === 'string' ? explicit : '', ...acceptedLanguages(acceptLanguage)];
  for (const candidate of candidates) {
    const language = candidate.split('-')[0].toLowerCase();
    if (PAGE_TEXTS[language]) return { language, texts: PAGE_TEXTS[language] };
  }
  return { language: 'en', texts: PAGE_TEXTS.en };
}
