//! The barrier channels' state (`NamedBarrierValue`, `NamedBarrierValueAfterFinish`): which
//! names arrived, in what order, and how a checkpointed set of them is restored and written
//! again so that it iterates like LangGraph's.
use super::ValueOps;
use crate::error::{CoreError, CoreResult};

/// A barrier's received names. `seen[i]`: `names[i]` received; `extra`: restored names not
/// among `names` (the barrier then never completes, as in LangGraph); `order`: the insertion
/// order of the seen set (`i < names.len()` is `names[i]`, else an extra), so a checkpointed
/// set iterates like LangGraph's. `base`: the restored set object (LangGraph keeps adding to
/// it, so its table layout decides the iteration order), which holds the first `base_len`
/// entries of `order`.
#[derive(Debug)]
pub struct Barrier<V> {
    seen: Vec<bool>,
    count: usize,
    extra: Vec<V>,
    finished: bool,
    order: Vec<usize>,
    base: Option<V>,
    base_len: usize,
}

/// What a barrier's checkpoint holds (see [`Barrier::checkpoint`]).
pub struct BarrierCheckpoint<'a, V> {
    /// The restored set to copy and add to (None: a new set).
    pub base: Option<&'a V>,
    /// The after-finish flag (the checkpoint is `(set, finished)` for an after-finish
    /// barrier; None: a plain barrier, whose checkpoint is the set).
    pub finished: Option<bool>,
    added: &'a [usize],
    names: &'a [V],
    extra: &'a [V],
}

impl<'a, V> BarrierCheckpoint<'a, V> {
    /// The names to add to `base` (or to a new set), in LangGraph's insertion order.
    pub fn added(&self) -> impl Iterator<Item = &'a V> + '_ {
        self.added.iter().map(|&i| match self.names.get(i) {
            Some(n) => n,
            None => &self.extra[i - self.names.len()],
        })
    }
}

impl<V> Barrier<V> {
    /// Nothing received, for a barrier over `n_names` names.
    pub(crate) fn new(n_names: usize) -> Self {
        Barrier {
            seen: vec![false; n_names],
            count: 0,
            extra: Vec::new(),
            finished: false,
            order: Vec::new(),
            base: None,
            base_len: 0,
        }
    }

    /// Records `names[i]` received; whether it is new.
    fn mark(&mut self, i: usize) -> bool {
        if self.seen[i] {
            return false;
        }
        self.seen[i] = true;
        self.count += 1;
        self.order.push(i);
        true
    }

    /// Every name received, and no other.
    fn complete(&self) -> bool {
        self.count == self.seen.len() && self.extra.is_empty()
    }

    /// `update(values)`: each value must be one of `names` (else LangGraph's InvalidUpdate).
    pub(crate) fn update<O: ValueOps<V = V>>(
        &mut self,
        key: &str,
        (names, names_obj, lookup): (&[V], &V, Option<&V>),
        values: &[V],
        ops: &O,
    ) -> CoreResult<bool, O::Err> {
        let mut updated = false;
        for v in values {
            match ops
                .name_index(names, names_obj, lookup, v)
                .map_err(CoreError::External)?
            {
                Some(i) => updated |= self.mark(i),
                None => {
                    return Err(CoreError::InvalidUpdate(
                        ops.unknown_name_message(key, v, names_obj),
                    ))
                }
            }
        }
        Ok(updated)
    }

    /// `consume()`: a complete barrier (after finish, for an after-finish one) starts over.
    pub(crate) fn consume(&mut self, after_finish: bool) -> bool {
        if self.complete() && (!after_finish || self.finished) {
            *self = Barrier::new(self.seen.len());
            return true;
        }
        false
    }

    /// `finish()` of an after-finish barrier: marks a complete one finished.
    pub(crate) fn finish(&mut self) -> bool {
        if !self.finished && self.complete() {
            self.finished = true;
            return true;
        }
        false
    }

    /// `is_available()`.
    pub(crate) fn is_available(&self, after_finish: bool) -> bool {
        self.complete() && (self.finished || !after_finish)
    }

    /// `copy()` (values shared through `clone`, containers duplicated).
    pub(crate) fn copy(&self, clone: impl Fn(&V) -> V) -> Self {
        Barrier {
            seen: self.seen.clone(),
            count: self.count,
            extra: self.extra.iter().map(&clone).collect(),
            finished: self.finished,
            order: self.order.clone(),
            base: self.base.as_ref().map(&clone),
            base_len: self.base_len,
        }
    }

    /// The state restored from a checkpointed set, for the barrier over `names` (with the
    /// kind's `names_obj` and `lookup`): `items` are the set's names in iteration order (one
    /// not among `names` is kept as an extra), `finished` an after-finish barrier's flag
    /// (false for a plain one), `base` the set object when it is kept to be added to
    /// (LangGraph keeps adding to the restored set, whose table layout then decides the
    /// iteration order).
    pub fn restore<O: ValueOps<V = V>>(
        (names, names_obj, lookup): (&[V], &V, Option<&V>),
        items: impl IntoIterator<Item = Result<V, O::Err>>,
        finished: bool,
        base: Option<V>,
        ops: &O,
    ) -> Result<Self, O::Err> {
        let mut b = Barrier::new(names.len());
        for item in items {
            let item = item?;
            match ops.name_index(names, names_obj, lookup, &item)? {
                Some(i) => {
                    b.mark(i);
                }
                None => {
                    b.order.push(names.len() + b.extra.len());
                    b.extra.push(item);
                }
            }
        }
        b.finished = finished;
        b.base_len = b.order.len();
        b.base = base;
        Ok(b)
    }

    /// What its checkpoint holds, for the barrier over `names`: the restored set (if kept) and
    /// the names received since, or all of them in the order they came.
    pub fn checkpoint<'a>(
        &'a self,
        names: &'a [V],
        after_finish: bool,
    ) -> BarrierCheckpoint<'a, V> {
        let added = match self.base {
            Some(_) => &self.order[self.base_len..],
            None => &self.order[..],
        };
        BarrierCheckpoint {
            base: self.base.as_ref(),
            finished: after_finish.then_some(self.finished),
            added,
            names,
            extra: &self.extra,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{barrier_kind, s, spec, TestOps, Val};
    use super::super::{Kind, State};
    use super::*;

    fn barrier(after_finish: bool) -> crate::channel::ChannelSpec<Val> {
        spec("join", barrier_kind(&["a", "b"], after_finish))
    }

    fn restored(c: &crate::channel::ChannelSpec<Val>, items: &[Val], base: bool) -> State<Val> {
        let Kind::Barrier {
            names, names_obj, ..
        } = &c.kind
        else {
            unreachable!()
        };
        let items = items.iter().cloned().map(Ok);
        let base = base.then(|| Val::Str("the set".into()));
        let b = Barrier::restore((names, names_obj, None), items, false, base, &TestOps).unwrap();
        State::Barrier(b)
    }

    fn checkpoint(c: &crate::channel::ChannelSpec<Val>, st: &State<Val>) -> (bool, Vec<Val>) {
        let (Kind::Barrier { names, .. }, State::Barrier(b)) = (&c.kind, st) else {
            unreachable!()
        };
        let ck = b.checkpoint(names, false);
        (ck.base.is_some(), ck.added().cloned().collect())
    }

    #[test]
    fn a_restored_set_is_kept_and_later_names_added_in_order() {
        let c = barrier(false);
        let mut st = restored(&c, &[s("b")], true);
        assert_eq!(checkpoint(&c, &st), (true, vec![]));
        assert!(!c.update(&mut st, vec![s("b")], &TestOps).unwrap()); // (had it)
        assert!(c.update(&mut st, vec![s("a")], &TestOps).unwrap());
        assert_eq!(checkpoint(&c, &st), (true, vec![s("a")]));
        assert!(c.is_available(&st, &TestOps).unwrap());
        // consumed: it starts over, with a new set
        assert!(c.consume(&mut st, &TestOps).unwrap());
        assert_eq!(checkpoint(&c, &st), (false, vec![]));
        c.update(&mut st, vec![s("b"), s("a")], &TestOps).unwrap();
        assert_eq!(checkpoint(&c, &st), (false, vec![s("b"), s("a")]));
    }

    #[test]
    fn a_restored_unknown_name_is_kept_and_the_barrier_never_completes() {
        let c = barrier(false);
        let mut st = restored(&c, &[s("b"), s("zz"), s("a"), s("b")], false);
        assert_eq!(checkpoint(&c, &st), (false, vec![s("b"), s("zz"), s("a")]));
        assert!(!c.is_available(&st, &TestOps).unwrap());
        assert!(!c.consume(&mut st, &TestOps).unwrap());
        // a copy holds the same names in the same order
        let copy = c.copy_state(&st, &TestOps).unwrap();
        assert_eq!(checkpoint(&c, &copy), checkpoint(&c, &st));
    }

    #[test]
    fn an_after_finish_barrier_checkpoints_its_flag() {
        let c = barrier(true);
        let mut st = c.empty_state(&TestOps);
        c.update(&mut st, vec![s("a"), s("b")], &TestOps).unwrap();
        let flag = |st: &State<Val>| {
            let (Kind::Barrier { names, .. }, State::Barrier(b)) = (&c.kind, st) else {
                unreachable!()
            };
            b.checkpoint(names, true).finished
        };
        assert_eq!(flag(&st), Some(false));
        assert!(c.finish(&mut st, &TestOps).unwrap());
        assert!(!c.finish(&mut st, &TestOps).unwrap());
        assert_eq!(flag(&st), Some(true));
        assert!(c.consume(&mut st, &TestOps).unwrap());
        assert_eq!(flag(&st), Some(false));
    }
}
