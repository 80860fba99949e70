//! Checkpoint timestamps: `datetime.now(timezone.utc).isoformat()`, formatted natively.

use std::time::{SystemTime, UNIX_EPOCH};

/// `(year, month, day)` of the proleptic Gregorian calendar for days since 1970-01-01
/// (Howard Hinnant's `civil_from_days`).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Python's `datetime.fromtimestamp(secs + micros / 1e6, timezone.utc).isoformat()`:
/// `YYYY-MM-DDTHH:MM:SS[.ffffff]+00:00` (the fraction only when not zero). Years outside
/// 0..=9999 (which `datetime` cannot hold) are written with as many digits as they need.
pub fn iso_utc(secs: i64, micros: u32) -> String {
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    if !(0..=9999).contains(&y) {
        let (hh, mm, ss) = (s / 3_600, s % 3_600 / 60, s % 60);
        let frac = if micros == 0 {
            String::new()
        } else {
            format!(".{micros:06}")
        };
        return format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}{frac}+00:00");
    }
    // (a checkpoint timestamp is made per super-step: digits written into a stack buffer,
    // no `format!`)
    let mut b = [0u8; 32];
    let mut at = 0;
    let mut put = |v: u64, width: usize, sep: u8| {
        let mut v = v;
        for i in (0..width).rev() {
            b[at + i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
        at += width;
        if sep != 0 {
            b[at] = sep;
            at += 1;
        }
    };
    put(y as u64, 4, b'-');
    put(u64::from(m), 2, b'-');
    put(u64::from(d), 2, b'T');
    put((s / 3_600) as u64, 2, b':');
    put((s % 3_600 / 60) as u64, 2, b':');
    if micros == 0 {
        put((s % 60) as u64, 2, 0);
    } else {
        put((s % 60) as u64, 2, b'.');
        put(u64::from(micros), 6, 0);
    }
    let mut out = String::with_capacity(at + 6);
    // (ASCII digits and separators only)
    out.push_str(std::str::from_utf8(&b[..at]).unwrap_or_default());
    out.push_str("+00:00");
    out
}

/// The current time as [`iso_utc`] formats it (microseconds rounded down, as
/// `datetime.now` does).
pub fn utc_now_iso() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    iso_utc(now.as_secs() as i64, now.subsec_micros())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_python_isoformat() {
        // values from datetime.fromtimestamp(t, timezone.utc).isoformat()
        assert_eq!(iso_utc(0, 0), "1970-01-01T00:00:00+00:00");
        assert_eq!(iso_utc(951_782_400, 1), "2000-02-29T00:00:00.000001+00:00");
        assert_eq!(
            iso_utc(1_795_996_799, 999_999),
            "2026-11-29T23:59:59.999999+00:00"
        );
        assert_eq!(iso_utc(4_107_542_400, 0), "2100-03-01T00:00:00+00:00");
        assert_eq!(iso_utc(-1, 500_000), "1969-12-31T23:59:59.500000+00:00");
        assert_eq!(
            iso_utc(253_402_300_799, 999_999),
            "9999-12-31T23:59:59.999999+00:00"
        );
        assert_eq!(iso_utc(-62_135_596_800, 0), "0001-01-01T00:00:00+00:00");
        assert_eq!(
            iso_utc(1_764_504_000, 10),
            "2025-11-30T12:00:00.000010+00:00"
        );
    }

    #[test]
    fn civil_dates_round_trip_over_four_centuries() {
        let mut prev = civil_from_days(-1);
        for days in 0..146_097 {
            let (y, m, d) = civil_from_days(days);
            assert!((1..=12).contains(&m) && (1..=31).contains(&d));
            assert!((y, m, d) > prev, "{days}");
            prev = (y, m, d);
        }
        assert_eq!(civil_from_days(146_097), (2370, 1, 1));
    }

    #[test]
    fn now_is_well_formed() {
        let s = utc_now_iso();
        assert!(s.ends_with("+00:00") && s.as_bytes()[10] == b'T', "{s}");
        assert!(s.starts_with("20"), "{s}");
    }
}
