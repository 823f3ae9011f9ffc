//! The wall clock, in the forms records, prompts and run directories use.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch (0 if the system clock is set before it).
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The current UTC date and time as `YYYY-MM-DD-HH-MM-SS`, upstream's run-directory stamp
/// (`start_at_<stamp>`).
pub fn utc_timestamp() -> String {
    let (date, seconds) = utc_now();
    format!(
        "{date}-{:02}-{:02}-{:02}",
        seconds / 3600,
        seconds % 3600 / 60,
        seconds % 60
    )
}

/// The current local date and time as `YYYY-MM-DD HH:MM:SS`, the form upstream MemoryOS stamps
/// an exchange with (`time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())`): the system's
/// time zone (`TZ`, else `/etc/localtime`), UTC where none is set.
pub fn local_timestamp() -> String {
    chrono::Local::now().format("%Y-%m-%d %H:%M:%S").to_string()
}

/// Whether `text` is a timestamp of [`local_timestamp`]'s form: `YYYY-MM-DD HH:MM:SS`, a real
/// day and time.
pub fn is_timestamp(text: &str) -> bool {
    text.len() == "YYYY-MM-DD HH:MM:SS".len()
        && chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S").is_ok()
}

/// The current UTC date as `YYYY-MM-DD`.
pub fn utc_date() -> String {
    utc_now().0
}

/// Today's civil date and the seconds since midnight, UTC.
fn utc_now() -> (String, u64) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    (civil_date(now / 86_400), now % 86_400)
}

/// The date `days` after 1970-01-01.
fn civil_date(days: u64) -> String {
    crate::dates::Day(days as i64).iso()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(19_782), "2024-02-29");
        assert_eq!(civil_date(20_779), "2026-11-22");
        assert_eq!(utc_timestamp().len(), "2026-11-22-23-40-00".len());
    }

    #[test]
    fn local_timestamps_have_upstreams_form() {
        assert!(is_timestamp(&local_timestamp()));
        assert!(is_timestamp("2024-02-29 23:59:59"));
        for wrong in [
            "2023-02-29 10:00:00",
            "2024-01-01 24:00:00",
            "2024-1-01 10:00:00",
            "2024-01-01T10:00:00",
            "2024-01-01 10:00:00 ",
            "",
        ] {
            assert!(!is_timestamp(wrong), "{wrong}");
        }
    }
}
