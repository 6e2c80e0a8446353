//! Scheduled entries' times (docs/configuration.md, "Scheduled entries"):
//! cron expressions, read by croner; the next run's wall-clock time in the
//! entry's time zone, found by croner's search; and the time zones
//! themselves (tz-rs over the system's zone database), which croner sees
//! through its `CronDateTime` trait (`At`). The lifecycle only hears that
//! a run is due; this module says when.
//!
//! Daylight saving time follows croner's rules (its README, "Daylight Saving
//! Time (DST) Handling"): a fixed-time schedule (one value each for second,
//! minute and hour) whose time the clock skips (the spring-forward gap) runs
//! at the first instant after the gap, that day; the runs of an interval or
//! wildcard schedule inside the gap are skipped. In the fall-back repeat a
//! fixed-time schedule runs once, at the first occurrence, and an interval
//! schedule runs in both passes.

/// A cron expression as croner read it (an empty shell in a podinit built
/// without the `schedule` feature, whose config reader admits none).
#[derive(Clone)]
pub struct Cron {
    #[cfg(feature = "schedule")]
    cron: croner::Cron,
}

impl std::fmt::Debug for Cron {
    /// The expression, not croner's bit fields.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut t = f.debug_tuple("Cron");
        #[cfg(feature = "schedule")]
        t.field(&self.cron.as_str());
        t.finish()
    }
}

/// The fields of a six-field expression, for messages: name and range. A
/// five-field one has all but the first.
#[cfg(feature = "schedule")]
const FIELDS: [(&str, &str); 6] = [
    ("second", "0-59"),
    ("minute", "0-59"),
    ("hour", "0-23"),
    ("day of month", "1-31"),
    ("month", "1-12 or JAN-DEC"),
    ("day of week", "0-7 or SUN-SAT, 0 and 7 both Sunday"),
];

/// How far ahead [`Cron::next_after`] looks: 100 years. Whether a date runs
/// depends on its year only through the year's kind (leap or not, and the
/// weekday of January 1st), and each of the 14 kinds comes round within 40
/// years (28, or 40 across a century year that is not a leap year): a
/// schedule that runs in UTC runs within 40 years. Croner's own search
/// stops at the year 5000 only: a schedule that runs only at local times
/// its zone skips would cost PID 1 a search to there (about 3 s in a
/// release build; a tenth of a second to 100 years).
const HORIZON: i64 = 36_525 * 86_400;

/// Reads a cron expression (docs/configuration.md, "Scheduled entries"):
/// croner reads five fields, or six with seconds first, and the macros
/// `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@hourly`.
/// podinit adds `@midnight` (`@daily`, which croner lacks) and the messages
/// for `@every`, another macro and a wrong number of fields.
///
/// # Errors
/// What is wrong, naming the field and the value as written, croner's
/// reason and the field's range: `minute "61": number out of bounds (0-59)`.
pub fn parse_cron(text: &str) -> Result<Cron, String> {
    let text = text.trim();
    let text = match text.to_ascii_lowercase().as_str() {
        "@midnight" => "@daily",
        "@yearly" | "@annually" | "@monthly" | "@weekly" | "@daily" | "@hourly" => text,
        m if m.starts_with("@every") => {
            return Err("write `every = \"...\"` for a run every so often, not @every".into())
        }
        m if m.starts_with('@') => {
            return Err(format!(
                "unknown macro {text:?}: the macros are @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly"
            ))
        }
        _ => match text.split_whitespace().count() {
            5 | 6 => text,
            n => {
                return Err(format!(
                "{n} fields: write five (minute hour day-of-month month day-of-week), or six with seconds first"
            ))
            }
        },
    };
    Cron::read(text)
}

/// croner's parser as podinit reads schedules: seconds optional, no year
/// field, `5/15` accepted (Kubernetes' CronJob controller reads schedules
/// with robfig/cron, which accepts it), and a day matching either day field
/// runs when both are restricted (cron's rule; `+` before the day of week
/// asks for both).
#[cfg(feature = "schedule")]
fn parser() -> croner::parser::CronParser {
    use croner::parser::{CronParser, Seconds, Year};
    CronParser::builder()
        .seconds(Seconds::Optional)
        .year(Year::Disallowed)
        .dom_and_dow(false)
        .sloppy_ranges(true)
        .build()
}

/// The field croner refuses, found by reading each field alone (the others
/// `*`), with croner's reason: `minute "61": number out of bounds (0-59)`.
#[cfg(feature = "schedule")]
fn refused(parser: &croner::parser::CronParser, text: &str, e: &croner::errors::CronError) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    if let Some(fields) = FIELDS.get(FIELDS.len().saturating_sub(words.len())..).filter(|_| words.len() >= 5)
    {
        for (i, ((name, range), word)) in fields.iter().zip(&words).enumerate() {
            let probe: Vec<&str> = (0..words.len()).map(|j| if j == i { *word } else { "*" }).collect();
            if let Err(e) = parser.parse(&probe.join(" ")) {
                return format!("{name} {word:?}: {} ({range})", reason(&e));
            }
        }
    }
    reason(e)
}

/// croner's reason as a clause: "Number out of bounds." as `number out of
/// bounds`.
#[cfg(feature = "schedule")]
fn reason(e: &croner::errors::CronError) -> String {
    use croner::errors::CronError as E;
    let text = match e {
        E::ComponentError(m) | E::InvalidPattern(m) => m.clone(),
        // "CronPattern contains illegal character 'F' in part 'FOO'": the
        // part is the field, named already.
        E::IllegalCharacters(m) => {
            let m = m.strip_prefix("CronPattern contains ").unwrap_or(m);
            m.split(" in part ").next().unwrap_or(m).to_owned()
        }
        other => other.to_string(),
    };
    // ASCII only: Unicode's case tables would cost 12 KB of the binary.
    let mut text = text.trim_end_matches('.').to_owned();
    if let Some(first) = text.get_mut(..1) {
        first.make_ascii_lowercase();
    }
    text
}

impl Cron {
    #[cfg(feature = "schedule")]
    fn read(text: &str) -> Result<Cron, String> {
        let parser = parser();
        match parser.parse(text) {
            Ok(cron) => Ok(Cron { cron }),
            Err(e) => Err(refused(&parser, text, &e)),
        }
    }

    #[cfg(not(feature = "schedule"))]
    fn read(_: &str) -> Result<Cron, String> {
        Err("a cron schedule needs the `schedule` feature, which this podinit was built without".into())
    }

    /// The first run after `after` (Unix seconds) in `zone`; `None` when
    /// none comes within 100 years (it runs only at local times the zone
    /// skips).
    pub fn next_after(&self, zone: &Zone, after: i64) -> Option<i64> {
        #[cfg(feature = "schedule")]
        {
            let from = At { unix: after, zone, limit: after.saturating_add(HORIZON) };
            self.cron.find_next_occurrence(&from, false).ok().map(|at| at.unix)
        }
        #[cfg(not(feature = "schedule"))]
        {
            let _ = (zone, after, HORIZON);
            None
        }
    }

    /// Whether it never runs (`0 0 30 2 *`): a time field without a value,
    /// or no run in UTC within the 400 years before 5000, the year croner's
    /// search stops at. The calendar repeats every 400 years (146,097 days,
    /// which are 20,871 weeks), so none then is none ever; the search takes
    /// milliseconds.
    pub fn never_runs(&self) -> bool {
        #[cfg(feature = "schedule")]
        {
            let p = &self.cron.pattern;
            if [&p.seconds, &p.minutes, &p.hours].iter().any(|f| f.values().is_empty()) {
                return true;
            }
            let utc = Zone::utc();
            let from = At { unix: days_from_civil(4600, 1, 1) * 86_400 - 1, zone: &utc, limit: i64::MAX };
            self.cron.find_next_occurrence(&from, false).is_err()
        }
        #[cfg(not(feature = "schedule"))]
        false
    }

    /// Whether it runs at a second other than 0 of a minute: a seconds
    /// field, which a CronJob's schedule has not.
    pub fn has_seconds(&self) -> bool {
        #[cfg(feature = "schedule")]
        return self.cron.pattern.seconds.values() != [0];
        #[cfg(not(feature = "schedule"))]
        false
    }

    /// Whether it uses croner's extensions `L`, `W`, `#` (the day fields) or
    /// `+` (before the day of week), which robfig/cron's standard parser,
    /// the one of Kubernetes' CronJob controller, refuses.
    pub fn has_extensions(&self) -> bool {
        #[cfg(feature = "schedule")]
        {
            let p = &self.cron.pattern;
            p.days.has_modifiers() || p.days_of_week.has_modifiers() || p.matches_dom_and_dow()
        }
        #[cfg(not(feature = "schedule"))]
        false
    }
}

/// An instant (Unix seconds) in a time zone, as croner's search moves it.
/// A local time whose instants all lie past `limit` ends the search.
#[cfg(feature = "schedule")]
#[derive(Debug, Clone, Copy)]
struct At<'a> {
    unix: i64,
    zone: &'a Zone,
    limit: i64,
}

#[cfg(feature = "schedule")]
impl croner::CronDateTime for At<'_> {
    fn to_civil(&self) -> croner::CivilDateTime {
        let c = civil(self.unix + i64::from(self.zone.offset(self.unix)));
        croner::CivilDateTime::new(
            // Years of croner's search (1 to 5000) fit.
            croner::CivilDate::from_parts_unchecked(
                i32::try_from(c.year).unwrap_or(i32::MAX),
                c.month,
                c.day,
            ),
            croner::CivilTime::from_parts_unchecked(c.hour, c.minute, c.second),
        )
    }

    fn civil_weekday(&self) -> croner::Weekday {
        croner::Weekday::from_days_from_sunday(
            civil(self.unix + i64::from(self.zone.offset(self.unix))).weekday,
        )
    }

    fn resolve_civil(
        &self,
        c: croner::CivilDateTime,
    ) -> Result<croner::Resolution<Self>, croner::errors::CronError> {
        let local = days_from_civil(i64::from(c.year()), c.month(), c.day()) * 86_400
            + i64::from(c.hour() * 3600 + c.minute() * 60 + c.second());
        let (first, second) = self.zone.instants(local);
        let at = |unix| At { unix, ..*self };
        match (first, second) {
            (Some(u), _) | (None, Some(u)) if u > self.limit => {
                Err(croner::errors::CronError::TimeSearchLimitExceeded)
            }
            (Some(a), Some(b)) => Ok(croner::Resolution::Ambiguous(at(a), at(b))),
            (Some(u), None) | (None, Some(u)) => Ok(croner::Resolution::Single(at(u))),
            (None, None) if local - 93_600 > self.limit => {
                Err(croner::errors::CronError::TimeSearchLimitExceeded)
            }
            (None, None) => Ok(croner::Resolution::Gap),
        }
    }

    fn checked_add_seconds(&self, seconds: i64) -> Option<Self> {
        Some(At { unix: self.unix.checked_add(seconds)?, ..*self })
    }

    fn cmp_instant(&self, other: &Self) -> std::cmp::Ordering {
        self.unix.cmp(&other.unix)
    }
}

/// Days from 1970-01-01 to a civil date (proleptic Gregorian).
#[cfg(any(feature = "schedule", test))]
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
    /// 0-6 from Sunday.
    #[cfg_attr(not(feature = "schedule"), allow(dead_code))]
    weekday: u32,
}

fn civil(local: i64) -> Civil {
    let days = local.div_euclid(86_400);
    let secs = u32::try_from(local.rem_euclid(86_400)).unwrap_or(0);
    let (year, month, day) = civil_from_days(days);
    let weekday = u32::try_from((days + 4).rem_euclid(7)).unwrap_or(0);
    Civil { year, month, day, hour: secs / 3600, minute: secs / 60 % 60, second: secs % 60, weekday }
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
    let crate::config::When::Cron { text } = &spec.when else { return Ok(Vec::new()) };
    let cron = parse_cron(text)?;
    let zone = Zone::load(&spec.time_zone)?;
    let mut at = after;
    let mut out = Vec::new();
    for _ in 0..3 {
        let Some(next) = cron.next_after(&zone, at) else { break };
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

    /// The instants (Unix seconds) at which local time `local` (seconds
    /// from 1970-01-01T00:00:00 local) occurs, earlier first: one, two when
    /// the clock falls back over it, none when it skips it (a gap). The
    /// offsets tried are those a day before and a day after: the zone's
    /// changes are further apart than that.
    #[cfg(feature = "schedule")]
    fn instants(&self, local: i64) -> (Option<i64>, Option<i64>) {
        let before = local - i64::from(self.offset(local - 86_400));
        let after = local - i64::from(self.offset(local + 86_400));
        let occurs = |u: i64| i64::from(self.offset(u)) == local - u;
        let (a, b) = (before.min(after), before.max(after));
        match (occurs(a), a != b && occurs(b)) {
            (true, true) => (Some(a), Some(b)),
            (true, false) => (Some(a), None),
            (false, true) => (Some(b), None),
            (false, false) => (None, None),
        }
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

    #[cfg(feature = "schedule")]
    /// The first `n` runs of `expr` after `from` (UTC), in `zone`.
    fn runs(expr: &str, zone: &Zone, from: &str, n: usize) -> Vec<String> {
        let cron = parse_cron(expr).unwrap();
        let mut at = utc(from);
        (0..n)
            .map(|_| {
                at = cron.next_after(zone, at).unwrap_or_else(|| panic!("{expr:?}: no run after {at}"));
                rfc3339(at, zone)
            })
            .collect()
    }

    #[cfg(feature = "schedule")]
    fn next3(expr: &str, zone: &Zone, from: &str) -> Vec<String> {
        runs(expr, zone, from, 3)
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

    #[cfg(feature = "schedule")]
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
        for daily in ["@daily", "@midnight", "@DAILY"] {
            assert_eq!(
                next3(daily, &z, from),
                ["2026-12-04T00:00:00Z", "2026-12-05T00:00:00Z", "2026-12-06T00:00:00Z"]
            );
        }
        assert_eq!(
            next3("0 9 * * mon-fri", &z, from),
            ["2026-12-04T09:00:00Z", "2026-12-07T09:00:00Z", "2026-12-08T09:00:00Z"]
        );
        // Both day fields restricted: either one runs (cron's rule).
        assert_eq!(
            next3("0 0 1 * SUN", &z, from),
            ["2026-12-06T00:00:00Z", "2026-12-13T00:00:00Z", "2026-12-20T00:00:00Z"]
        );
        // `+`: both.
        assert_eq!(
            next3("0 0 1 * +TUE", &z, from),
            ["2027-06-01T00:00:00Z", "2028-02-01T00:00:00Z", "2028-08-01T00:00:00Z"]
        );
        assert_eq!(
            next3("0 0 29 feb *", &z, from),
            ["2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z", "2036-02-29T00:00:00Z"]
        );
        // croner's extensions: the last day, the nearest weekday, the nth weekday.
        assert_eq!(
            next3("0 0 L * *", &z, from),
            ["2026-12-31T00:00:00Z", "2027-01-31T00:00:00Z", "2027-02-28T00:00:00Z"]
        );
        assert_eq!(next3("0 0 1W * *", &z, from)[..2], ["2027-01-01T00:00:00Z", "2027-02-01T00:00:00Z"]);
        assert_eq!(next3("0 0 * * FRI#2", &z, from)[0], "2026-12-11T00:00:00Z");
        // `5/15`: from 5 to the end of the range (robfig/cron reads it so too).
        assert_eq!(next3("5/20 1,3 * JAN,Jul 7", &z, from)[0], "2027-01-03T01:05:00Z");
        assert_eq!(next3("0 0 * * 7", &z, from), next3("0 0 * * 0", &z, from), "7 is Sunday, as 0");
        let never = parse_cron("0 0 30 2 *").unwrap();
        assert!(never.never_runs());
        assert_eq!(never.next_after(&z, utc(from)), None);
        for runs in ["0 0 29 2 +1", "0 0 L 2 *", "* * * * *", "0 0 31 12 5#5"] {
            assert!(!parse_cron(runs).unwrap().never_runs(), "{runs:?}");
        }
    }

    #[cfg(feature = "schedule")]
    /// Finding out that a schedule never runs takes a bounded, short time,
    /// whatever never matches: the date, the time, both day fields.
    #[test]
    fn never_running_schedules_are_found_out_quickly() {
        let start = std::time::Instant::now();
        for never in [
            "0 0 30 2 *",
            "0 0 31 4,6,9,11 *",
            "0 0 31 2 +5",
            "0 0 13 * +5#5",
            "* , * * *",
            "0 0 , * *",
            ", * * * * *",
            "0 0 * , *",
        ] {
            let cron = parse_cron(never).unwrap();
            assert!(cron.never_runs(), "{never:?}");
        }
        // Debug build, shared machine: a generous bound for what takes
        // milliseconds.
        assert!(start.elapsed() < std::time::Duration::from_secs(10), "{:?}", start.elapsed());
    }

    #[cfg(feature = "schedule")]
    #[test]
    fn errors_name_the_field_and_value() {
        for (expr, want) in [
            ("61 * * * *", "minute \"61\": number out of bounds (0-59)"),
            ("* 24 * * *", "hour \"24\": number out of bounds (0-23)"),
            ("* * 0 * *", "day of month \"0\": number out of bounds (1-31)"),
            ("* * * 13 *", "month \"13\": number out of bounds (1-12 or JAN-DEC)"),
            ("* * * foo *", "month \"foo\": illegal character 'F' (1-12 or JAN-DEC)"),
            ("* * * * 8", "day of week \"8\": number out of bounds (0-7 or SUN-SAT"),
            ("*/0 * * * *", "minute \"*/0\": step cannot be zero (0-59)"),
            ("5-1 * * * *", "minute \"5-1\": range out of bounds (0-59)"),
            ("* * * * 1#6", "day of week \"1#6\": nth specifier out of bounds"),
            ("* * * *", "4 fields: write five"),
            ("* * * * * * 2026", "7 fields: write five"),
            ("", "0 fields"),
            ("@reboot", "unknown macro \"@reboot\""),
            ("@every 1h", "write `every"),
            ("60 * * * * *", "second \"60\": number out of bounds (0-59)"),
            ("? * * * *", "minute \"?\": illegal character '?' (0-59)"),
        ] {
            let Err(err) = parse_cron(expr) else { panic!("{expr:?} is read") };
            assert!(err.contains(want), "{expr:?}: {err:?} does not say {want:?}");
        }
        // An empty item in a list is skipped, as croner and robfig/cron (the
        // CronJob controller's parser) both do.
        let z = Zone::utc();
        assert_eq!(
            next3("1,,2 * * * *", &z, "2026-12-03T15:31:10"),
            next3("1,2 * * * *", &z, "2026-12-03T15:31:10")
        );
        // `?` is `*` in the day fields.
        assert_eq!(next3("0 0 ? * ?", &z, "2026-12-03T15:31:10"), next3("@daily", &z, "2026-12-03T15:31:10"));
    }

    #[cfg(feature = "schedule")]
    #[test]
    fn croners_extensions_and_seconds_are_told_apart() {
        for (expr, extensions, seconds) in [
            ("30 7 * * mon-fri", false, false),
            // Month and day names with an L or a W in them are no extension.
            ("0 0 * JUL WED", false, false),
            ("0 0 L * *", true, false),
            ("0 0 15W * *", true, false),
            ("0 0 LW * *", true, false),
            ("0 0 * * 5#2", true, false),
            ("0 0 * * 5L", true, false),
            ("0 0 1 * +MON", true, false),
            ("0 0 0 * * *", false, false),
            ("*/10 * * * * *", false, true),
            ("30 0 0 * * *", false, true),
        ] {
            let cron = parse_cron(expr).unwrap();
            assert_eq!(cron.has_extensions(), extensions, "{expr:?}");
            assert_eq!(cron.has_seconds(), seconds, "{expr:?}");
        }
    }

    #[test]
    fn zone_names_are_checked_before_any_file_is_read() {
        for bad in ["", "/etc/passwd", "../x", "Europe/../../etc", "a b"] {
            assert!(Zone::load(bad).unwrap_err().contains("is not a time zone name"), "{bad:?}");
        }
        assert!(Zone::load("UTC").unwrap().is_utc());
    }

    /// croner's view of an instant in a zone agrees with tz-rs: the local
    /// time, the weekday, and a local time's instants, none in the spring
    /// gap and two in the autumn repeat.
    #[cfg(feature = "schedule")]
    #[test]
    fn croner_sees_local_times_as_tz_rs_has_them() {
        use croner::{CivilDateTime, CronDateTime as _, Resolution, Weekday};
        let Ok(berlin) = Zone::load("Europe/Berlin") else { return };
        let at = |unix| At { unix, zone: &berlin, limit: i64::MAX };
        let local = |y, mo, d, h, mi| CivilDateTime::from_ymd_hms(y, mo, d, h, mi, 0).unwrap();
        // 2026-12-03 16:30 in Berlin (CET) is a Thursday, 15:30 UTC.
        let winter = at(utc("2026-12-03T15:30:00"));
        assert_eq!(winter.to_civil(), local(2026, 12, 3, 16, 30));
        assert_eq!(winter.civil_weekday(), Weekday::Thursday);
        let unix = |r: Resolution<At<'_>>| match r {
            Resolution::Single(a) => vec![a.unix],
            Resolution::Ambiguous(a, b) => vec![a.unix, b.unix],
            Resolution::Gap => vec![],
        };
        let resolve = |c| unix(winter.resolve_civil(c).unwrap());
        assert_eq!(resolve(local(2026, 12, 3, 16, 30)), [utc("2026-12-03T15:30:00")]);
        // 2026-03-29: 02:00 CET jumps to 03:00 CEST.
        assert_eq!(resolve(local(2026, 3, 29, 1, 59)), [utc("2026-03-29T00:59:00")]);
        assert_eq!(resolve(local(2026, 3, 29, 2, 0)), Vec::<i64>::new());
        assert_eq!(resolve(local(2026, 3, 29, 2, 59)), Vec::<i64>::new());
        assert_eq!(resolve(local(2026, 3, 29, 3, 0)), [utc("2026-03-29T01:00:00")]);
        // 2026-10-25: 03:00 CEST falls back to 02:00 CET; 02:30 is twice.
        assert_eq!(
            resolve(local(2026, 10, 25, 2, 30)),
            [utc("2026-10-25T00:30:00"), utc("2026-10-25T01:30:00")]
        );
        assert_eq!(resolve(local(2026, 10, 25, 3, 0)), [utc("2026-10-25T02:00:00")]);
        // Both passes read back as the same local time.
        for pass in ["2026-10-25T00:30:00", "2026-10-25T01:30:00"] {
            assert_eq!(at(utc(pass)).to_civil(), local(2026, 10, 25, 2, 30), "{pass}");
        }
        // Far ahead the zone's rule (its TZ footer) still says when.
        assert_eq!(resolve(local(2400, 3, 26, 2, 30)), Vec::<i64>::new());
        // A local time past the search's limit ends it.
        let limited =
            At { unix: utc("2026-12-03T15:30:00"), zone: &berlin, limit: utc("2026-12-31T00:00:00") };
        assert!(limited.resolve_civil(local(2027, 1, 1, 0, 0)).is_err());
        assert!(limited.resolve_civil(local(2026, 12, 30, 0, 0)).is_ok());
    }

    /// Daylight saving time as croner's README ("Daylight Saving Time (DST)
    /// Handling") describes it.
    #[cfg(feature = "schedule")]
    #[test]
    fn daylight_saving_gap_and_repeat() {
        let Ok(berlin) = Zone::load("Europe/Berlin") else { return };
        // 2026-03-29: 02:00 CET jumps to 03:00 CEST. A fixed time in the gap
        // runs at the first instant after it, that day.
        assert_eq!(
            next3("30 2 * * *", &berlin, "2026-03-28T12:00:00"),
            ["2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00", "2026-03-31T02:30:00+02:00"]
        );
        // An interval's runs in the gap are skipped.
        assert_eq!(
            runs("*/30 * * * *", &berlin, "2026-03-29T00:10:00", 4),
            [
                "2026-03-29T01:30:00+01:00",
                "2026-03-29T03:00:00+02:00",
                "2026-03-29T03:30:00+02:00",
                "2026-03-29T04:00:00+02:00"
            ]
        );
        // The hour before the gap is no gap: a daily 01:00 runs once.
        assert_eq!(
            next3("0 1 * * *", &berlin, "2026-03-28T12:00:00"),
            ["2026-03-29T01:00:00+01:00", "2026-03-30T01:00:00+02:00", "2026-03-31T01:00:00+02:00"]
        );
        // 2026-10-25: 03:00 CEST falls back to 02:00 CET. A fixed time runs
        // once, at its first occurrence...
        assert_eq!(
            next3("30 2 * * *", &berlin, "2026-10-24T12:00:00"),
            ["2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00", "2026-10-27T02:30:00+01:00"]
        );
        // ...also when the search starts inside the second pass.
        assert_eq!(next3("30 2 * * *", &berlin, "2026-10-25T01:10:00")[0], "2026-10-26T02:30:00+01:00");
        // An interval runs in both passes.
        assert_eq!(
            runs("*/30 * * * *", &berlin, "2026-10-25T00:10:00", 5),
            [
                "2026-10-25T02:30:00+02:00",
                "2026-10-25T02:00:00+01:00",
                "2026-10-25T02:30:00+01:00",
                "2026-10-25T03:00:00+01:00",
                "2026-10-25T03:30:00+01:00"
            ]
        );
    }

    /// A schedule that runs only at local times its zone skips (every
    /// second of 02:00-02:59 on the last Sunday of March, in Berlin) has no
    /// run; finding that out stops at the 100-year horizon, quickly.
    #[cfg(feature = "schedule")]
    #[test]
    fn a_schedule_only_in_the_gap_is_given_up_on_quickly() {
        let Ok(berlin) = Zone::load("Europe/Berlin") else { return };
        let cron = parse_cron("* * 2 * 3 0#L").unwrap();
        assert!(!cron.never_runs(), "it runs in UTC");
        // The longest wait of a schedule that runs: 40 years, for a
        // February 29th that is a Monday, across 2100.
        assert_eq!(next3("0 0 29 2 +MON", &berlin, "2072-03-01T00:00:00")[0], "2112-02-29T00:00:00+01:00");
        let start = std::time::Instant::now();
        assert_eq!(cron.next_after(&berlin, utc("2026-01-01T00:00:00")), None);
        assert!(start.elapsed() < std::time::Duration::from_secs(20), "{:?}", start.elapsed());
    }
}
