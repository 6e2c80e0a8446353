//! Scheduled entries' times (docs/configuration.md, "Scheduled entries"):
//! the cron expression reader, the next run's wall-clock time in the entry's
//! time zone, and the time zones themselves (read from the system's zone
//! database). The lifecycle only hears that a run is due; this module says
//! when.
//!
//! Daylight saving time: a scheduled local time that the clock skips (the
//! spring-forward gap) runs at the same distance into the new offset (02:30
//! in a one-hour gap runs at 03:30); a local time that occurs twice (the
//! fall-back repeat) runs once, at its first occurrence.

use crate::config::CronFields;

/// Reads a cron expression: five fields (minute, hour, day of month, month,
/// day of week), six with seconds first, or a macro (`@hourly`, `@daily`,
/// `@midnight`, `@weekly`, `@monthly`, `@yearly`, `@annually`). A field is a
/// list (`1,15`) of `*`, values, ranges (`1-5`) and steps (`*/15`, `0-30/10`,
/// `5/15`); months and weekdays also by name (`JAN`, `mon`); weekday 7 is
/// Sunday, as 0; `?` is `*` in the two day fields.
///
/// # Errors
/// What is wrong, naming the field and the value: `minute 61 is out of
/// range (0-59)`.
pub fn parse_cron(text: &str) -> Result<CronFields, String> {
    let text = text.trim();
    let expanded = match text.to_ascii_lowercase().as_str() {
        "@yearly" | "@annually" => "0 0 1 1 *",
        "@monthly" => "0 0 1 * *",
        "@weekly" => "0 0 * * 0",
        "@daily" | "@midnight" => "0 0 * * *",
        "@hourly" => "0 * * * *",
        m if m.starts_with("@every") => {
            return Err("write `every = \"...\"` for a run every so often, not @every".into())
        }
        m if m.starts_with('@') => {
            return Err(format!(
                "unknown macro {text:?}: the macros are @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly"
            ))
        }
        _ => text,
    };
    let fields: Vec<&str> = expanded.split_whitespace().collect();
    let (seconds, rest) = match fields.len() {
        5 => (None, &fields[..]),
        6 => (Some(fields[0]), &fields[1..]),
        n => {
            return Err(format!(
            "{n} fields: write five (minute hour day-of-month month day-of-week), or six with seconds first"
        ))
        }
    };
    let seconds = match seconds {
        Some(f) => field(f, &SECOND)?,
        None => 1,
    };
    let minutes = field(rest[0], &MINUTE)?;
    let hours = field(rest[1], &HOUR)?;
    let days = field(rest[2], &DAY)?;
    let months = field(rest[3], &MONTH)?;
    let mut weekdays = field(rest[4], &WEEKDAY)?;
    if weekdays >> 7 & 1 == 1 {
        weekdays = (weekdays | 1) & 0x7f;
    }
    let any = |f: &str| f == "*" || f == "?";
    // The values fit their widths: each field's range is checked above.
    Ok(CronFields {
        seconds,
        minutes,
        hours: u32::try_from(hours).unwrap_or(u32::MAX),
        days: u32::try_from(days).unwrap_or(u32::MAX),
        months: u16::try_from(months).unwrap_or(u16::MAX),
        weekdays: u8::try_from(weekdays).unwrap_or(u8::MAX),
        any_day: any(rest[2]),
        any_weekday: any(rest[4]),
    })
}

/// One cron field's name, range and value names.
struct Field {
    name: &'static str,
    min: u32,
    max: u32,
    names: &'static [&'static str],
    /// `?` allowed (the day fields).
    question: bool,
}

const SECOND: Field = Field { name: "second", min: 0, max: 59, names: &[], question: false };
const MINUTE: Field = Field { name: "minute", min: 0, max: 59, names: &[], question: false };
const HOUR: Field = Field { name: "hour", min: 0, max: 23, names: &[], question: false };
const DAY: Field = Field { name: "day of month", min: 1, max: 31, names: &[], question: true };
const MONTH: Field = Field {
    name: "month",
    min: 1,
    max: 12,
    names: &["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
    question: false,
};
const WEEKDAY: Field = Field {
    name: "day of week",
    min: 0,
    max: 7,
    names: &["sun", "mon", "tue", "wed", "thu", "fri", "sat"],
    question: true,
};

/// The set of values of one field, bit `n` for value `n`.
fn field(text: &str, f: &Field) -> Result<u64, String> {
    let mut set = 0u64;
    for item in text.split(',') {
        if item.is_empty() {
            return Err(format!("{} {text:?}: an empty item in the list", f.name));
        }
        let (range, step) = match item.split_once('/') {
            Some((r, s)) => {
                let step: u32 =
                    s.parse().map_err(|_| format!("{} {item:?}: the step {s:?} is not a number", f.name))?;
                if step == 0 || step > f.max {
                    return Err(format!(
                        "{} {item:?}: the step {step} is out of range (1-{})",
                        f.name, f.max
                    ));
                }
                (r, Some(step))
            }
            None => (item, None),
        };
        let (lo, hi) = if range == "*" || (range == "?" && f.question) {
            (f.min, f.max)
        } else if let Some((a, b)) = range.split_once('-') {
            let (a, b) = (value(a, f)?, value(b, f)?);
            if a > b {
                return Err(format!("{} {range:?}: the range ends before it begins", f.name));
            }
            (a, b)
        } else {
            let a = value(range, f)?;
            // `5/15`: from 5 to the end, every 15.
            (a, if step.is_some() { f.max } else { a })
        };
        let step = step.unwrap_or(1);
        let mut v = lo;
        while v <= hi {
            set |= 1 << v;
            v += step;
        }
    }
    Ok(set)
}

/// One value of a field: a number in its range, or a name.
fn value(text: &str, f: &Field) -> Result<u32, String> {
    if let Ok(n) = text.parse::<u32>() {
        if n < f.min || n > f.max {
            return Err(format!("{} {n} is out of range ({}-{})", f.name, f.min, f.max));
        }
        return Ok(n);
    }
    let lower = text.to_ascii_lowercase();
    if let Some(i) = f.names.iter().position(|n| *n == lower) {
        // Months are named from 1, weekdays from 0: their ranges' starts.
        return Ok(u32::try_from(i).unwrap_or(0) + f.min);
    }
    if f.names.is_empty() {
        Err(format!("{} {text:?} is not a number", f.name))
    } else {
        Err(format!(
            "{} {text:?} is neither a number ({}-{}) nor a name ({})",
            f.name,
            f.min,
            f.max,
            f.names.join(", ")
        ))
    }
}

/// Days from 1970-01-01 to a civil date (proleptic Gregorian).
#[cfg(test)]
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day counted from 1970-01-01: (year, month, day).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let m = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    (if m <= 2 { yoe + era * 400 + 1 } else { yoe + era * 400 }, m, d)
}

/// A local time, seconds from 1970-01-01T00:00:00 local, in its parts.
struct Civil {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    weekday: u32,
}

fn civil(local: i64) -> Civil {
    let days = local.div_euclid(86_400);
    let secs = u32::try_from(local.rem_euclid(86_400)).unwrap_or(0);
    let (year, month, day) = civil_from_days(days);
    let weekday = u32::try_from((days + 4).rem_euclid(7)).unwrap_or(0);
    Civil { year, month, day, hour: secs / 3600, minute: secs / 60 % 60, second: secs % 60, weekday }
}

/// How far ahead [`next_cron`] looks: five years (a February 29th that is
/// also asked to be a given weekday comes round within them).
const HORIZON: i64 = 5 * 366 * 86_400;

/// The first time after `after` (Unix seconds) at which `fields` run in
/// `zone`; `None` when none comes within five years (`30 0 30 2 *`).
pub fn next_cron(fields: &CronFields, zone: &Zone, after: i64) -> Option<i64> {
    let bit = |set: u64, n: u32| set >> n & 1 == 1;
    let start = after.checked_add(i64::from(zone.offset(after)))?;
    let mut t = start + 1;
    while t - start < HORIZON {
        let c = civil(t);
        let into_day = i64::from(c.hour * 3600 + c.minute * 60 + c.second);
        if !fields.date_matches(c.month, c.day, c.weekday) {
            t += 86_400 - into_day;
        } else if !bit(u64::from(fields.hours), c.hour) {
            t += 3600 - i64::from(c.minute * 60 + c.second);
        } else if !bit(fields.minutes, c.minute) {
            t += 60 - i64::from(c.second);
        } else if !bit(fields.seconds, c.second) {
            t += 1;
        } else {
            match zone.to_utc(t) {
                Some(u) if u > after => return Some(u),
                _ => t += 1,
            }
        }
    }
    None
}

/// `at` (Unix seconds) in `zone` as RFC 3339: `2026-03-29T03:30:00+02:00`,
/// `Z` in UTC.
pub fn rfc3339(at: i64, zone: &Zone) -> String {
    let offset = zone.offset(at);
    let c = civil(at + i64::from(offset));
    let mut s =
        format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", c.year, c.month, c.day, c.hour, c.minute, c.second);
    if offset == 0 && zone.is_utc() {
        s.push('Z');
    } else {
        let sign = if offset < 0 { '-' } else { '+' };
        let a = offset.unsigned_abs();
        s.push_str(&format!("{sign}{:02}:{:02}", a / 3600, a / 60 % 60));
    }
    s
}

/// The next three runs of a cron schedule after `after` (Unix seconds), in
/// its zone as RFC 3339 (`podinit check`); an `every` has none to show.
pub fn next_three(spec: &crate::config::ScheduleSpec, after: i64) -> Result<Vec<String>, String> {
    let crate::config::When::Cron { fields, .. } = &spec.when else { return Ok(Vec::new()) };
    let zone = Zone::load(&spec.time_zone)?;
    let mut at = after;
    let mut out = Vec::new();
    for _ in 0..3 {
        let Some(next) = next_cron(fields, &zone, at) else { break };
        out.push(rfc3339(next, &zone));
        at = next;
    }
    Ok(out)
}

/// A time zone: UTC, or one read from the zone database.
#[derive(Debug, Clone)]
pub struct Zone {
    #[cfg(feature = "schedule")]
    tz: Option<tz::TimeZone>,
}

/// The names UTC goes by; they need no zone database.
const UTC_NAMES: [&str; 4] = ["UTC", "Etc/UTC", "Etc/UCT", "Etc/Zulu"];

/// Largest zone file read (real ones are a few KiB).
#[cfg(feature = "schedule")]
const MAX_ZONE_BYTES: u64 = 1 << 20;

impl Zone {
    /// Coordinated Universal Time.
    pub fn utc() -> Zone {
        Zone {
            #[cfg(feature = "schedule")]
            tz: None,
        }
    }

    /// The zone named `name` (IANA: `"Europe/Berlin"`), read from `$TZDIR`
    /// or /usr/share/zoneinfo; `"UTC"` needs no file.
    ///
    /// # Errors
    /// Why the zone cannot be had: a name that is not a zone name, a file
    /// that is missing or not a zone file, or a podinit built without the
    /// `schedule` feature.
    pub fn load(name: &str) -> Result<Zone, String> {
        if UTC_NAMES.contains(&name) {
            return Ok(Zone::utc());
        }
        let valid = !name.is_empty()
            && !name.starts_with('/')
            && name.split('/').all(|p| !p.is_empty() && p != "." && p != "..")
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"/_+-".contains(&b));
        if !valid {
            return Err(format!("{name:?} is not a time zone name (an IANA name such as \"Europe/Berlin\")"));
        }
        Zone::read(name)
    }

    #[cfg(feature = "schedule")]
    fn read(name: &str) -> Result<Zone, String> {
        use std::io::Read as _;
        let dir = std::env::var_os("TZDIR").unwrap_or_else(|| "/usr/share/zoneinfo".into());
        let path = std::path::Path::new(&dir).join(name);
        let mut bytes = Vec::new();
        std::fs::File::open(&path)
            .and_then(|f| f.take(MAX_ZONE_BYTES).read_to_end(&mut bytes))
            .map_err(|e| {
                format!(
                    "unknown time zone {name:?}: cannot read {}: {e} (an image needs the zone database: docs/configuration.md, \"Scheduled entries\")",
                    path.display()
                )
            })?;
        let tz = tz::TimeZone::from_tz_data(&bytes)
            .map_err(|e| format!("time zone {name:?}: {} is not a zone file: {e}", path.display()))?;
        Ok(Zone { tz: Some(tz) })
    }

    #[cfg(not(feature = "schedule"))]
    fn read(name: &str) -> Result<Zone, String> {
        Err(format!(
            "time zone {name:?} needs the `schedule` feature, which this podinit was built without (UTC works)"
        ))
    }

    fn is_utc(&self) -> bool {
        #[cfg(feature = "schedule")]
        return self.tz.is_none();
        #[cfg(not(feature = "schedule"))]
        true
    }

    /// The zone's offset from UTC (seconds) at `at` (Unix seconds).
    pub fn offset(&self, at: i64) -> i32 {
        #[cfg(feature = "schedule")]
        if let Some(tz) = &self.tz {
            return tz.find_local_time_type(at).map_or(0, tz::LocalTimeType::ut_offset);
        }
        let _ = at;
        0
    }

    /// The Unix time of local time `local` (seconds from 1970-01-01T00:00:00
    /// local): its first occurrence when it occurs twice; when it does not
    /// occur (a gap), the same time in the offset before the gap.
    fn to_utc(&self, local: i64) -> Option<i64> {
        let before = self.offset(local - 86_400);
        let after = self.offset(local + 86_400);
        [before, after]
            .into_iter()
            .map(|o| local - i64::from(o))
            .filter(|&u| i64::from(self.offset(u)) == local - u)
            .min()
            .or(Some(local - i64::from(before)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(text: &str) -> i64 {
        // "YYYY-MM-DDTHH:MM:SS" as Unix seconds.
        let n = |r: std::ops::Range<usize>| text[r].parse::<u32>().unwrap();
        days_from_civil(i64::from(n(0..4)), n(5..7), n(8..10)) * 86_400
            + i64::from(n(11..13) * 3600 + n(14..16) * 60 + n(17..19))
    }

    fn next3(expr: &str, zone: &Zone, from: &str) -> Vec<String> {
        let f = parse_cron(expr).unwrap();
        let mut at = utc(from);
        (0..3)
            .map(|_| {
                at = next_cron(&f, zone, at).unwrap();
                rfc3339(at, zone)
            })
            .collect()
    }

    #[test]
    fn civil_dates_round_trip() {
        for days in [-800_000, -1, 0, 59, 365, 11_016, 20_000, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(rfc3339(utc("2026-12-03T15:30:00"), &Zone::utc()), "2026-12-03T15:30:00Z");
    }

    #[test]
    fn expressions_run_when_cron_says() {
        let z = Zone::utc();
        let from = "2026-12-03T15:31:10";
        assert_eq!(
            next3("*/15 * * * *", &z, from),
            ["2026-12-03T15:45:00Z", "2026-12-03T16:00:00Z", "2026-12-03T16:15:00Z"]
        );
        assert_eq!(
            next3("*/2 * * * * *", &z, from),
            ["2026-12-03T15:31:12Z", "2026-12-03T15:31:14Z", "2026-12-03T15:31:16Z"]
        );
        assert_eq!(
            next3("@daily", &z, from),
            ["2026-12-04T00:00:00Z", "2026-12-05T00:00:00Z", "2026-12-06T00:00:00Z"]
        );
        assert_eq!(
            next3("0 9 * * mon-fri", &z, from),
            ["2026-12-04T09:00:00Z", "2026-12-07T09:00:00Z", "2026-12-08T09:00:00Z"]
        );
        // Both day fields restricted: either one runs (cron's rule).
        assert_eq!(
            next3("0 0 1 * SUN", &z, from),
            ["2026-12-06T00:00:00Z", "2026-12-13T00:00:00Z", "2026-12-20T00:00:00Z"]
        );
        assert_eq!(
            next3("0 0 29 feb *", &z, from),
            ["2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z", "2036-02-29T00:00:00Z"]
        );
        assert_eq!(next3("5/20 1,3 * JAN,Jul 7", &z, from)[0], "2027-01-03T01:05:00Z");
        assert_eq!(next_cron(&parse_cron("0 0 30 2 *").unwrap(), &z, utc(from)), None);
    }

    #[test]
    fn errors_name_the_field_and_value() {
        for (expr, want) in [
            ("61 * * * *", "minute 61 is out of range (0-59)"),
            ("* 24 * * *", "hour 24 is out of range (0-23)"),
            ("* * 0 * *", "day of month 0 is out of range (1-31)"),
            ("* * * 13 *", "month 13 is out of range (1-12)"),
            ("* * * foo *", "month \"foo\" is neither a number (1-12) nor a name"),
            ("* * * * 8", "day of week 8 is out of range (0-7)"),
            ("*/0 * * * *", "minute \"*/0\": the step 0 is out of range (1-59)"),
            ("5-1 * * * *", "minute \"5-1\": the range ends before it begins"),
            ("* * * *", "4 fields: write five"),
            ("1,,2 * * * *", "an empty item"),
            ("@reboot", "unknown macro \"@reboot\""),
            ("@every 1h", "write `every"),
            ("60 * * * * *", "second 60 is out of range (0-59)"),
            ("? * * * *", "minute \"?\" is not a number"),
        ] {
            let err = parse_cron(expr).unwrap_err();
            assert!(err.contains(want), "{expr:?}: {err:?} does not say {want:?}");
        }
        assert_eq!(parse_cron("0 0 * * 7").unwrap().weekdays, 1);
        assert_eq!(parse_cron("0 0 * * 0-7").unwrap().weekdays, 0x7f);
    }

    #[test]
    fn zone_names_are_checked_before_any_file_is_read() {
        for bad in ["", "/etc/passwd", "../x", "Europe/../../etc", "a b"] {
            assert!(Zone::load(bad).unwrap_err().contains("is not a time zone name"), "{bad:?}");
        }
        assert!(Zone::load("UTC").unwrap().is_utc());
    }

    #[cfg(feature = "schedule")]
    #[test]
    fn daylight_saving_gap_and_repeat() {
        let Ok(berlin) = Zone::load("Europe/Berlin") else { return };
        // 2026-03-29: 02:00 CET jumps to 03:00 CEST; 02:30 runs at 03:30.
        assert_eq!(
            next3("30 2 * * *", &berlin, "2026-03-28T12:00:00"),
            ["2026-03-29T03:30:00+02:00", "2026-03-30T02:30:00+02:00", "2026-03-31T02:30:00+02:00"]
        );
        // 2026-10-25: 03:00 CEST falls back to 02:00 CET; 02:30 runs once.
        assert_eq!(
            next3("30 2 * * *", &berlin, "2026-10-24T12:00:00"),
            ["2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00", "2026-10-27T02:30:00+01:00"]
        );
        // Every 30 minutes through the gap: no run lost, none twice.
        assert_eq!(
            next3("*/30 * * * *", &berlin, "2026-03-29T00:40:00"),
            ["2026-03-29T03:00:00+02:00", "2026-03-29T03:30:00+02:00", "2026-03-29T04:00:00+02:00"]
        );
    }
}
