/** The language of the nearest `lang` attribute (the panel's), for `Intl`; undefined when invalid or none. */
export function locale(el: Element): string | undefined {
  try {
    return Intl.getCanonicalLocales(el.closest('[lang]')?.getAttribute('lang') || document.documentElement.lang || [])[0];
  } catch {
    return undefined;
  }
}

/** "now", "5 min. ago" within the hour, else the time of day. A time ahead of this clock is "now". */
export function ago(at: Date, now: Date, lang: string | undefined): string {
  const minutes = Math.floor((now.getTime() - at.getTime()) / 60_000);
  if (minutes >= 60) return at.toLocaleTimeString(lang, { hour: 'numeric', minute: '2-digit' });
  const words = new Intl.RelativeTimeFormat(lang, { numeric: 'auto', style: 'short' });
  return minutes < 1 ? words.format(0, 'second') : words.format(-minutes, 'minute');
}

/** A day separator's words: "Today", "Yesterday", else the date (with the year when not this one). */
export function dayLabel(at: Date, now: Date, lang: string | undefined): string {
  const midnight = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const days = Math.round((midnight(now) - midnight(at)) / 86_400_000);
  if (days === 0 || days === 1) {
    const word = new Intl.RelativeTimeFormat(lang, { numeric: 'auto' }).format(-days, 'day');
    return word.charAt(0).toLocaleUpperCase(lang) + word.slice(1);
  }
  return at.toLocaleDateString(lang, {
    weekday: 'long',
    month: 'long',
    day: 'numeric',
    year: at.getFullYear() === now.getFullYear() ? undefined : 'numeric',
  });
}
