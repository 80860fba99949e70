//! Task ids and task path strings, byte-compatible with LangGraph's `prepare_single_task`.
//!
//! A task id hashes the raw bytes of the current checkpoint id followed by the task's
//! identifying parts (concatenated without separator): XXH3-128 for checkpoint format
//! `v > 1`, SHA-1 (first 128 bits) for older formats. The 32 hex digits are grouped 8-4-4-4-12.

use std::fmt;

use xxhash_rust::xxh3::xxh3_128;

/// A malformed checkpoint id (not an even-length hex string once dashes are removed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdError {
    /// Human-readable reason naming the offending value.
    pub message: String,
}

impl fmt::Display for IdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for IdError {}

/// What `write_path` needs to know of a task path element.
pub enum Element<I> {
    /// A tuple or list, with its items: written `"~" + ", ".join(items)`.
    Seq(I),
    /// An int (a bool as 0 / 1): zero-padded to width 10 after the sign, `f"{i:010d}"`.
    Int(i64),
    /// An int beyond 64 bits, as its decimal digits (sign first): padded the same way.
    BigInt(String),
    /// Anything else: written by `PathElement::write_text` (LangGraph's `str()`).
    Text,
}

/// A task path element the formatter can walk (core values, or the binding's Python ones).
pub trait PathElement: Sized {
    type Error;
    type Items: Iterator<Item = Result<Self, Self::Error>>;
    fn element(&self) -> Result<Element<Self::Items>, Self::Error>;
    /// Appends its text (called for `Element::Text` only).
    fn write_text(&self, out: &mut String) -> Result<(), Self::Error>;
}

/// Appends LangGraph's `task_path_str` form of a task path (or path element) to `out`: the
/// sort key of tasks in `apply_writes`, and a part of a `Call` task's id.
pub fn write_path<P: PathElement>(part: &P, out: &mut String) -> Result<(), P::Error> {
    match part.element()? {
        Element::Seq(items) => {
            out.push('~');
            for (i, item) in items.enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_path(&item?, out)?;
            }
        }
        Element::Int(i) => write_int(i, out),
        Element::BigInt(digits) => write_digits(&digits, out),
        Element::Text => part.write_text(out)?,
    }
    Ok(())
}

/// `f"{i:010d}"`: Rust's `{:010}` pads after the sign like Python's; infallible on String.
fn write_int(i: i64, out: &mut String) {
    use std::fmt::Write;
    let _ = write!(out, "{i:010}");
}

/// `f"{i:010d}"` of the int whose decimal digits (sign first) are `digits`.
fn write_digits(digits: &str, out: &mut String) {
    let body = digits.strip_prefix('-').unwrap_or(digits);
    let sign = &digits[..digits.len() - body.len()];
    out.push_str(sign);
    for _ in digits.len()..10 {
        out.push('0');
    }
    out.push_str(body);
}

const fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// The raw bytes of a checkpoint id (`binascii.unhexlify(id.replace("-", ""))`).
pub fn checkpoint_id_bytes(checkpoint_id: &str) -> Result<Vec<u8>, IdError> {
    let mut out = Vec::new();
    checkpoint_id_bytes_into(checkpoint_id, &mut out)?;
    Ok(out)
}

/// [`checkpoint_id_bytes`] into a reused buffer (cleared first), in one pass. As with
/// `binascii.unhexlify`, an odd number of digits is reported before a non-hex digit.
pub fn checkpoint_id_bytes_into(checkpoint_id: &str, out: &mut Vec<u8>) -> Result<(), IdError> {
    out.clear();
    out.reserve(checkpoint_id.len() / 2);
    // digit values by byte (0xFF: not a digit, 0xFE: the dash that is skipped)
    let mut high = 0u8;
    let mut odd = false;
    let mut bad = false;
    for &b in checkpoint_id.as_bytes() {
        let d = HEX_VAL[b as usize];
        if d == 0xFE {
            continue;
        }
        bad |= d == 0xFF;
        if odd {
            out.push((high << 4) | (d & 0x0F));
        } else {
            high = d & 0x0F;
        }
        odd = !odd;
    }
    if odd {
        return Err(IdError {
            message: format!("invalid checkpoint id {checkpoint_id:?}: odd number of hex digits"),
        });
    }
    if bad {
        return Err(IdError {
            message: format!(
                "invalid checkpoint id {checkpoint_id:?}: non-hexadecimal digit found"
            ),
        });
    }
    Ok(())
}

/// `hex_val` by byte: 0-15 for hex digits, 0xFE for '-', 0xFF otherwise.
const HEX_VAL: [u8; 256] = {
    let mut t = [0xFFu8; 256];
    let mut i = 0;
    while i < 256 {
        if let Some(v) = hex_val(i as u8) {
            t[i] = v;
        }
        i += 1;
    }
    t[b'-' as usize] = 0xFE;
    t
};

/// `prefix` followed by `n` as 12 lowercase hex digits (zero-padded; `n` < 2^48).
pub fn id_with_hex12(prefix: &str, n: u64) -> String {
    let mut out = String::with_capacity(prefix.len() + 12);
    out.push_str(prefix);
    let mut digits = [0u8; 12];
    for (i, d) in digits.iter_mut().enumerate() {
        *d = HEX[((n >> (4 * (11 - i))) & 0xF) as usize];
    }
    // the digits are ASCII
    out.push_str(std::str::from_utf8(&digits).unwrap_or_default());
    out
}

/// Task id over pre-decoded checkpoint id bytes (see [`checkpoint_id_bytes`]).
pub fn task_id_from_bytes<P: AsRef<[u8]>>(ns: &[u8], parts: &[P], v: i64) -> String {
    let ascii = task_id_ascii(ns, parts, v);
    // All 36 bytes are ASCII hex digits and dashes.
    ascii.iter().map(|&b| b as char).collect()
}

/// [`task_id_from_bytes`] as 36 ASCII bytes, hashing from a stack buffer when it fits.
pub fn task_id_ascii<P: AsRef<[u8]>>(ns: &[u8], parts: &[P], v: i64) -> [u8; 36] {
    if v > 1 {
        let total = ns.len() + parts.iter().map(|p| p.as_ref().len()).sum::<usize>();
        let hash = if total <= 128 {
            let mut buf = [0u8; 128];
            buf[..ns.len()].copy_from_slice(ns);
            let mut at = ns.len();
            for p in parts {
                let p = p.as_ref();
                buf[at..at + p.len()].copy_from_slice(p);
                at += p.len();
            }
            xxh3_128(&buf[..at])
        } else {
            let mut buf = Vec::with_capacity(total);
            buf.extend_from_slice(ns);
            for p in parts {
                buf.extend_from_slice(p.as_ref());
            }
            xxh3_128(&buf)
        };
        uuid_hex_ascii(&hash.to_be_bytes())
    } else {
        let mut sha = sha1_smol::Sha1::new();
        sha.update(ns);
        for p in parts {
            sha.update(p.as_ref());
        }
        let digest = sha.digest().bytes();
        let mut b = [0u8; 16];
        b.copy_from_slice(&digest[..16]);
        uuid_hex_ascii(&b)
    }
}

/// 16 bytes as lowercase hex grouped 8-4-4-4-12, in ASCII.
fn uuid_hex_ascii(bytes: &[u8; 16]) -> [u8; 36] {
    let mut out = [b'-'; 36];
    // Output position of each byte's two digits.
    const AT: [usize; 16] = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
    for (b, &at) in bytes.iter().zip(AT.iter()) {
        out[at] = HEX[(b >> 4) as usize];
        out[at + 1] = HEX[(b & 0xF) as usize];
    }
    out
}

/// Task id as LangGraph computes it in `prepare_single_task` (`v` is the checkpoint's `"v"`).
pub fn task_id<P: AsRef<[u8]>>(
    checkpoint_id: &str,
    parts: &[P],
    v: i64,
) -> Result<String, IdError> {
    let ns = checkpoint_id_bytes(checkpoint_id)?;
    Ok(task_id_from_bytes(&ns, parts, v))
}

/// `xxh3_128_hexdigest(data)`: 32 lowercase hex digits (interrupt ids, namespace hashes).
pub fn xxh3_128_hex(data: &[u8]) -> String {
    format!("{:032x}", xxh3_128(data))
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Formats 16 bytes as lowercase hex grouped 8-4-4-4-12.
pub fn format_uuid_hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(36);
    for (i, b) in bytes.iter().take(16).enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        out.push(HEX[(b >> 4) as usize] as char);
        out.push(HEX[(b & 0xF) as usize] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    /// A task path in plain Rust values, walked by `write_path` as the binding walks Python's.
    #[derive(Debug, Clone)]
    enum PathPart {
        Str(String),
        Int(i64),
        /// An int beyond 64 bits, as its decimal digits.
        Big(String),
        Tuple(Vec<PathPart>),
    }

    impl<'a> PathElement for &'a PathPart {
        type Error = std::convert::Infallible;
        type Items = std::iter::Map<
            std::slice::Iter<'a, PathPart>,
            fn(&'a PathPart) -> Result<&'a PathPart, Self::Error>,
        >;
        fn element(&self) -> Result<Element<Self::Items>, Self::Error> {
            Ok(match self {
                PathPart::Str(_) => Element::Text,
                PathPart::Int(i) => Element::Int(*i),
                PathPart::Big(d) => Element::BigInt(d.clone()),
                PathPart::Tuple(t) => Element::Seq(t.iter().map(Ok as fn(_) -> _)),
            })
        }
        fn write_text(&self, out: &mut String) -> Result<(), Self::Error> {
            if let PathPart::Str(s) = self {
                out.push_str(s);
            }
            Ok(())
        }
    }

    fn path_str(part: &PathPart) -> String {
        let mut out = String::new();
        let Ok(()) = write_path(&part, &mut out);
        out
    }

    use super::*;

    #[test]
    fn id_with_hex12_formats_like_the_format_macro() {
        for n in [0u64, 1, 0xABC, 0xFFFF_FFFF_FFFF, 123_456_789] {
            assert_eq!(id_with_hex12("pre-", n), format!("pre-{n:012x}"));
        }
    }

    #[test]
    fn checkpoint_id_bytes_reports_like_unhexlify() {
        let mut out = Vec::new();
        checkpoint_id_bytes_into("1f0-A9b", &mut out).unwrap();
        assert_eq!(out, vec![0x1f, 0x0a, 0x9b]);
        let odd = checkpoint_id_bytes_into("abc", &mut out).unwrap_err();
        assert!(odd.message.contains("odd number"), "{}", odd.message);
        // an odd count is reported before a non-hex digit, as binascii does
        let both = checkpoint_id_bytes_into("axc", &mut out).unwrap_err();
        assert!(both.message.contains("odd number"), "{}", both.message);
        let bad = checkpoint_id_bytes_into("zz", &mut out).unwrap_err();
        assert!(bad.message.contains("non-hexadecimal"), "{}", bad.message);
    }

    // Expected values below were computed once with the reference
    // (langgraph 1.2.24: `_xxhash_str`, `_uuid5_str`, `task_path_str`, xxhash) and pasted here.
    const CID: &str = "1f0a3c2e-5b6d-6e7f-8001-0123456789ab";

    /// The parts of a pull task's id, as the loop passes them.
    const PULL_PARTS: &[&str] = &[
        "agent",
        "1",
        "agent",
        "__pregel_pull",
        "branch:to:agent",
        "messages",
    ];

    /// Each row: (checkpoint id, parts, id version, the reference's id).
    fn assert_task_ids(rows: &[(&str, &[&str], i64, &str)]) {
        for &(cid, parts, version, expected) in rows {
            assert_eq!(
                task_id(cid, parts, version).unwrap(),
                expected,
                "{cid} {parts:?} v{version}"
            );
        }
    }

    #[test]
    fn xxh3_task_id_matches_reference() {
        assert_task_ids(&[
            (CID, PULL_PARTS, 4, "7753e814-725e-8517-6274-5cada53e2928"),
            (CID, &[], 2, "f403a7c5-e06d-d106-93dc-41633ee264f2"),
            (CID, &["né", "0"], 4, "0e623e62-7d31-621d-3ed4-4ac66a3f5ec3"),
            ("AB-CD", &["x"], 4, "ab059523-1cbc-6dc1-f23c-c5dfb403882c"),
        ]);
    }

    #[test]
    fn sha1_task_id_matches_reference() {
        assert_task_ids(&[
            (CID, PULL_PARTS, 1, "63aa7a8c-797f-7373-8c4f-46688386bfdf"),
            (CID, &[], 0, "22e304ca-1336-370d-912f-c148fbaeb563"),
        ]);
    }

    #[test]
    fn malformed_checkpoint_ids_are_errors() {
        assert!(task_id("abc", &["x"], 4).is_err());
        assert!(task_id("zz", &["x"], 4).is_err());
        assert!(task_id("é0", &["x"], 4).is_err());
        assert_eq!(checkpoint_id_bytes("").unwrap(), Vec::<u8>::new());
        // Like binascii.unhexlify: odd length wins over a bad digit, wherever it is.
        let e = checkpoint_id_bytes("zz0").unwrap_err();
        assert!(e.message.ends_with("odd number of hex digits"), "{e}");
        let e = checkpoint_id_bytes("0z-12").unwrap_err();
        assert!(e.message.ends_with("non-hexadecimal digit found"), "{e}");
        assert_eq!(checkpoint_id_bytes("0A-b1").unwrap(), vec![0x0a, 0xb1]);
        let mut buf = vec![9, 9, 9];
        checkpoint_id_bytes_into("ff", &mut buf).unwrap();
        assert_eq!(buf, vec![0xff]);
    }

    #[test]
    fn long_parts_hash_like_short_ones() {
        // Over the stack buffer: same as hashing the concatenation.
        let long = "x".repeat(200);
        let ns = checkpoint_id_bytes(CID).unwrap();
        let mut all = ns.clone();
        all.extend_from_slice(long.as_bytes());
        let want = format_uuid_hex(&xxh3_128(&all).to_be_bytes());
        assert_eq!(task_id_from_bytes(&ns, &[long.as_str()], 4), want);
        assert_eq!(
            task_id_from_bytes(&ns, &[&long[..100], &long[100..]], 4),
            want
        );
    }

    #[test]
    fn interrupt_hash_matches_reference() {
        assert_eq!(
            xxh3_128_hex(b"outer:abc"),
            "8c45b515130400fa3a32b33b5bcbbccd"
        );
    }

    #[test]
    fn task_path_str_matches_reference() {
        use PathPart::*;
        let p = Tuple(vec![
            Str("__pregel_push".into()),
            Tuple(vec![Str("__pregel_pull".into()), Str("a".into())]),
            Int(3),
            Int(1),
        ]);
        assert_eq!(
            path_str(&p),
            "~__pregel_push, ~__pregel_pull, a, 0000000003, 0000000001"
        );
        let p = Tuple(vec![
            Str("__pregel_push".into()),
            Tuple(vec![Int(1), Int(-2), Tuple(vec![])]),
            Int(0),
        ]);
        assert_eq!(
            path_str(&p),
            "~__pregel_push, ~0000000001, -000000002, ~, 0000000000"
        );
        assert_eq!(path_str(&Int(-12345678901)), "-12345678901");
        assert_eq!(path_str(&Int(i64::MIN)), "-9223372036854775808");
    }

    #[test]
    fn big_ints_pad_like_small_ones() {
        // (Python: f"{2**70:010d}", f"{-5:010d}"; digits of any length pad the same way)
        use PathPart::*;
        let p = Tuple(vec![Big("1180591620717411303424".into()), Big("-5".into())]);
        assert_eq!(path_str(&p), "~1180591620717411303424, -000000005");
        for i in [
            0,
            7,
            -7,
            123_456_789,
            -123_456_789,
            9_999_999_999,
            i64::MAX,
            i64::MIN,
        ] {
            assert_eq!(path_str(&Big(i.to_string())), path_str(&Int(i)), "{i}");
        }
    }
}
