//! Calendar days: finding the date in the date strings corpora write (LoCoMo `1:56 pm on 8 May,
//! 2023`, LongMemEval `2023/05/20 (Sat) 02:21`, DialSim `June 1, 1995`, ISO `2023-05-20`), and
//! resolving the time a question refers to (`last week`, `in May`, `3 days ago`) against the
//! date it is asked on, so a memory can favour what happened then.

use std::fmt;

/// A calendar day, counted from 1970-01-01 (proleptic Gregorian).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Day(pub i64);

/// An inclusive range of days.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DayRange {
    /// First day.
    pub first: Day,
    /// Last day.
    pub last: Day,
}

impl DayRange {
    /// Whether `day` falls in the range.
    pub fn contains(&self, day: Day) -> bool {
        self.first <= day && day <= self.last
    }

    fn around(center: Day, slack: i64) -> DayRange {
        DayRange {
            first: Day(center.0 - slack),
            last: Day(center.0 + slack),
        }
    }
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// The month (1–12) a word names, in full or as a three-letter abbreviation (`sept` too).
fn month_of(word: &str) -> Option<u32> {
    let word = word.to_lowercase();
    if word.len() < 3 {
        return None;
    }
    MONTHS
        .iter()
        .position(|m| *m == word || (word.len() <= 4 && m.starts_with(word.as_str())))
        .map(|i| i as u32 + 1)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

impl Day {
    /// The day `year-month-day`; `None` when it does not exist.
    pub fn from_ymd(year: i64, month: u32, day: u32) -> Option<Day> {
        if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
            return None;
        }
        // Howard Hinnant's `days_from_civil`.
        let y = if month <= 2 { year - 1 } else { year };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let m = i64::from(month);
        let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        Some(Day(era * 146_097 + doe - 719_468))
    }

    /// Year, month and day (Howard Hinnant's `civil_from_days`).
    pub fn ymd(self) -> (i64, u32, u32) {
        let z = self.0 + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        (yoe + era * 400 + i64::from(month <= 2), month, day)
    }

    /// `YYYY-MM-DD`.
    pub fn iso(self) -> String {
        let (y, m, d) = self.ymd();
        format!("{y:04}-{m:02}-{d:02}")
    }

    /// The first date written in `text`: `YYYY-MM-DD` or `YYYY/MM/DD`, `8 May, 2023` or
    /// `8 May 2023`, `May 8, 2023` or `May 8 2023`. `None` when it holds none.
    pub fn find(text: &str) -> Option<Day> {
        let words: Vec<&str> = text
            .split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')')
            .filter(|w| !w.is_empty())
            .collect();
        let number = |w: &str| w.trim_end_matches(['.', ',']).parse::<i64>().ok();
        for (i, word) in words.iter().enumerate() {
            let parts: Vec<&str> = word.split(['-', '/']).collect();
            if let [y, m, d] = parts.as_slice() {
                if y.len() == 4 {
                    if let (Ok(y), Ok(m), Ok(d)) = (y.parse(), m.parse(), d.parse()) {
                        if let Some(day) = Day::from_ymd(y, m, d) {
                            return Some(day);
                        }
                    }
                }
            }
            let Some(month) = month_of(word.trim_end_matches('.')) else {
                continue;
            };
            let before = i.checked_sub(1).and_then(|j| number(words[j]));
            let after = words.get(i + 1).and_then(|w| number(w));
            let year_after = |j: usize| words.get(j).and_then(|w| number(w)).filter(|y| *y >= 1000);
            let found = match (before, after) {
                (Some(d), Some(y)) if y >= 1000 => Day::from_ymd(y, month, d as u32),
                (_, Some(d)) if d < 32 => {
                    year_after(i + 2).and_then(|y| Day::from_ymd(y, month, d as u32))
                }
                _ => None,
            };
            if found.is_some() {
                return found;
            }
        }
        None
    }
}

impl fmt::Display for Day {
    /// `8 May 2023`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, m, d) = self.ymd();
        let name = MONTHS[(m - 1) as usize];
        let mut chars = name.chars();
        let capital: String = chars
            .next()
            .map(|c| c.to_ascii_uppercase())
            .into_iter()
            .collect();
        write!(f, "{d} {capital}{} {y}", chars.as_str())
    }
}

fn month_range(year: i64, month: u32) -> Option<DayRange> {
    Some(DayRange {
        first: Day::from_ymd(year, month, 1)?,
        last: Day::from_ymd(year, month, days_in_month(year, month))?,
    })
}

fn number_word(word: &str) -> Option<i64> {
    const WORDS: [&str; 10] = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    word.parse()
        .ok()
        .or_else(|| WORDS.iter().position(|w| *w == word).map(|i| i as i64 + 1))
}

/// The days a question refers to, resolved against `today` (the day it is asked): `yesterday`,
/// `N days/weeks/months ago`, `last week/weekend/month/year`, `this week/month/year`,
/// `recently`, a month (`in May`: the latest May up to today, or `May 2023`) or a year
/// (`in 2022`). Windows are generous, as people are vague about time. `None` when the question
/// names no time.
pub fn referenced_days(question: &str, today: Day) -> Option<DayRange> {
    let lower = question.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let (year, month, _) = today.ymd();
    let before = |days: i64, slack: i64| Some(DayRange::around(Day(today.0 - days), slack));
    for (i, word) in words.iter().enumerate() {
        let next = words.get(i + 1).copied().unwrap_or_default();
        let after_next = words.get(i + 2).copied().unwrap_or_default();
        match (*word, next) {
            ("yesterday", _) => return before(1, 1),
            ("today" | "tonight", _) => return before(0, 1),
            ("recently" | "lately", _) => return before(15, 15),
            ("last" | "past" | "previous", "week") => return before(10, 4),
            ("last" | "past" | "previous", "weekend") => return before(5, 4),
            ("last" | "past" | "previous", "month") => return before(30, 15),
            ("last" | "past" | "previous", "year") => return before(365, 183),
            ("this", "week") => return before(3, 4),
            ("this", "month") => return month_range(year, month),
            ("this", "year") => return before(183, 183),
            _ => {}
        }
        if after_next == "ago" {
            if let Some(n) = number_word(word) {
                let unit = next.trim_end_matches('s');
                match unit {
                    "day" => return before(n, 1 + n / 7),
                    "week" => return before(7 * n, 4),
                    "month" => return before(30 * n, 15),
                    "year" => return before(365 * n, 183),
                    _ => {}
                }
            }
        }
        if *word == "in" || *word == "during" || *word == "since" {
            if let Ok(y) = next.parse::<i64>() {
                if (1000..=9999).contains(&y) {
                    return Some(DayRange {
                        first: Day::from_ymd(y, 1, 1)?,
                        last: Day::from_ymd(y, 12, 31)?,
                    });
                }
            }
        }
        if let Some(m) = month_of(word) {
            if let Ok(y) = next.parse::<i64>() {
                if (1000..=9999).contains(&y) {
                    return month_range(y, m);
                }
            }
            if i > 0 && matches!(words[i - 1], "in" | "during" | "of" | "since") {
                let y = if m <= month { year } else { year - 1 };
                return month_range(y, m);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(y: i64, m: u32, d: u32) -> Day {
        Day::from_ymd(y, m, d).unwrap()
    }

    #[test]
    fn civil_round_trip() {
        assert_eq!(day(1970, 1, 1), Day(0));
        assert_eq!(day(2024, 2, 29), Day(19_782));
        for n in [-800_000, -1, 0, 59, 19_782, 20_779, 2_000_000] {
            let (y, m, d) = Day(n).ymd();
            assert_eq!(Day::from_ymd(y, m, d), Some(Day(n)));
        }
        assert_eq!(Day::from_ymd(2023, 2, 29), None);
        assert_eq!(day(2023, 5, 8).to_string(), "8 May 2023");
        assert_eq!(day(2023, 5, 8).iso(), "2023-05-08");
    }

    #[test]
    fn finds_corpus_dates() {
        assert_eq!(Day::find("1:56 pm on 8 May, 2023"), Some(day(2023, 5, 8)));
        assert_eq!(Day::find("2023/05/20 (Sat) 02:21"), Some(day(2023, 5, 20)));
        assert_eq!(Day::find("June 1, 1995, Session #1"), Some(day(1995, 6, 1)));
        assert_eq!(Day::find("2023-05-20"), Some(day(2023, 5, 20)));
        assert_eq!(
            Day::find("10:37 am on 27 June, 2023"),
            Some(day(2023, 6, 27))
        );
        assert_eq!(Day::find("Session #3"), None);
        assert_eq!(Day::find("may 40, 2023"), None);
    }

    #[test]
    fn resolves_question_times() {
        let today = day(2023, 5, 20);
        let range = |q: &str| referenced_days(q, today).map(|r| (r.first.iso(), r.last.iso()));
        assert_eq!(
            range("What did I buy yesterday?"),
            Some(("2023-05-18".into(), "2023-05-20".into()))
        );
        assert_eq!(
            range("Where did I go three days ago?"),
            Some(("2023-05-16".into(), "2023-05-18".into()))
        );
        assert_eq!(
            range("Which concert did I attend last week?"),
            Some(("2023-05-06".into(), "2023-05-14".into()))
        );
        assert_eq!(
            range("What did I do in March?"),
            Some(("2023-03-01".into(), "2023-03-31".into()))
        );
        assert_eq!(
            range("What did I do in July?"),
            Some(("2022-07-01".into(), "2022-07-31".into()))
        );
        assert_eq!(
            range("Where was Caroline in August 2022?"),
            Some(("2022-08-01".into(), "2022-08-31".into()))
        );
        assert_eq!(
            range("What happened in 2021?"),
            Some(("2021-01-01".into(), "2021-12-31".into()))
        );
        // "may" the verb is not a month.
        assert_eq!(range("What may I have forgotten?"), None);
        assert_eq!(range("What is Maya's dog called?"), None);
        assert!(referenced_days("in may", today).is_some());
    }
}
