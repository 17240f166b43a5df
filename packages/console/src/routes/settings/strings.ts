/** The English strings of the tenant settings form. */
export const settingsStrings = {
  tenantSettings: {
    title: 'Time zone, currency and language',
    timezone: 'Time zone',
    timezoneHelp: 'Decides where the tenant\'s days start: daily caps, streaks, leaderboard periods and the overview\'s days.',
    currency: 'Currency',
    locale: 'Locale',
    localeHelp: 'A language tag such as en-US, fr-FR or de.',
    save: 'Save settings',
    saved: 'Settings saved.',
  },
  fourEyes: {
    title: 'Four-eyes publishing',
    label: 'Require a second person to publish',
    help: 'When on, nobody publishes rules, engagements, challenges or contests directly, API keys included: each goes through a review request that someone other than its submitter approves.',
  },
};
