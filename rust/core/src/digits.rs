//! Decimal digits written without the formatting machinery (`format!` costs several times
//! more), for text made once per super-step: version counters, step numbers, timestamps.

/// `n` in decimal, at the end of `buf`; returns where its digits start.
fn write(n: u128, buf: &mut [u8; 40]) -> usize {
    let mut i = buf.len();
    let mut rest = n;
    // in u64 once it fits: a u128 division is a library call, dozens of times slower
    while rest > u128::from(u64::MAX) {
        i -= 1;
        buf[i] = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    let mut small = rest as u64;
    loop {
        i -= 1;
        buf[i] = b'0' + (small % 10) as u8;
        small /= 10;
        if small == 0 {
            return i;
        }
    }
}

/// Appends `n` in decimal, zero-padded to at least `width` digits (`{n:0width$}`).
pub fn push_padded(s: &mut String, n: u128, width: usize) {
    let mut buf = [b'0'; 40];
    let start = write(n, &mut buf);
    let digits = buf.len() - start;
    if width > buf.len() {
        s.extend(std::iter::repeat_n('0', width - buf.len()));
    }
    let from = buf.len() - digits.max(width.min(buf.len()));
    // (ASCII digits, and the zeros `buf` starts with)
    s.push_str(std::str::from_utf8(&buf[from..]).unwrap_or_default());
}

/// Appends `n` in decimal (`str(n)`).
pub fn push_i64(s: &mut String, n: i64) {
    if n < 0 {
        s.push('-');
    }
    push_padded(s, u128::from(n.unsigned_abs()), 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_format() {
        for n in [
            0u128,
            7,
            10,
            99_999,
            u128::from(u64::MAX),
            u128::from(u64::MAX) + 1,
            u128::MAX,
        ] {
            for width in [0, 1, 2, 6, 32, 45] {
                let mut s = String::from("x");
                push_padded(&mut s, n, width);
                assert_eq!(s, format!("x{n:0width$}"));
            }
        }
        for n in [0i64, -1, 42, i64::MIN, i64::MAX] {
            let mut s = String::new();
            push_i64(&mut s, n);
            assert_eq!(s, n.to_string());
        }
    }
}
