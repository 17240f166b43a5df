import type { Translation } from '../../i18n/strings';
import type { overviewStrings } from './strings';

/** The overview's added strings in German. */
export const overviewStringsDe: Translation<typeof overviewStrings> = {
  money: {
    title: 'Verbindlichkeit in Geld',
    outstandingValue: 'Offene Verbindlichkeit',
    pointValue: '1 Punkt = {{value}}',
    noPointValue: 'Es ist kein Punktwert festgelegt, daher werden nur Punkte angezeigt.',
    setPointValue: 'Punktwert festlegen',
    askPointValue: 'Inhaber oder Marketing können in den Punkteeinstellungen einen Punktwert festlegen.',
    breakage: 'Verfall (Breakage)',
    breakageRate: 'Verfallsquote',
    breakageValue: 'Wert der verfallenen Punkte',
    breakageExplain: '{{expired}} von {{issued}} in diesem Zeitraum vergebenen Punkten sind verfallen.',
    breakageNone: 'In diesem Zeitraum wurden keine Punkte vergeben.',
    liabilityChart: 'Offene Verbindlichkeit am Ende jedes Tages',
    liabilityPoints: 'Offene Punkte',
    liabilityMoney: 'Offene Verbindlichkeit ({{currency}})',
    forecastChart: 'Verfallende Punkte pro Monat',
    forecastExplain: 'Nicht eingelöste Punkte offener Punktepakete nach dem Monat ihres Verfalls, sofern sie vorher niemand einlöst.',
    month: 'Monat',
    expiringPoints: 'Verfallende Punkte',
    expiringValue: 'Verfallender Wert',
    later: 'Nach diesen zwölf Monaten: {{points}} Punkte',
    laterValue: 'Nach diesen zwölf Monaten: {{points}} Punkte ({{value}})',
    never: 'Ohne Verfall: {{points}} Punkte',
    notDrawn: 'Nicht gezeichnet, in diesem Zeitraum ohne Werte: {{series}}',
    nothingToDraw: 'In diesem Zeitraum ist nichts passiert.',
  },
  overviewRange: { days_one: '{{count}} Tag', days_other: '{{count}} Tage', daysLabel_one: 'Der letzte {{count}} Tag', daysLabel_other: 'Die letzten {{count}} Tage' },
};
