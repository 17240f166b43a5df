/** The English strings of the point value, on the points settings screen. */
export const pointValueStrings = {
  pointValue: {
    title: 'Point value',
    explain: 'What one point is worth to you. The overview turns outstanding points, the expiry forecast and breakage into money with it.',
    label: 'Money per point ({{currency}})',
    example: 'For example 0.01: a hundred points are worth 1 {{currency}}. Leave empty to show points only.',
    current: 'Now: 1 point = {{value}}; 1,000 points = {{thousand}}',
    none: 'No point value is set.',
  },
};
