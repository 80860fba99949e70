//! Small index structures that let a super-step touch only what it changes.

/// An append-only log of changed slots with absolute positions, so several readers can each
/// ask "what changed since position p" in O(changes).
#[derive(Debug, Default, Clone)]
pub struct ChangeLog {
    base: usize,
    entries: Vec<usize>,
}

impl ChangeLog {
    pub fn push(&mut self, slot: usize) {
        self.entries.push(slot);
    }
    /// The position after the last entry.
    pub fn pos(&self) -> usize {
        self.base + self.entries.len()
    }
    /// Number of retained entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    /// The slots changed since `pos` (`None` when that part of the log was dropped).
    pub fn since(&self, pos: usize) -> Option<&[usize]> {
        if pos < self.base || pos > self.pos() {
            return None;
        }
        Some(&self.entries[pos - self.base..])
    }
    /// Drops the entries before `pos`.
    pub fn trim(&mut self, pos: usize) {
        let pos = pos.clamp(self.base, self.pos());
        self.entries.drain(..pos - self.base);
        self.base = pos;
    }
}

/// A per-channel set of indices with O(1) insert and membership.
#[derive(Debug, Default)]
pub(crate) struct IndexSet {
    pub(crate) items: Vec<usize>,
    member: Vec<bool>,
    sorted: bool,
}

impl IndexSet {
    pub(crate) fn new(n: usize) -> Self {
        IndexSet {
            items: Vec::new(),
            member: vec![false; n],
            sorted: true,
        }
    }
    pub(crate) fn insert(&mut self, c: usize) {
        if !self.member[c] {
            self.member[c] = true;
            if self.items.last().is_some_and(|&l| l > c) {
                self.sorted = false;
            }
            self.items.push(c);
        }
    }
    /// The members in ascending order.
    pub(crate) fn sorted(&mut self) -> &[usize] {
        if !self.sorted {
            self.items.sort_unstable();
            self.sorted = true;
        }
        &self.items
    }
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(usize) -> bool) {
        let member = &mut self.member;
        self.items.retain(|&c| {
            let k = keep(c);
            if !k {
                member[c] = false;
            }
            k
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_log_readers_and_trim() {
        let mut log = ChangeLog::default();
        log.push(3);
        let p = log.pos();
        log.push(1);
        log.push(3);
        assert_eq!(log.since(0), Some(&[3, 1, 3][..]));
        assert_eq!(log.since(p), Some(&[1, 3][..]));
        log.trim(p);
        assert_eq!(log.since(0), None);
        assert_eq!(log.since(p), Some(&[1, 3][..]));
        assert_eq!(log.len(), 2);
        log.trim(log.pos());
        assert!(log.is_empty() && log.since(3) == Some(&[][..]));
    }

    #[test]
    fn index_set_sorted_and_retain() {
        let mut s = IndexSet::new(6);
        for c in [4, 1, 4, 5] {
            s.insert(c);
        }
        assert_eq!(s.sorted(), &[1, 4, 5]);
        s.retain(|c| c != 4);
        assert_eq!(s.sorted(), &[1, 5]);
        s.insert(4);
        assert_eq!(s.sorted(), &[1, 4, 5]);
    }
}
