import { useEffect } from 'react';
import { NativeSelect } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useTenant } from '../hooks/api/settings';
import { applyTenantLocale, chooseLanguage, languageOf, LANGUAGES, type Language } from './index';

/** Follows the signed-in tenant's locale (`de-DE` → German) unless the person chose a language of their own. */
export function useTenantLanguage(): void {
  const locale = useTenant().data?.locale;
  useEffect(() => {
    if (locale) applyTenantLocale(locale);
  }, [locale]);
}

/** The shell's language choice: each language named in itself, remembered in this browser. */
export function LanguageSwitch() {
  const { t, i18n } = useTranslation();
  useTenantLanguage();
  const current: Language = languageOf(i18n.language) ?? 'en';
  return (
    <NativeSelect
      size="xs"
      aria-label={t('language.label')}
      value={current}
      onChange={(event) => chooseLanguage(languageOf(event.currentTarget.value) ?? 'en')}
      data={LANGUAGES.map((language) => ({ value: language, label: t(`language.names.${language}`) }))}
      data-testid="language-switch"
    />
  );
}
