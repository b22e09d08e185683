//! Quiet hours: a stretch of local wall-clock time in which only critical requests notify.

use chrono::NaiveTime;

/// From `from` (inclusive) to `to` (exclusive), local time; wraps past midnight when `to` is
/// earlier than `from`. Never empty: `from == to` is refused when the file is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuietHours {
    pub from: NaiveTime,
    pub to: NaiveTime,
}

impl QuietHours {
    /// Whether `at` falls within these hours.
    pub fn contains(&self, at: NaiveTime) -> bool {
        if self.from < self.to {
            self.from <= at && at < self.to
        } else {
            // Wraps past midnight: the evening part or the morning part.
            at >= self.from || at < self.to
        }
    }
}

/// Parses "HH:MM" (24-hour clock).
pub(crate) fn parse_time(text: &str) -> Option<NaiveTime> {
    NaiveTime::parse_from_str(text, "%H:%M").ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(text: &str) -> NaiveTime {
        parse_time(text).unwrap()
    }

    #[test]
    fn within_one_day() {
        let hours = QuietHours {
            from: t("12:00"),
            to: t("13:30"),
        };
        assert!(!hours.contains(t("11:59")));
        assert!(hours.contains(t("12:00")));
        assert!(hours.contains(t("13:29")));
        assert!(!hours.contains(t("13:30")));
        assert!(!hours.contains(t("00:00")));
    }

    #[test]
    fn wrapping_past_midnight() {
        let hours = QuietHours {
            from: t("22:00"),
            to: t("07:00"),
        };
        assert!(!hours.contains(t("21:59")));
        assert!(hours.contains(t("22:00")));
        assert!(hours.contains(t("23:59")));
        assert!(hours.contains(t("00:00")));
        assert!(hours.contains(t("06:59")));
        assert!(!hours.contains(t("07:00")));
        assert!(!hours.contains(t("12:00")));
    }

    #[test]
    fn times_are_hours_and_minutes() {
        assert_eq!(parse_time("07:05"), NaiveTime::from_hms_opt(7, 5, 0));
        assert_eq!(parse_time("24:00"), None);
        assert_eq!(parse_time("7pm"), None);
        assert_eq!(parse_time(""), None);
    }
}
