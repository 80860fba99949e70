//! Channel state machines over an opaque value type `V`.
//!
//! The built-in LangGraph channel kinds run here natively; the few operations that need to look
//! inside a value (calling a reducer, recognising an `Overwrite`, flattening a list, matching a
//! barrier name) and every operation of a custom channel are supplied by a [`ValueOps`].

use crate::error::{with_error_code, CoreError, CoreResult, INVALID_CONCURRENT_GRAPH_UPDATE};

mod barrier;
pub use barrier::{Barrier, BarrierCheckpoint};

/// What the embedder supplies for values it owns.
pub trait ValueOps {
    /// The value type (a Python object in the binding).
    type V;
    /// The embedder's error type (a Python exception in the binding).
    type Err;

    fn clone_value(&self, v: &Self::V) -> Self::V;
    /// The value a barrier channel's `get()` returns (Python's `None`).
    fn none(&self) -> Self::V;
    /// `reducer(acc, update)`.
    fn reduce(&self, op: &Self::V, acc: &Self::V, update: &Self::V) -> Result<Self::V, Self::Err>;
    /// `Some(inner)` if `v` is an `Overwrite` in any of its accepted forms.
    fn overwrite_value(&self, v: &Self::V) -> Result<Option<Self::V>, Self::Err>;
    /// Topic flattening: a list contributes its items, anything else itself.
    fn flatten_into(&self, v: &Self::V, out: &mut Vec<Self::V>) -> Result<(), Self::Err>;
    /// Position of `v` among a barrier's `names` (`names_obj` is the original collection,
    /// `lookup` the embedder's optional name -> position index built by `Kind::Barrier`'s
    /// creator).
    fn name_index(
        &self,
        names: &[Self::V],
        names_obj: &Self::V,
        lookup: Option<&Self::V>,
        v: &Self::V,
    ) -> Result<Option<usize>, Self::Err>;
    /// LangGraph's message for a barrier update with an unknown name.
    fn unknown_name_message(&self, key: &str, v: &Self::V, names: &Self::V) -> String;

    /// A custom channel's methods (`ch` is the live channel object).
    fn custom_update(&self, ch: &Self::V, values: &[Self::V]) -> Result<bool, Self::Err>;
    fn custom_consume(&self, ch: &Self::V) -> Result<bool, Self::Err>;
    fn custom_finish(&self, ch: &Self::V) -> Result<bool, Self::Err>;
    fn custom_is_available(&self, ch: &Self::V) -> Result<bool, Self::Err>;
    /// `Ok(None)` stands for `EmptyChannelError`.
    fn custom_get(&self, ch: &Self::V) -> Result<Option<Self::V>, Self::Err>;
    fn custom_copy(&self, ch: &Self::V) -> Result<Self::V, Self::Err>;
}

/// The immutable part of a channel: its kind and configuration.
#[derive(Debug)]
pub enum Kind<V> {
    LastValue,
    LastValueAfterFinish,
    Ephemeral {
        guard: bool,
    },
    /// `initial` is `typ()` (None when not constructible).
    BinOp {
        op: V,
        initial: Option<V>,
    },
    Topic {
        accumulate: bool,
    },
    /// `names_obj` is the original names collection, for error messages; `lookup` an
    /// optional embedder index from name to position in `names`.
    Barrier {
        names: Vec<V>,
        names_obj: V,
        lookup: Option<V>,
        after_finish: bool,
    },
    AnyValue,
    Untracked {
        guard: bool,
    },
    /// A channel class the core does not know; `spec` is its spec object.
    Custom {
        spec: V,
    },
}

/// One channel of a graph: its key (for messages) and kind.
#[derive(Debug)]
pub struct ChannelSpec<V> {
    pub key: String,
    pub kind: Kind<V>,
}

impl<V> ChannelSpec<V> {
    /// Whether `update([])` may change the channel (the new-step notification pass).
    pub fn reacts_to_empty_update(&self) -> bool {
        matches!(
            self.kind,
            Kind::Ephemeral { .. }
                | Kind::AnyValue
                | Kind::Topic { accumulate: false }
                | Kind::Custom { .. }
        )
    }
    /// Whether `consume()` may change the channel.
    pub fn reacts_to_consume(&self) -> bool {
        matches!(
            self.kind,
            Kind::LastValueAfterFinish | Kind::Barrier { .. } | Kind::Custom { .. }
        )
    }
    /// Whether `finish()` may change the channel.
    pub fn reacts_to_finish(&self) -> bool {
        matches!(
            self.kind,
            Kind::LastValueAfterFinish
                | Kind::Barrier {
                    after_finish: true,
                    ..
                }
                | Kind::Custom { .. }
        )
    }
}

/// The mutable state of a channel during a run.
#[derive(Debug)]
pub enum State<V> {
    /// LastValue, EphemeralValue, BinaryOperatorAggregate, AnyValue, UntrackedValue.
    Value(Option<V>),
    /// LastValueAfterFinish.
    Deferred {
        value: Option<V>,
        finished: bool,
    },
    Topic(Vec<V>),
    /// NamedBarrierValue, NamedBarrierValueAfterFinish.
    Barrier(Barrier<V>),
    /// The live custom channel object.
    Custom(V),
}

fn concurrent_error<E>(message: &str) -> CoreError<E> {
    CoreError::InvalidUpdate(with_error_code(message, INVALID_CONCURRENT_GRAPH_UPDATE))
}

fn ext<E>(e: E) -> CoreError<E> {
    CoreError::External(e)
}

fn kind_mismatch<E>(key: &str) -> CoreError<E> {
    CoreError::InvalidArgument(format!("channel '{key}': state does not match its kind"))
}

impl<V> ChannelSpec<V> {
    /// A fresh empty state (custom channels are created by the embedder).
    pub fn empty_state<O: ValueOps<V = V>>(&self, ops: &O) -> State<V> {
        match &self.kind {
            Kind::LastValueAfterFinish => State::Deferred {
                value: None,
                finished: false,
            },
            Kind::Topic { .. } => State::Topic(Vec::new()),
            Kind::Barrier { names, .. } => State::Barrier(Barrier::new(names.len())),
            Kind::BinOp { initial, .. } => {
                State::Value(initial.as_ref().map(|v| ops.clone_value(v)))
            }
            Kind::Custom { spec } => State::Custom(ops.clone_value(spec)),
            _ => State::Value(None),
        }
    }

    /// `update(values)`: whether the channel changed.
    pub fn update<O: ValueOps<V = V>>(
        &self,
        state: &mut State<V>,
        mut values: Vec<V>,
        ops: &O,
    ) -> CoreResult<bool, O::Err> {
        self.update_drain(state, &mut values, ops)
    }

    /// [`ChannelSpec::update`] taking the values out of a reusable buffer (left empty).
    pub fn update_drain<O: ValueOps<V = V>>(
        &self,
        state: &mut State<V>,
        values: &mut Vec<V>,
        ops: &O,
    ) -> CoreResult<bool, O::Err> {
        let r = self.update_values(state, values, ops);
        values.clear();
        r
    }

    fn update_values<O: ValueOps<V = V>>(
        &self,
        state: &mut State<V>,
        values: &mut Vec<V>,
        ops: &O,
    ) -> CoreResult<bool, O::Err> {
        let key = &self.key;
        match (&self.kind, state) {
            (Kind::LastValue, State::Value(slot)) => {
                if values.is_empty() {
                    return Ok(false);
                }
                if values.len() != 1 {
                    return Err(concurrent_error(&format!(
                        "At key '{key}': Can receive only one value per step. Use an Annotated key to handle multiple values."
                    )));
                }
                *slot = values.pop();
                Ok(true)
            }
            (Kind::Ephemeral { guard }, State::Value(slot)) => {
                if values.is_empty() {
                    return Ok(slot.take().is_some());
                }
                if values.len() != 1 && *guard {
                    return Err(CoreError::InvalidUpdate(format!(
                        "At key '{key}': EphemeralValue(guard=True) can receive only one value per step. Use guard=False if you want to store any one of multiple values."
                    )));
                }
                *slot = values.pop();
                Ok(true)
            }
            (Kind::Untracked { guard }, State::Value(slot)) => {
                if values.is_empty() {
                    return Ok(false);
                }
                if values.len() != 1 && *guard {
                    return Err(CoreError::InvalidUpdate(format!(
                        "At key '{key}': UntrackedValue(guard=True) can receive only one value per step. Use guard=False if you want to store any one of multiple values."
                    )));
                }
                *slot = values.pop();
                Ok(true)
            }
            (Kind::AnyValue, State::Value(slot)) => {
                if values.is_empty() {
                    return Ok(slot.take().is_some());
                }
                *slot = values.pop();
                Ok(true)
            }
            (Kind::BinOp { op, .. }, State::Value(slot)) => {
                Self::update_binop(op, slot, values, ops)
            }
            (Kind::LastValueAfterFinish, State::Deferred { value, finished }) => {
                if values.is_empty() {
                    return Ok(false);
                }
                *finished = false;
                *value = values.pop();
                Ok(true)
            }
            (Kind::Topic { accumulate }, State::Topic(items)) => {
                let mut updated = false;
                if !accumulate {
                    updated = !items.is_empty();
                    items.clear();
                }
                let before = items.len();
                for v in values.iter() {
                    ops.flatten_into(v, items).map_err(ext)?;
                }
                Ok(updated || items.len() > before)
            }
            (
                Kind::Barrier {
                    names,
                    names_obj,
                    lookup,
                    ..
                },
                State::Barrier(b),
            ) => b.update(key, (names, names_obj, lookup.as_ref()), values, ops),
            (Kind::Custom { .. }, State::Custom(ch)) => ops.custom_update(ch, values).map_err(ext),
            _ => Err(kind_mismatch(key)),
        }
    }

    fn update_binop<O: ValueOps<V = V>>(
        op: &V,
        slot: &mut Option<V>,
        values: &mut Vec<V>,
        ops: &O,
    ) -> CoreResult<bool, O::Err> {
        if values.is_empty() {
            return Ok(false);
        }
        let mut rest = values.drain(..);
        if slot.is_none() {
            // The first value is taken as-is, even an Overwrite (LangGraph's behaviour).
            *slot = rest.next();
        }
        let mut seen_overwrite = false;
        for v in rest {
            if let Some(inner) = ops.overwrite_value(&v).map_err(ext)? {
                if seen_overwrite {
                    return Err(concurrent_error(
                        "Can receive only one Overwrite value per super-step.",
                    ));
                }
                *slot = Some(inner);
                seen_overwrite = true;
                continue;
            }
            if !seen_overwrite {
                if let Some(acc) = slot.as_ref() {
                    let next = ops.reduce(op, acc, &v).map_err(ext)?;
                    *slot = Some(next);
                }
            }
        }
        Ok(true)
    }

    /// `consume()`: whether the channel changed.
    pub fn consume<O: ValueOps<V = V>>(
        &self,
        state: &mut State<V>,
        ops: &O,
    ) -> CoreResult<bool, O::Err> {
        match (&self.kind, state) {
            (Kind::LastValueAfterFinish, State::Deferred { value, finished }) => {
                if *finished {
                    *finished = false;
                    *value = None;
                    return Ok(true);
                }
                Ok(false)
            }
            (Kind::Barrier { after_finish, .. }, State::Barrier(b)) => Ok(b.consume(*after_finish)),
            (Kind::Custom { .. }, State::Custom(ch)) => ops.custom_consume(ch).map_err(ext),
            _ => Ok(false),
        }
    }

    /// `finish()`: whether the channel changed.
    pub fn finish<O: ValueOps<V = V>>(
        &self,
        state: &mut State<V>,
        ops: &O,
    ) -> CoreResult<bool, O::Err> {
        match (&self.kind, state) {
            (Kind::LastValueAfterFinish, State::Deferred { value, finished }) => {
                if !*finished && value.is_some() {
                    *finished = true;
                    return Ok(true);
                }
                Ok(false)
            }
            (
                Kind::Barrier {
                    after_finish: true, ..
                },
                State::Barrier(b),
            ) => Ok(b.finish()),
            (Kind::Custom { .. }, State::Custom(ch)) => ops.custom_finish(ch).map_err(ext),
            _ => Ok(false),
        }
    }

    /// `is_available()`.
    #[inline]
    pub fn is_available<O: ValueOps<V = V>>(
        &self,
        state: &State<V>,
        ops: &O,
    ) -> CoreResult<bool, O::Err> {
        Ok(match (&self.kind, state) {
            (_, State::Value(v)) => v.is_some(),
            (_, State::Deferred { value, finished }) => value.is_some() && *finished,
            (_, State::Topic(items)) => !items.is_empty(),
            (Kind::Barrier { after_finish, .. }, State::Barrier(b)) => {
                b.is_available(*after_finish)
            }
            (_, State::Custom(ch)) => return ops.custom_is_available(ch).map_err(ext),
            _ => false,
        })
    }

    /// `get()`: the value, or `EmptyChannelError`. A non-empty topic yields `Ok(None)`: the
    /// embedder builds the list from [`State::Topic`] itself.
    pub fn get<O: ValueOps<V = V>>(
        &self,
        state: &State<V>,
        ops: &O,
    ) -> CoreResult<Option<V>, O::Err> {
        if !self.is_available(state, ops)? {
            if let State::Custom(_) = state {
                // A custom channel decides itself (its get() may still succeed).
            } else {
                return Err(CoreError::EmptyChannel);
            }
        }
        match state {
            State::Value(Some(v)) | State::Deferred { value: Some(v), .. } => {
                Ok(Some(ops.clone_value(v)))
            }
            State::Barrier(_) => Ok(Some(ops.none())),
            State::Topic(_) => Ok(None),
            State::Custom(ch) => match ops.custom_get(ch).map_err(ext)? {
                Some(v) => Ok(Some(v)),
                None => Err(CoreError::EmptyChannel),
            },
            _ => Err(CoreError::EmptyChannel),
        }
    }

    /// `copy()` of a state (values shared, containers duplicated).
    pub fn copy_state<O: ValueOps<V = V>>(
        &self,
        state: &State<V>,
        ops: &O,
    ) -> CoreResult<State<V>, O::Err> {
        let c = |v: &V| ops.clone_value(v);
        Ok(match state {
            State::Value(v) => State::Value(v.as_ref().map(c)),
            State::Deferred { value, finished } => State::Deferred {
                value: value.as_ref().map(c),
                finished: *finished,
            },
            State::Topic(items) => State::Topic(items.iter().map(c).collect()),
            State::Barrier(b) => State::Barrier(b.copy(c)),
            State::Custom(ch) => State::Custom(ops.custom_copy(ch).map_err(ext)?),
        })
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! A `ValueOps` over plain Rust values for the core's unit tests.
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    pub enum Val {
        None,
        Int(i64),
        Str(String),
        List(Vec<Val>),
        Overwrite(Box<Val>),
        /// A reducer that fails.
        AddOp,
        FailOp,
    }

    pub struct TestOps;

    impl ValueOps for TestOps {
        type V = Val;
        type Err = String;
        fn clone_value(&self, v: &Val) -> Val {
            v.clone()
        }
        fn none(&self) -> Val {
            Val::None
        }
        fn reduce(&self, op: &Val, acc: &Val, update: &Val) -> Result<Val, String> {
            match (op, acc, update) {
                (Val::AddOp, Val::Int(a), Val::Int(b)) => Ok(Val::Int(a + b)),
                (Val::AddOp, Val::List(a), Val::List(b)) => {
                    Ok(Val::List(a.iter().chain(b.iter()).cloned().collect()))
                }
                _ => Err(format!("cannot reduce {acc:?} with {update:?}")),
            }
        }
        fn overwrite_value(&self, v: &Val) -> Result<Option<Val>, String> {
            Ok(match v {
                Val::Overwrite(inner) => Some((**inner).clone()),
                _ => None,
            })
        }
        fn flatten_into(&self, v: &Val, out: &mut Vec<Val>) -> Result<(), String> {
            match v {
                Val::List(items) => out.extend(items.iter().cloned()),
                other => out.push(other.clone()),
            }
            Ok(())
        }
        fn name_index(
            &self,
            names: &[Val],
            _obj: &Val,
            _lookup: Option<&Val>,
            v: &Val,
        ) -> Result<Option<usize>, String> {
            Ok(names.iter().position(|n| n == v))
        }
        fn unknown_name_message(&self, key: &str, v: &Val, _names: &Val) -> String {
            format!("At key '{key}': Value {v:?} not in names")
        }
        fn custom_update(&self, _: &Val, _: &[Val]) -> Result<bool, String> {
            Err("no custom channels in tests".into())
        }
        fn custom_consume(&self, _: &Val) -> Result<bool, String> {
            Ok(false)
        }
        fn custom_finish(&self, _: &Val) -> Result<bool, String> {
            Ok(false)
        }
        fn custom_is_available(&self, _: &Val) -> Result<bool, String> {
            Ok(false)
        }
        fn custom_get(&self, _: &Val) -> Result<Option<Val>, String> {
            Ok(None)
        }
        fn custom_copy(&self, ch: &Val) -> Result<Val, String> {
            Ok(ch.clone())
        }
    }

    pub fn spec(key: &str, kind: Kind<Val>) -> ChannelSpec<Val> {
        ChannelSpec {
            key: key.to_string(),
            kind,
        }
    }

    pub fn s(x: &str) -> Val {
        Val::Str(x.to_string())
    }

    /// A barrier waiting for `names` (no Python names object, no lookup).
    pub fn barrier_kind(names: &[&str], after_finish: bool) -> Kind<Val> {
        Kind::Barrier {
            names: names.iter().map(|n| s(n)).collect(),
            names_obj: Val::None,
            lookup: None,
            after_finish,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

    #[test]
    fn last_value_rejects_two_values() {
        let c = spec("a", Kind::LastValue);
        let mut st = c.empty_state(&TestOps);
        assert!(!c.update(&mut st, vec![], &TestOps).unwrap());
        assert!(c.update(&mut st, vec![Val::Int(1)], &TestOps).unwrap());
        let err = c
            .update(&mut st, vec![Val::Int(1), Val::Int(2)], &TestOps)
            .unwrap_err();
        match err {
            CoreError::InvalidUpdate(m) => assert_eq!(
                m,
                "At key 'a': Can receive only one value per step. Use an Annotated key to handle multiple values.\nFor troubleshooting, visit: https://docs.langchain.com/oss/python/langgraph/errors/INVALID_CONCURRENT_GRAPH_UPDATE"
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(c.get(&st, &TestOps).unwrap(), Some(Val::Int(1)));
    }

    #[test]
    fn ephemeral_clears_on_empty_update() {
        let c = spec("e", Kind::Ephemeral { guard: false });
        let mut st = c.empty_state(&TestOps);
        assert!(!c.update(&mut st, vec![], &TestOps).unwrap());
        assert!(c
            .update(&mut st, vec![Val::Int(1), Val::Int(2)], &TestOps)
            .unwrap());
        assert_eq!(c.get(&st, &TestOps).unwrap(), Some(Val::Int(2)));
        assert!(c.update(&mut st, vec![], &TestOps).unwrap());
        assert!(matches!(c.get(&st, &TestOps), Err(CoreError::EmptyChannel)));
        let g = spec("e", Kind::Ephemeral { guard: true });
        let mut st = g.empty_state(&TestOps);
        assert!(matches!(
            g.update(&mut st, vec![Val::None, Val::None], &TestOps),
            Err(CoreError::InvalidUpdate(_))
        ));
    }

    #[test]
    fn binop_folds_and_overwrites() {
        let c = spec(
            "x",
            Kind::BinOp {
                op: Val::AddOp,
                initial: Some(Val::Int(0)),
            },
        );
        let mut st = c.empty_state(&TestOps);
        assert!(c.is_available(&st, &TestOps).unwrap());
        assert!(c
            .update(&mut st, vec![Val::Int(2), Val::Int(3)], &TestOps)
            .unwrap());
        assert_eq!(c.get(&st, &TestOps).unwrap(), Some(Val::Int(5)));
        // After an Overwrite, later plain values are ignored.
        let ow = Val::Overwrite(Box::new(Val::Int(10)));
        assert!(c
            .update(
                &mut st,
                vec![Val::Int(1), ow.clone(), Val::Int(7)],
                &TestOps
            )
            .unwrap());
        assert_eq!(c.get(&st, &TestOps).unwrap(), Some(Val::Int(10)));
        assert!(matches!(
            c.update(&mut st, vec![ow.clone(), ow], &TestOps),
            Err(CoreError::InvalidUpdate(_))
        ));
        assert!(matches!(
            c.update(&mut st, vec![s("no")], &TestOps),
            Err(CoreError::External(_))
        ));
        // No initial value: the first write is taken as-is.
        let d = spec(
            "y",
            Kind::BinOp {
                op: Val::AddOp,
                initial: None,
            },
        );
        let mut st = d.empty_state(&TestOps);
        assert!(!d.is_available(&st, &TestOps).unwrap());
        d.update(&mut st, vec![Val::Int(4), Val::Int(1)], &TestOps)
            .unwrap();
        assert_eq!(d.get(&st, &TestOps).unwrap(), Some(Val::Int(5)));
    }

    #[test]
    fn topic_flattens_and_clears() {
        let c = spec("t", Kind::Topic { accumulate: false });
        let mut st = c.empty_state(&TestOps);
        assert!(c
            .update(
                &mut st,
                vec![Val::Int(1), Val::List(vec![Val::Int(2), Val::Int(3)])],
                &TestOps
            )
            .unwrap());
        assert!(matches!(&st, State::Topic(v) if v.len() == 3));
        assert!(c.update(&mut st, vec![], &TestOps).unwrap());
        assert!(!c.update(&mut st, vec![], &TestOps).unwrap());
        let a = spec("t", Kind::Topic { accumulate: true });
        let mut st = a.empty_state(&TestOps);
        a.update(&mut st, vec![Val::Int(1)], &TestOps).unwrap();
        assert!(!a.update(&mut st, vec![], &TestOps).unwrap());
        assert!(matches!(&st, State::Topic(v) if v.len() == 1));
    }

    #[test]
    fn barriers_and_deferred() {
        let c = spec("j", barrier_kind(&["a", "b"], false));
        let mut st = c.empty_state(&TestOps);
        assert!(c.update(&mut st, vec![s("a")], &TestOps).unwrap());
        assert!(!c.update(&mut st, vec![s("a")], &TestOps).unwrap());
        assert!(!c.is_available(&st, &TestOps).unwrap());
        assert!(!c.consume(&mut st, &TestOps).unwrap());
        c.update(&mut st, vec![s("b")], &TestOps).unwrap();
        assert_eq!(c.get(&st, &TestOps).unwrap(), Some(Val::None));
        assert!(c.consume(&mut st, &TestOps).unwrap());
        assert!(!c.is_available(&st, &TestOps).unwrap());
        assert!(matches!(
            c.update(&mut st, vec![s("z")], &TestOps),
            Err(CoreError::InvalidUpdate(_))
        ));

        let f = spec("j", barrier_kind(&["a", "b"], true));
        let mut st = f.empty_state(&TestOps);
        f.update(&mut st, vec![s("a"), s("b")], &TestOps).unwrap();
        assert!(!f.is_available(&st, &TestOps).unwrap());
        assert!(!f.consume(&mut st, &TestOps).unwrap());
        assert!(f.finish(&mut st, &TestOps).unwrap());
        assert!(f.is_available(&st, &TestOps).unwrap());
        assert!(f.consume(&mut st, &TestOps).unwrap());
        assert!(!f.is_available(&st, &TestOps).unwrap());

        let d = spec("d", Kind::LastValueAfterFinish);
        let mut st = d.empty_state(&TestOps);
        assert!(!d.finish(&mut st, &TestOps).unwrap());
        d.update(&mut st, vec![Val::Int(1), Val::Int(2)], &TestOps)
            .unwrap();
        assert!(!d.is_available(&st, &TestOps).unwrap());
        assert!(d.finish(&mut st, &TestOps).unwrap());
        assert_eq!(d.get(&st, &TestOps).unwrap(), Some(Val::Int(2)));
        assert!(d.consume(&mut st, &TestOps).unwrap());
        assert!(!d.is_available(&st, &TestOps).unwrap());
    }
}
