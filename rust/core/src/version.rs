//! Channel versions (placeholder, replaced by the engine work).
pub fn increment(current: Option<i64>) -> i64 {
    current.map_or(1, |v| v + 1)
}

#[cfg(test)]
mod tests {
    #[test]
    fn increments() {
        assert_eq!(super::increment(None), 1);
        assert_eq!(super::increment(Some(4)), 5);
    }
}
