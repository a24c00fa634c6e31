/** The language of the nearest `lang` attribute (the panel's), for `Intl`; undefined when invalid or none. */
export function locale(el: Element): string | undefined {
  try {
    return Intl.getCanonicalLocales(el.closest('[lang]')?.getAttribute('lang') || document.documentElement.lang || [])[0];
  } catch {
    return undefined;
  }
}

/** How a transcript says when: made once per language, since building `Intl` formatters is slow. */
export interface Clock {
  /** "now", "5 min. ago" within the hour, else the time of day. A time ahead of this clock is "now". */
  ago(at: Date, now: Date): string;
  /** A day separator's words: "Today", "Yesterday", else the date (with the year when not this one). */
  day(at: Date, now: Date): string;
  /** The exact date and time, shown on hover. */
  exact(at: Date): string;
}

const clocks = new Map<string | undefined, Clock>();

export function clock(lang: string | undefined): Clock {
  let made = clocks.get(lang);
  if (made) return made;
  const short = new Intl.RelativeTimeFormat(lang, { numeric: 'auto', style: 'short' });
  const words = new Intl.RelativeTimeFormat(lang, { numeric: 'auto' });
  const hours = new Intl.DateTimeFormat(lang, { hour: 'numeric', minute: '2-digit' });
  const exact = new Intl.DateTimeFormat(lang, { dateStyle: 'full', timeStyle: 'short' });
  const date = new Intl.DateTimeFormat(lang, { weekday: 'long', month: 'long', day: 'numeric' });
  const dated = new Intl.DateTimeFormat(lang, { weekday: 'long', month: 'long', day: 'numeric', year: 'numeric' });
  const midnight = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  made = {
    ago(at, now) {
      const minutes = Math.floor((now.getTime() - at.getTime()) / 60_000);
      return minutes >= 60 ? hours.format(at) : minutes < 1 ? short.format(0, 'second') : short.format(-minutes, 'minute');
    },
    day(at, now) {
      const days = Math.round((midnight(now) - midnight(at)) / 86_400_000);
      if (days !== 0 && days !== 1) return (at.getFullYear() === now.getFullYear() ? date : dated).format(at);
      const word = words.format(-days, 'day');
      return word.charAt(0).toLocaleUpperCase(lang) + word.slice(1);
    },
    exact: (at) => exact.format(at),
  };
  clocks.set(lang, made);
  return made;
}
