import i18n from 'i18next';
import { initReactI18next } from 'react-i18next';
import { en } from './en';
import { de } from './de';

/** The languages the console is written in; English is the fallback for anything missing. */
export const LANGUAGES = ['en', 'de'] as const;
export type Language = (typeof LANGUAGES)[number];

/** The person's own choice, kept in this browser; it wins over the tenant's locale. */
const CHOICE_KEY = 'console.language';
/** The language of the tenant last signed in here, so the sign-in page opens in it next time. */
const TENANT_KEY = 'console.tenantLanguage';

/** The console language of a BCP 47 tag: `de-DE` → `de`; `null` for a language the console is not written in. */
export function languageOf(tag: string | null | undefined): Language | null {
  const base = (tag ?? '').split(/[-_]/)[0].toLowerCase();
  return (LANGUAGES as readonly string[]).includes(base) ? (base as Language) : null;
}

function stored(key: string): Language | null {
  try {
    return languageOf(globalThis.localStorage?.getItem(key));
  } catch {
    // Storage can be refused (private windows, tests outside a browser): no stored choice then.
    return null;
  }
}

function store(key: string, language: Language | null): void {
  try {
    if (language) globalThis.localStorage?.setItem(key, language);
    else globalThis.localStorage?.removeItem(key);
  } catch {
    // Not remembered, still applied for this page.
  }
}

/** The person's choice from the shell's switch, if they made one. */
export function chosenLanguage(): Language | null {
  return stored(CHOICE_KEY);
}

/** The person picks a language: applied now and remembered in this browser. */
export function chooseLanguage(language: Language): void {
  store(CHOICE_KEY, language);
  void i18n.changeLanguage(language);
}

/** The signed-in tenant's locale sets the language, unless the person chose their own. */
export function applyTenantLocale(locale: string | null | undefined): void {
  const language = languageOf(locale) ?? 'en';
  store(TENANT_KEY, language);
  if (!chosenLanguage() && i18n.language !== language) void i18n.changeLanguage(language);
}

/** The page says which language it is in (screen readers pick their voice by it) and names itself in it. */
function markDocument(language: string): void {
  if (typeof document === 'undefined') return;
  document.documentElement.lang = language;
  document.title = i18n.t('app.name');
}

/** Every string through `t('area.key')`, in English or German; sections add theirs with `registerStrings(en, de)`. */
void i18n.use(initReactI18next).init({
  resources: { en: { translation: en }, de: { translation: de } },
  lng: chosenLanguage() ?? stored(TENANT_KEY) ?? 'en',
  fallbackLng: 'en',
  supportedLngs: [...LANGUAGES],
  interpolation: { escapeValue: false },
  initAsync: false,
});
markDocument(i18n.language);
i18n.on('languageChanged', markDocument);

export default i18n;
