import { useEffect } from 'react';
import { NativeSelect } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
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

/** The shell's language choice: each language named in itself (its code on a phone), remembered in this browser. */
export function LanguageSwitch() {
  const { t, i18n } = useTranslation();
  useTenantLanguage();
  const current: Language = languageOf(i18n.language) ?? 'en';
  // A phone's header has no room for "Deutsch" beside the sign-out button: the language's code there.
  const wide = useMediaQuery('(min-width: 48em)', true);
  return (
    <NativeSelect
      size="xs"
      w={wide ? 112 : 64}
      style={{ flexShrink: 0 }}
      aria-label={t('language.label')}
      value={current}
      onChange={(event) => chooseLanguage(languageOf(event.currentTarget.value) ?? 'en')}
      data={LANGUAGES.map((language) => ({ value: language, label: wide ? t(`language.names.${language}`) : language.toUpperCase() }))}
      data-testid="language-switch"
    />
  );
}
