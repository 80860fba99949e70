//! The savers' string versions (`get_next_version`: `f"{n + 1:032}.{random:016}"`):
//! making them, Python's float formatting they depend on, and splitting them back into
//! `(n, r)` for compact records.
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, OnceLock};

use crate::digits;
use crate::error::CoreResult;
use crate::version::{integer_part, Version};

/// The savers' `get_next_version`: `f"{n + 1:032}.{random:016}"`.
pub fn next_saver_version<E>(current: Option<&Version>, random: f64) -> CoreResult<Version, E> {
    let n = integer_part(current)? + 1;
    let mut s = String::with_capacity(52);
    if n < 0 {
        s.push('-');
        digits::push_padded(&mut s, n.unsigned_abs(), 31);
    } else {
        digits::push_padded(&mut s, n.unsigned_abs(), 32);
    }
    s.push('.');
    push_float_016(&mut s, random);
    Ok(Version::Str(Arc::from(s)))
}

/// Python's `repr(x)` of a float (shortest round-trip digits, exponent outside [-4, 16)).
pub fn py_float_repr(x: f64) -> String {
    // Fast path for random() values: Rust's Display prints the same shortest digits in
    // positional notation, which is Python's form for magnitudes in [1e-4, 1).
    if (1e-4..1.0).contains(&x.abs()) {
        return format!("{x}");
    }
    py_float_repr_general(x)
}

fn py_float_repr_general(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // Rust's `{:e}` yields the shortest round-trip digits: "d.ddddde<exp>".
    let sci = format!("{:e}", x.abs());
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let mut out = String::with_capacity(24);
    if x < 0.0 {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        if exp < 0 {
            out.push_str("0.");
            for _ in 0..(-exp - 1) {
                out.push('0');
            }
            out.push_str(&digits);
        } else {
            let point = exp as usize + 1;
            if digits.len() <= point {
                out.push_str(&digits);
                for _ in digits.len()..point {
                    out.push('0');
                }
                out.push_str(".0");
            } else {
                out.push_str(&digits[..point]);
                out.push('.');
                out.push_str(&digits[point..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    out
}

/// Python's `f"{x:016}"` for a float: its repr zero-padded (after the sign) to width 16.
pub fn format_float_016(x: f64) -> String {
    let mut out = String::with_capacity(24);
    push_float_016(&mut out, x);
    out
}

/// Appends [`format_float_016`]`(x)` to `out`, without an intermediate string for the
/// usual `random()` values.
pub fn push_float_016(out: &mut String, x: f64) {
    let start = out.len();
    if (1e-4..1.0).contains(&x.abs()) {
        // (as `py_float_repr`'s fast path; writing to a String cannot fail)
        let _ = write!(out, "{x}");
    } else {
        out.push_str(&py_float_repr_general(x));
    }
    let len = out.len() - start;
    if len < 16 {
        let at = if out.as_bytes()[start] == b'-' {
            start + 1
        } else {
            start
        };
        out.insert_str(at, &"0000000000000000"[..16 - len]);
    }
}

/// The parts `(n, r)` of a saver version string `"{n:032}.{r:016}"`, when formatting
/// them back gives exactly `s` (so a compact `[n, r]` form decodes to the same string) and
/// `n` fits msgpack's 64-bit integers; `None` for any other string.
pub fn split_saver_version(s: &str) -> Option<(u64, f64)> {
    let b = s.as_bytes();
    if b.len() < 49 || b[32] != b'.' || !b[..32].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n: u64 = s[..32].parse().ok()?;
    let suffix = &s[33..];
    let r: f64 = suffix.parse().ok()?;
    if format_float_016(r) != suffix {
        return None;
    }
    Some((n, r))
}

static RNG_COUNTER: AtomicU64 = AtomicU64::new(0);
static RNG_SEED: OnceLock<u64> = OnceLock::new();

/// A uniform float in [0, 1) with 53 random bits (splitmix64 over a randomly seeded counter).
pub fn random_unit() -> f64 {
    let seed = *RNG_SEED.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        h.write_u64(nanos);
        h.finish()
    });
    let n = RNG_COUNTER.fetch_add(1, AtomicOrdering::Relaxed);
    let mut z = seed.wrapping_add(n.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CoreError;
    use crate::version::py_gt;

    #[test]
    fn float_repr_matches_python() {
        // Expected strings are Python's repr / f"{x:016}" of the same floats.
        assert_eq!(py_float_repr(0.5), "0.5");
        assert_eq!(py_float_repr(0.5233261930594038), "0.5233261930594038");
        assert_eq!(py_float_repr(1e-05), "1e-05");
        assert_eq!(py_float_repr(1.5e-05), "1.5e-05");
        assert_eq!(py_float_repr(0.0001), "0.0001");
        assert_eq!(py_float_repr(0.0), "0.0");
        assert_eq!(py_float_repr(1.0), "1.0");
        assert_eq!(py_float_repr(1e16), "1e+16");
        assert_eq!(py_float_repr(123.25), "123.25");
        assert_eq!(format_float_016(0.5), "00000000000000.5");
        // (zeros go after the sign, as in f"{-0.5:016}")
        assert_eq!(format_float_016(-0.5), "-0000000000000.5");
        assert_eq!(format_float_016(-1e-05), "-00000000001e-05");
        let mut s = String::from("7.");
        push_float_016(&mut s, 0.25);
        assert_eq!(s, "7.0000000000000.25");
        assert_eq!(format_float_016(1e-05), "000000000001e-05");
        assert_eq!(format_float_016(0.48933361276606724), "0.48933361276606724");
    }

    #[test]
    fn float_repr_fast_path_agrees() {
        let mut xs: Vec<f64> = (0..20000).map(|_| random_unit()).collect();
        xs.extend([
            1e-4,
            0.00010000000000000002,
            0.1,
            0.3,
            0.9999999999999999,
            0.5,
        ]);
        for x in xs {
            if (1e-4..1.0).contains(&x) {
                assert_eq!(py_float_repr(x), py_float_repr_general(x), "{x:e}");
                assert_eq!(py_float_repr(-x), py_float_repr_general(-x));
            }
        }
    }

    #[test]
    fn split_saver_version_round_trips_only_exact_strings() {
        let v = "00000000000000000000000000000002.0.4892038331441415";
        assert_eq!(split_saver_version(v), Some((2, 0.4892038331441415)));
        let padded = "00000000000000000000000000000001.00000000000000.5";
        assert_eq!(split_saver_version(padded), Some((1, 0.5)));
        let big = "00000000000018446744073709551615.0.1234567890123456";
        assert_eq!(
            split_saver_version(big),
            Some((u64::MAX, 0.1234567890123456))
        );
        // beyond msgpack's integers: kept as a string
        let bigger = "00000000000018446744073709551616.0.1234567890123456";
        assert_eq!(split_saver_version(bigger), None);
        for other in [
            "00000000000000000000000000000002.0.48920383314414150", // not shortest
            "0000000000000000000000000000002.0.4892038331441415",   // 31 digits
            "00000000000000000000000000000002,0.4892038331441415",
            "0000000000000000000000000000000x.0.4892038331441415",
            "00000000000000000000000000000002.0000000000000000.5", // over-padded
            "00000000000000000000000000000002.           0.5e-1",
            "short",
            "",
        ] {
            assert_eq!(split_saver_version(other), None, "{other}");
        }
        // every packed form formats back to its string
        for i in 0..1000u64 {
            let r = random_unit();
            let s = format!("{:032}.{}", i * 7919, format_float_016(r));
            let (n, back) = split_saver_version(&s).expect(&s);
            assert_eq!(format!("{n:032}.{}", format_float_016(back)), s);
        }
    }

    #[test]
    fn saver_versions() {
        let v: Version = next_saver_version::<()>(None, 0.5).unwrap();
        assert!(
            matches!(&v, Version::Str(s) if &**s == "00000000000000000000000000000001.00000000000000.5")
        );
        let v2 = next_saver_version::<()>(Some(&v), 0.25).unwrap();
        assert!(
            matches!(&v2, Version::Str(s) if s.starts_with("00000000000000000000000000000002."))
        );
        let v3 = next_saver_version::<()>(Some(&Version::Int(7)), 0.1).unwrap();
        assert!(
            matches!(&v3, Version::Str(s) if s.starts_with("00000000000000000000000000000008."))
        );
        assert!(py_gt::<()>(Some(&v2), Some(&v)).unwrap());
        assert!(matches!(
            next_saver_version::<()>(Some(&Version::str("x.1")), 0.1),
            Err(CoreError::InvalidArgument(_))
        ));
    }

    #[test]
    fn saver_version_integer_part_is_padded_like_python() {
        // f"{n:032}" for n = current + 1, with the sign before the zeros
        let cases: [i128; 6] = [0, 8, -2, -12345, 10_i128.pow(33), i128::MAX - 1];
        for current in cases {
            let v = next_saver_version::<()>(Some(&Version::str(&format!("{current}.5"))), 0.5)
                .unwrap();
            let n = current + 1;
            let want = if n < 0 {
                format!("-{:031}.00000000000000.5", -n)
            } else {
                format!("{n:032}.00000000000000.5")
            };
            assert!(
                matches!(&v, Version::Str(s) if **s == *want),
                "{current}: {v:?}"
            );
        }
    }

    #[test]
    fn random_in_unit_interval() {
        for _ in 0..1000 {
            let r = random_unit();
            assert!((0.0..1.0).contains(&r));
        }
    }
}
