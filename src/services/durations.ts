// GitLab's human-readable time tracking durations (ChronicDuration with its working-day units:
// a day is 8 hours, a week 5 days, a month 4 weeks).
export function humanDuration(seconds: number): string | null {
  if (!seconds) return null;
  const units: Array<[string, number]> = [['mo', 4 * 5 * 8 * 3600], ['w', 5 * 8 * 3600], ['d', 8 * 3600], ['h', 3600], ['m', 60]];
  let rest = seconds;
  const parts: string[] = [];
  for (const [name, size] of units) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${name}`);
      rest %= size;
    }
  }
  if (rest > 0) parts.push(`${rest}s`);
  return parts.join(' ');
}
