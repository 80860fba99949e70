//! UUIDv6 checkpoint ids with LangGraph's layout (`langgraph.checkpoint.base.id.uuid6`).
//!
//! 100-ns timestamp since 1582-10-15, strictly increasing within the process; the 14-bit
//! clock sequence carries the step (`step & 0x3FFF`); a random 48-bit node.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::ids::format_uuid_hex;

/// 100-ns intervals between the UUID epoch (1582-10-15) and the Unix epoch.
const UUID_EPOCH_OFFSET: u64 = 0x01B2_1DD2_1381_4000;
const MASK_48: u64 = 0xFFFF_FFFF_FFFF;

static LAST_TIMESTAMP: AtomicU64 = AtomicU64::new(0);
static RNG_COUNTER: AtomicU64 = AtomicU64::new(0);
static RNG_SEED: OnceLock<u64> = OnceLock::new();

fn now_ticks() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    (nanos / 100) as u64 + UUID_EPOCH_OFFSET
}

/// The next timestamp: the current time, or one tick after the last one handed out.
pub fn next_timestamp() -> u64 {
    let now = now_ticks();
    let mut last = LAST_TIMESTAMP.load(Ordering::Relaxed);
    loop {
        let next = if now > last { now } else { last + 1 };
        match LAST_TIMESTAMP.compare_exchange_weak(last, next, Ordering::AcqRel, Ordering::Relaxed)
        {
            Ok(_) => return next,
            Err(seen) => last = seen,
        }
    }
}

fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// 64 pseudo-random bits (splitmix64 over an atomic counter, seeded from time, pid, address).
pub fn random_u64() -> u64 {
    let seed = *RNG_SEED.get_or_init(|| {
        let local = 0u8;
        let addr = &local as *const u8 as u64;
        splitmix64(now_ticks() ^ (u64::from(std::process::id()) << 32) ^ addr.rotate_left(17))
    });
    let n = RNG_COUNTER.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
    splitmix64(seed.wrapping_add(n))
}

/// Canonical string of the UUIDv6 with the given timestamp, clock sequence and node.
pub fn uuid6_from_parts(timestamp: u64, clock_seq: u64, node: u64) -> String {
    format_uuid_hex(&uuid6_bytes_from_parts(timestamp, clock_seq, node))
}

/// The 16 bytes of the UUIDv6 [`uuid6_from_parts`] writes.
pub fn uuid6_bytes_from_parts(timestamp: u64, clock_seq: u64, node: u64) -> [u8; 16] {
    let mut value: u128 = u128::from((timestamp >> 12) & MASK_48) << 80;
    value |= u128::from(timestamp & 0x0FFF) << 64;
    value |= u128::from(clock_seq & 0x3FFF) << 48;
    value |= u128::from(node & MASK_48);
    // version 6
    value = (value & !(0xF000u128 << 64)) | (6u128 << 76);
    // RFC 4122 variant
    value = (value & !(0xC000u128 << 48)) | (0x8000u128 << 48);
    value.to_be_bytes()
}

/// A fresh checkpoint id. `clock_seq` is the step (`-1` -> `0x3FFF`); `None` picks 14 random bits.
pub fn uuid6(clock_seq: Option<i64>) -> String {
    uuid6_with_bytes(clock_seq).0
}

/// [`uuid6`] and its 16 raw bytes (what `ids::checkpoint_id_bytes` decodes it to).
pub fn uuid6_with_bytes(clock_seq: Option<i64>) -> (String, [u8; 16]) {
    let ts = next_timestamp();
    let seq = match clock_seq {
        // two's complement keeps Python's `clock_seq & 0x3FFF` for negative steps
        Some(s) => (s as u64) & 0x3FFF,
        None => random_u64() & 0x3FFF,
    };
    let raw = uuid6_bytes_from_parts(ts, seq, random_u64() & MASK_48);
    (format_uuid_hex(&raw), raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid6_bytes_are_the_decoded_id() {
        for seq in [Some(0), Some(7), Some(-1), None] {
            let (id, raw) = uuid6_with_bytes(seq);
            assert_eq!(crate::ids::checkpoint_id_bytes(&id).unwrap(), raw.to_vec());
        }
    }

    // Expected strings computed once with the reference bit layout
    // (`langgraph.checkpoint.base.id.UUID(int=..., version=6)`) and pasted here.
    #[test]
    fn layout_matches_reference() {
        let ts = 0x01F0_A3C2_5B6D_6E7F;
        // (clock sequence, random bits, the reference's string)
        let rows: [(u64, u64, &str); 4] = [
            (
                (-1i64) as u64,
                0x0123_4567_89AB,
                "1f0a3c25-b6d6-6e7f-bfff-0123456789ab",
            ),
            (0, 0xFFFF_FFFF_FFFF, "1f0a3c25-b6d6-6e7f-8000-ffffffffffff"),
            ((-2i64) as u64, 0, "1f0a3c25-b6d6-6e7f-bffe-000000000000"),
            (16385, 5, "1f0a3c25-b6d6-6e7f-8001-000000000005"),
        ];
        for (seq, random, expected) in rows {
            assert_eq!(uuid6_from_parts(ts, seq, random), expected, "seq {seq}");
        }
    }

    #[test]
    fn ids_increase_strictly_across_threads() {
        let handles: Vec<_> = (0..4)
            .map(|_| std::thread::spawn(|| (0..500).map(|_| next_timestamp()).collect::<Vec<_>>()))
            .collect();
        let mut all: Vec<u64> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "timestamps must be unique");

        let mut prev = uuid6(Some(0));
        for step in 0..1000 {
            let next = uuid6(Some(step));
            assert!(next > prev, "{next} <= {prev}");
            assert_eq!(&next[14..15], "6");
            prev = next;
        }
    }

    #[test]
    fn clock_seq_carries_step() {
        assert_eq!(&uuid6(Some(-1))[19..23], "bfff");
        assert_eq!(&uuid6(Some(0))[19..23], "8000");
        assert_eq!(&uuid6(Some(1))[19..23], "8001");
        assert_eq!(&uuid6(Some(-2))[19..23], "bffe");
        let r = uuid6(None);
        assert!(matches!(&r[19..20], "8" | "9" | "a" | "b"));
    }
}
