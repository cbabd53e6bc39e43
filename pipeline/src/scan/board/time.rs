//! Dates and time zones: `--tz`, ISO 8601 / RFC 3339 instants, Jira CSV dates.

use jiff::Timestamp;
use jiff::civil::{Date, DateTime, Time};
use jiff::tz::{Offset, TimeZone};

use super::BoardError;

/// Parses a `--tz` value: an IANA name (`Europe/Berlin`, from the system time zone database), `UTC` or `Z`, or a
/// fixed offset `+02:00`, `-0530`, `+2`, optionally after `UTC`/`GMT` (`UTC+01:00`).
pub fn parse_time_zone(name: &str) -> Result<TimeZone, BoardError> {
    let trimmed = name.trim();
    let error = || BoardError::TimeZone {
        message: format!(
            "--tz {name:?}: not a time zone (expected an IANA name such as Europe/Berlin, UTC, or an offset such as \
             +02:00)"
        ),
    };
    if ["utc", "z", "gmt"].iter().any(|z| trimmed.eq_ignore_ascii_case(z)) {
        return Ok(TimeZone::UTC);
    }
    let offset = trimmed
        .get(..3)
        .filter(|p| p.eq_ignore_ascii_case("utc") || p.eq_ignore_ascii_case("gmt"))
        .map_or(trimmed, |_| &trimmed[3..]);
    if offset.starts_with(['+', '-']) {
        return parse_offset(offset).map(TimeZone::fixed).ok_or_else(error);
    }
    TimeZone::get(trimmed).map_err(|_| error())
}

/// `+HH:MM`, `+HHMM`, `+HH`, `+H`, `+HH:MM:SS` (and `-`), at most 18 hours.
fn parse_offset(text: &str) -> Option<Offset> {
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    if !rest.is_ascii() {
        return None;
    }
    let parts: Vec<&str> = if rest.contains(':') {
        rest.split(':').collect()
    } else if rest.len() == 4 {
        vec![&rest[..2], &rest[2..]]
    } else {
        vec![rest]
    };
    if parts.is_empty() || parts.len() > 3 || parts[0].is_empty() || parts[0].len() > 2 {
        return None;
    }
    let mut seconds = 0i32;
    for (i, part) in parts.iter().enumerate() {
        if i > 0 && part.len() != 2 {
            return None;
        }
        let value = digits(part)? as i32;
        if i > 0 && value > 59 {
            return None;
        }
        seconds += value * [3600, 60, 1][i];
    }
    if seconds > 18 * 3600 {
        return None; // real offsets lie within ±14 hours; ±18 is the widest that standards allow
    }
    Offset::from_seconds(sign * seconds).ok()
}

/// Parses an instant: RFC 3339 / ISO 8601 with an offset or `Z` (`2025-11-03T08:15:00Z`,
/// `2026-02-04T14:30:00.000+0700`), or without one (`2025-11-03T09:15:00`, `2025-11-03 09:15`, `2025-11-03`),
/// then read in `tz`.
pub(super) fn parse_instant(text: &str, tz: &TimeZone) -> Option<Timestamp> {
    let text = text.trim();
    if let Ok(ts) = text.parse::<Timestamp>() {
        return Some(ts);
    }
    let dt = text.parse::<DateTime>().ok()?;
    tz.to_ambiguous_timestamp(dt).compatible().ok()
}

/// Parses a date of a Jira CSV export, read in `tz`: `21/Nov/25 10:32 AM`, `2/Jan/06 15:04`,
/// `2/Jan/2006 3:04 PM`, `Jan/2/06 3:04 PM`, `2006-01-02 15:04`, `2006-01-02 15:04:05`, or a date alone
/// (midnight). Months are English abbreviations or names, any case; two-digit years 69–99 are 19xx, 00–68 20xx.
/// `None` when the text is none of these or not a real date or time (`31/Feb/25`, `13:00 PM`).
pub fn parse_jira_date(text: &str, tz: &TimeZone) -> Option<Timestamp> {
    let dt = jira_datetime(text.trim())?;
    tz.to_ambiguous_timestamp(dt).compatible().ok()
}

fn jira_datetime(text: &str) -> Option<DateTime> {
    let (date_part, time_part) = match text.split_once(char::is_whitespace) {
        Some((date, time)) => (date, Some(time.trim())),
        None => (text, None),
    };
    let date = jira_date(date_part)?;
    let time = match time_part {
        None | Some("") => Time::midnight(),
        Some(time) => clock(time)?,
    };
    Some(date.to_datetime(time))
}

fn jira_date(text: &str) -> Option<Date> {
    let (year, month, day) = if text.contains('-') {
        let mut parts = text.split('-');
        let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() || y.len() != 4 || !(1..=2).contains(&m.len()) || !(1..=2).contains(&d.len()) {
            return None;
        }
        (digits(y)?, digits(m)?, digits(d)?)
    } else {
        let mut parts = text.split('/');
        let (a, b, c) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        let (month, day) = if a.starts_with(|c: char| c.is_ascii_alphabetic()) {
            (month(a)?, b)
        } else {
            (month(b)?, a)
        };
        if !(1..=2).contains(&day.len()) {
            return None;
        }
        let year = match c.len() {
            2 => {
                let y = digits(c)?;
                if y >= 69 { 1900 + y } else { 2000 + y }
            }
            4 => digits(c)?,
            _ => return None,
        };
        (year, month, digits(day)?)
    };
    Date::new(
        i16::try_from(year).ok()?,
        i8::try_from(month).ok()?,
        i8::try_from(day).ok()?,
    )
    .ok()
}

/// `10:32 AM`, `10:32AM`, `3:04 pm`, `15:04`, `15:04:05`.
fn clock(text: &str) -> Option<Time> {
    let lower = text.to_ascii_lowercase();
    let (clock, meridiem) = if let Some(rest) = lower.strip_suffix("am") {
        (rest.trim_end(), Some(false))
    } else if let Some(rest) = lower.strip_suffix("pm") {
        (rest.trim_end(), Some(true))
    } else {
        (lower.as_str(), None)
    };
    let mut parts = clock.split(':');
    let (h, m) = (parts.next()?, parts.next()?);
    let s = parts.next();
    if parts.next().is_some() || !(1..=2).contains(&h.len()) || m.len() != 2 || s.is_some_and(|s| s.len() != 2) {
        return None;
    }
    let (mut hour, minute, second) = (digits(h)?, digits(m)?, s.map_or(Some(0), digits)?);
    match meridiem {
        Some(pm) => {
            if !(1..=12).contains(&hour) {
                return None;
            }
            hour = hour % 12 + if pm { 12 } else { 0 };
        }
        None if hour > 23 => return None,
        None => {}
    }
    Time::new(hour as i8, i8::try_from(minute).ok()?, i8::try_from(second).ok()?, 0).ok()
}

fn month(name: &str) -> Option<u32> {
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
    let lower = name.to_ascii_lowercase();
    if lower.len() < 3 {
        return None;
    }
    let lower = lower.strip_suffix('.').unwrap_or(&lower);
    MONTHS
        .iter()
        .position(|m| m.starts_with(lower) && (lower.len() == 3 || lower.len() == m.len() || lower == "sept"))
        .map(|i| i as u32 + 1)
}

/// A run of ASCII digits (at most 9) as a number.
fn digits(text: &str) -> Option<u32> {
    if text.is_empty() || text.len() > 9 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}
