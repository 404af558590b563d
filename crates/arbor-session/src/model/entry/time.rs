//! ISO 8601 timestamps to milliseconds and back, as chrono reads and
//! writes them, without chrono on the common shape.

/// The newest time a session's record is believed (2100-01-01): a later
/// one is a broken clock or a bad write, and would keep its session the
/// newest (never old enough to clean up) for ever.
pub const LATEST_SANE_MS: i64 = 4_102_444_800_000;

/// A number below this is a time in seconds (as milliseconds it would be
/// before March 1973; as seconds it is any time before the year 5138).
const SECONDS_BELOW: f64 = 1e11;

/// `ms` (since the epoch) when it is a believable time for a session's
/// record: after 1970-01-01 (0 is "no time" written as a time) and before
/// [`LATEST_SANE_MS`]. Every time read from a session's lines passes
/// here, so that the row, the list's order and the age shown agree.
pub fn sane_ms(ms: i64) -> Option<i64> {
    (ms > 0 && ms < LATEST_SANE_MS).then_some(ms)
}

/// A numeric timestamp (Unix milliseconds, or seconds when too small to
/// be milliseconds) as [`sane_ms`] milliseconds.
pub fn number_ms(n: f64) -> Option<i64> {
    if !n.is_finite() || n <= 0.0 {
        return None;
    }
    let ms = if n < SECONDS_BELOW { n * 1000.0 } else { n };
    // Compared as a float first: 1e30 as an integer saturates.
    if ms >= LATEST_SANE_MS as f64 {
        return None;
    }
    sane_ms(ms as i64)
}

/// Milliseconds since the epoch of an ISO 8601 timestamp.
pub fn parse_iso_ms(s: &str) -> Option<i64> {
    canonical_iso_ms(s).or_else(|| {
        chrono::DateTime::parse_from_rfc3339(s)
            .ok()
            .map(|d| d.timestamp_millis())
    })
}

/// [`parse_iso_ms`] of the one shape agents write, `YYYY-MM-DDTHH:MM:SS.mmmZ`,
/// without chrono's general parser (a million entries' times are sorted on
/// every load); `None` for anything else, chrono's to decide.
fn canonical_iso_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 24 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' || b[19] != b'.' || b[23] != b'Z' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        b[r].iter().try_fold(0i64, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
        })
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec, ms) = (num(11..13)?, num(14..16)?, num(17..19)?, num(20..23)?);
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days_in_month = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    // A leap second (:60) is chrono's to read.
    if d < 1 || d > days_in_month || h > 23 || mi > 59 || sec > 59 {
        return None;
    }
    // Days from 1970-01-01 (Howard Hinnant's days_from_civil).
    let yy = if m <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 24 + h) * 60 + mi) * 60_000 + sec * 1000 + ms)
}

/// ISO 8601 UTC with milliseconds, the shape every agent writes.
pub fn format_iso_ms(ms: i64) -> String {
    use chrono::{Datelike, Timelike};
    match chrono::DateTime::from_timestamp_millis(ms) {
        // Written digit by digit: `format!` was 5 % of a 100,000-row
        // `arbor list --json`.
        Some(d) if (0..=9999).contains(&d.year()) => {
            let mut b = *b"0000-00-00T00:00:00.000Z";
            let mut put = |at: usize, width: usize, mut v: u32| {
                for k in (at..at + width).rev() {
                    b[k] = b'0' + (v % 10) as u8;
                    v /= 10;
                }
            };
            put(0, 4, d.year() as u32);
            put(5, 2, d.month());
            put(8, 2, d.day());
            put(11, 2, d.hour());
            put(14, 2, d.minute());
            put(17, 2, d.second());
            put(20, 3, d.timestamp_subsec_millis());
            b.iter().map(|&c| c as char).collect()
        }
        Some(d) => d.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        None => "1970-01-01T00:00:00.000Z".to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn times_are_believed_or_not_the_same_way() {
        use super::{number_ms, sane_ms};
        assert_eq!(number_ms(1_735_689_660_000.0), Some(1_735_689_660_000));
        // Seconds, with or without a fraction.
        assert_eq!(number_ms(1_735_689_660.0), Some(1_735_689_660_000));
        assert_eq!(number_ms(1_735_689_660.5), Some(1_735_689_660_500));
        for bad in [0.0, -5.0, 1e30, f64::NAN, f64::INFINITY, 4.2e12, 4.2e9] {
            assert_eq!(number_ms(bad), None, "{bad}");
        }
        assert_eq!(sane_ms(0), None);
        assert_eq!(sane_ms(super::LATEST_SANE_MS), None);
        assert_eq!(sane_ms(1), Some(1));
    }

    #[test]
    fn formatted_times_are_chronos() {
        let mut next = crate::testgen::xorshift(0x2545_f491_4f6c_dd1d);
        for k in 0..20_000 {
            let seed = next();
            // Years 0 to 9999 and a little past either end.
            let ms = (seed % 330_000_000_000_000) as i64 - 62_200_000_000_000;
            let ms = if k % 10 == 0 { ms % 86_400_000 } else { ms };
            let want = chrono::DateTime::from_timestamp_millis(ms)
                .expect("in chrono's range")
                .format("%Y-%m-%dT%H:%M:%S%.3fZ")
                .to_string();
            assert_eq!(super::format_iso_ms(ms), want, "{ms}");
        }
    }

    /// The shortcut for the usual shape reads every string as chrono does
    /// (or leaves it to chrono).
    #[test]
    fn canonical_times_read_as_chrono_reads_them() {
        let mut rng = crate::testgen::xorshift(0x9e37_79b9_7f4a_7c15);
        let mut next = move |n: u64| rng() % n;
        let mut cases: Vec<String> = vec![
            "2024-02-29T23:59:59.999Z".into(),
            "2023-02-29T00:00:00.000Z".into(),
            "1900-02-29T00:00:00.000Z".into(),
            "2000-02-29T00:00:00.000Z".into(),
            "2016-12-31T23:59:60.000Z".into(),
            "0000-01-01T00:00:00.000Z".into(),
            "9999-12-31T23:59:59.999Z".into(),
            "1969-12-31T23:59:59.999Z".into(),
            "2025-13-01T00:00:00.000Z".into(),
            "2025-00-10T00:00:00.000Z".into(),
            "2025-01-01t00:00:00.000z".into(),
            "2025-01-01T00:00:00.000+01:00".into(),
            "2025-01-01T24:00:00.000Z".into(),
            "2025-1-01T00:00:00.000Z".into(),
            "2025-01-01T00:00:00Z".into(),
        ];
        for _ in 0..20_000 {
            cases.push(format!(
                "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
                next(10_000),
                next(14),
                next(33),
                next(26),
                next(61),
                next(62),
                next(1000)
            ));
        }
        for c in cases {
            let chrono = chrono::DateTime::parse_from_rfc3339(&c)
                .ok()
                .map(|d| d.timestamp_millis());
            assert_eq!(super::parse_iso_ms(&c), chrono, "{c}");
            if let Some(fast) = super::canonical_iso_ms(&c) {
                assert_eq!(Some(fast), chrono, "{c}");
            }
        }
    }

    #[test]
    fn iso_format_matches_chrono() {
        for ms in [
            0i64,
            1,
            999,
            1_767_225_600_123,
            253_402_300_799_999,
            253_402_300_800_000,
            -1,
            -62_167_219_200_000,
            -62_200_000_000_000,
        ] {
            let chrono = chrono::DateTime::from_timestamp_millis(ms)
                .unwrap()
                .format("%Y-%m-%dT%H:%M:%S%.3fZ")
                .to_string();
            assert_eq!(super::format_iso_ms(ms), chrono, "{ms}");
        }
    }
}
