import i18n from 'i18next';
import { initReactI18next } from 'react-i18next';
import { en } from './en';
import { de } from './de';

/** Every string through `t('area.key')`; English is the only language so far. */
void i18n.use(initReactI18next).init({
  resources: { en: { translation: en }, de: { translation: de } },
  lng: 'en',
  fallbackLng: 'en',
  interpolation: { escapeValue: false },
  initAsync: false,
});

export default i18n;
