//! Per-run state (channel states, `channel_versions`, `versions_seen`, updated channels) and
//! LangGraph's `apply_writes` / PULL-task selection over it.

use std::collections::HashMap;
use std::sync::Arc;

use crate::channel::{ChannelSpec, State, ValueOps};
use crate::error::CoreResult;
use crate::triggers::Topology;
use crate::version::{null_version, py_max, OrdMap, Version, VersionMap};

/// Names `apply_writes` never consumes (LangGraph's `RESERVED`).
pub const RESERVED: &[&str] = &[
    "langsmith:hidden",
    "__input__",
    "__interrupt__",
    "__resume__",
    "__error__",
    "__error_source_node__",
    "__no_writes__",
    "__snapshot_bumps__",
    "__pregel_send",
    "__pregel_read",
    "__pregel_checkpointer",
    "__pregel_stream",
    "checkpoint_map",
    "__pregel_resuming",
    "__pregel_replay_state",
    "__pregel_task_id",
    "checkpoint_id",
    "checkpoint_ns",
    "__pregel_timed_attempt_observer",
    "__pregel_resume_map",
    "__pregel_strict_resume",
    "__pregel_stream_messages_v2",
    "__pregel_push",
    "__pregel_pull",
    "|",
    ":",
    "configurable",
];

/// Write keys `apply_writes` never routes to a channel.
pub const SKIPPED_WRITE_KEYS: &[&str] = &[
    "__no_writes__",
    "__pregel_push",
    "__resume__",
    "__interrupt__",
    "__return__",
    "__error__",
    "__error_source_node__",
];

/// The static description of a graph: channels plus topology.
#[derive(Debug)]
pub struct Graph<V> {
    pub channels: Vec<ChannelSpec<V>>,
    pub names: Vec<Arc<str>>,
    pub index: HashMap<Arc<str>, usize>,
    pub topology: Topology,
    /// Channels whose `update([])` / `consume()` / `finish()` can change something.
    pub volatile: Vec<usize>,
    pub consumable: Vec<bool>,
    pub finishable: Vec<usize>,
}

impl<V> Graph<V> {
    /// Builds the per-graph indexes. `names[i]` is the name of `channels[i]`.
    pub fn new(names: Vec<Arc<str>>, channels: Vec<ChannelSpec<V>>, topology: Topology) -> Self {
        let index = names
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, n)| (n, i))
            .collect();
        let volatile = (0..channels.len())
            .filter(|&i| channels[i].reacts_to_empty_update())
            .collect();
        let consumable = channels
            .iter()
            .enumerate()
            .map(|(i, c)| c.reacts_to_consume() && !RESERVED.contains(&&*names[i]))
            .collect();
        let finishable = (0..channels.len())
            .filter(|&i| channels[i].reacts_to_finish())
            .collect();
        Graph {
            channels,
            names,
            index,
            topology,
            volatile,
            consumable,
            finishable,
        }
    }
}

/// One task's contribution to `apply_writes`.
#[derive(Debug)]
pub struct TaskWrites<V> {
    pub name: String,
    /// `task_path_str(path)`: the sort key.
    pub sort_key: String,
    /// Trigger names (any string; only versioned ones are recorded as seen).
    pub triggers: Vec<String>,
    /// Writes to known channels, already stripped of reserved keys.
    pub writes: Vec<(usize, V)>,
}

/// The mutable state of one run.
#[derive(Debug)]
pub struct Run<V> {
    pub states: Vec<State<V>>,
    pub versions: VersionMap,
    pub seen: OrdMap<VersionMap>,
    /// Sorted names updated by the last `apply_writes` (or restored from the checkpoint).
    pub updated: Vec<Arc<str>>,
}

impl<V> Run<V> {
    /// The known channel indices of `updated`.
    pub fn updated_indices(&self, graph: &Graph<V>) -> Vec<usize> {
        self.updated
            .iter()
            .filter_map(|n| graph.index.get(n).copied())
            .collect()
    }

    /// The PULL tasks that fire now, in LangGraph's order.
    pub fn firing_nodes<O: ValueOps<V = V>>(
        &self,
        graph: &Graph<V>,
        ops: &O,
    ) -> CoreResult<Vec<usize>, O::Err> {
        let topo = &graph.topology;
        let candidates = topo.candidates(
            &self.updated_indices(graph),
            !self.updated.is_empty(),
            !self.versions.is_empty(),
        );
        let Some(null) = null_version(&self.versions) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for n in candidates {
            let seen = self.seen.get(&topo.nodes[n].name);
            let avail = |c: usize| graph.channels[c].is_available(&self.states[c], ops);
            if topo.fires(n, &graph.names, &self.versions, seen, &null, avail)? {
                out.push(n);
            }
        }
        Ok(out)
    }

    fn set_version(&mut self, graph: &Graph<V>, c: usize, v: &Option<Version>) {
        if let Some(v) = v {
            self.versions.insert(&graph.names[c], v.clone());
        }
    }

    /// LangGraph's `apply_writes`. `next_version` is called once with the current maximum
    /// version when given (`None` leaves versions untouched). Returns the updated channels.
    pub fn apply_writes<O, F>(
        &mut self,
        graph: &Graph<V>,
        mut tasks: Vec<TaskWrites<V>>,
        next_version: Option<F>,
        ops: &O,
    ) -> CoreResult<Vec<Arc<str>>, O::Err>
    where
        O: ValueOps<V = V>,
        F: FnOnce(Option<&Version>) -> CoreResult<Option<Version>, O::Err>,
    {
        tasks.sort_by(|a, b| a.sort_key.cmp(&b.sort_key));
        let bump_step = tasks.iter().any(|t| !t.triggers.is_empty());

        for t in &tasks {
            let versions = &self.versions;
            let entry = self.seen.entry_or_insert_with(&t.name, VersionMap::new);
            for trig in &t.triggers {
                if let Some(v) = versions.get(trig) {
                    entry.insert(trig, v.clone());
                }
            }
        }

        let next = match next_version {
            None => None,
            Some(f) => f(py_max(self.versions.values())?)?,
        };

        let n = graph.channels.len();
        let mut done = vec![false; n];
        for t in &tasks {
            for trig in &t.triggers {
                if let Some(&c) = graph.index.get(trig.as_str()) {
                    if graph.consumable[c] && !done[c] {
                        done[c] = true;
                        if graph.channels[c].consume(&mut self.states[c], ops)? {
                            self.set_version(graph, c, &next);
                        }
                    }
                }
            }
        }

        let mut order: Vec<usize> = Vec::new();
        let mut pending: Vec<Vec<V>> = (0..n).map(|_| Vec::new()).collect();
        let mut has = vec![false; n];
        for t in tasks {
            for (c, v) in t.writes {
                if !has[c] {
                    has[c] = true;
                    order.push(c);
                }
                pending[c].push(v);
            }
        }

        let mut updated = vec![false; n];
        for c in order {
            let vals = std::mem::take(&mut pending[c]);
            let spec = &graph.channels[c];
            if spec.update(&mut self.states[c], vals, ops)? && next.is_some() {
                self.set_version(graph, c, &next);
                if spec.is_available(&self.states[c], ops)? {
                    updated[c] = true;
                }
            }
        }

        if bump_step {
            for &c in &graph.volatile {
                let spec = &graph.channels[c];
                if !updated[c]
                    && spec.is_available(&self.states[c], ops)?
                    && spec.update(&mut self.states[c], Vec::new(), ops)?
                    && next.is_some()
                {
                    self.set_version(graph, c, &next);
                    if spec.is_available(&self.states[c], ops)? {
                        updated[c] = true;
                    }
                }
            }
        }

        let updates_trigger = (0..n).any(|c| updated[c] && graph.topology.is_trigger(c));
        if bump_step && !updates_trigger {
            for &c in &graph.finishable {
                let spec = &graph.channels[c];
                if spec.finish(&mut self.states[c], ops)? && next.is_some() {
                    self.set_version(graph, c, &next);
                    if spec.is_available(&self.states[c], ops)? {
                        updated[c] = true;
                    }
                }
            }
        }

        let mut names: Vec<Arc<str>> = (0..n)
            .filter(|&c| updated[c])
            .map(|c| graph.names[c].clone())
            .collect();
        names.sort();
        self.updated = names.clone();
        Ok(names)
    }

    /// On resume: `versions_seen["__interrupt__"][k] = channel_versions[k]` for every channel
    /// (in channel order) that has a version; other entries are kept.
    pub fn mark_interrupt_seen(&mut self, graph: &Graph<V>) {
        let versions = &self.versions;
        let entry = self
            .seen
            .entry_or_insert_with("__interrupt__", VersionMap::new);
        for name in &graph.names {
            if let Some(v) = versions.get(name) {
                entry.insert(name, v.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::testing::*;
    use crate::channel::Kind;
    use crate::triggers::ReadSpec;
    use crate::version::increment;

    fn graph(chans: Vec<(&str, Kind<Val>)>, nodes: &[(&str, &[&str])]) -> Graph<Val> {
        let names: Vec<Arc<str>> = chans.iter().map(|(n, _)| Arc::from(*n)).collect();
        let index: HashMap<Arc<str>, usize> = names
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, n)| (n, i))
            .collect();
        let nodes = nodes
            .iter()
            .map(|(n, t)| {
                (
                    n.to_string(),
                    t.iter().map(|s| s.to_string()).collect(),
                    ReadSpec::Many(vec![]),
                )
            })
            .collect();
        let topo = Topology::new::<String>(&index, names.len(), nodes).unwrap();
        let specs = chans.into_iter().map(|(n, k)| spec(n, k)).collect();
        Graph::new(names, specs, topo)
    }

    fn run(g: &Graph<Val>) -> Run<Val> {
        Run {
            states: g.channels.iter().map(|c| c.empty_state(&TestOps)).collect(),
            versions: VersionMap::new(),
            seen: OrdMap::new(),
            updated: Vec::new(),
        }
    }

    fn task(
        name: &str,
        path: &str,
        triggers: &[&str],
        writes: Vec<(usize, Val)>,
    ) -> TaskWrites<Val> {
        TaskWrites {
            name: name.into(),
            sort_key: path.into(),
            triggers: triggers.iter().map(|s| s.to_string()).collect(),
            writes,
        }
    }

    type Inc = fn(Option<&Version>) -> CoreResult<Option<Version>, String>;
    fn inc() -> Option<Inc> {
        Some(|v| increment(v).map(Some))
    }

    fn ver(r: &Run<Val>, c: &str) -> Option<i64> {
        match r.versions.get(c) {
            Some(Version::Int(i)) => Some(*i),
            _ => None,
        }
    }

    #[test]
    fn writes_apply_in_path_order_with_one_version() {
        let g = graph(
            vec![
                ("start", Kind::Ephemeral { guard: true }),
                (
                    "log",
                    Kind::BinOp {
                        op: Val::AddOp,
                        initial: Some(Val::List(vec![])),
                    },
                ),
                ("branch:to:b", Kind::Ephemeral { guard: false }),
            ],
            &[("a", &["start"]), ("b", &["branch:to:b"])],
        );
        let mut r = run(&g);
        let up = r
            .apply_writes(
                &g,
                vec![task("__input__", "", &[], vec![(0, Val::None)])],
                inc(),
                &TestOps,
            )
            .unwrap();
        assert_eq!(up.iter().map(|s| &**s).collect::<Vec<_>>(), vec!["start"]);
        assert_eq!(ver(&r, "start"), Some(1));
        // No triggers: no finish/empty pass; versions_seen gets an empty entry.
        assert!(r.seen.get("__input__").unwrap().is_empty());
        assert_eq!(r.firing_nodes(&g, &TestOps).unwrap(), vec![0]);

        let l = |x: &str| Val::List(vec![s(x)]);
        let tasks = vec![
            task(
                "z",
                "~__pregel_push, 0000000001, False",
                &["__pregel_push"],
                vec![(1, l("push1"))],
            ),
            task(
                "a",
                "~__pregel_pull, a",
                &["start"],
                vec![(1, l("a")), (2, Val::None)],
            ),
            task(
                "y",
                "~__pregel_push, 0000000000, False",
                &["__pregel_push"],
                vec![(1, l("push0"))],
            ),
        ];
        let up = r.apply_writes(&g, tasks, inc(), &TestOps).unwrap();
        // The ephemeral start channel was cleared (bumped, not reported).
        assert_eq!(
            up.iter().map(|s| &**s).collect::<Vec<_>>(),
            vec!["branch:to:b", "log"]
        );
        assert_eq!(ver(&r, "start"), Some(2));
        assert_eq!(ver(&r, "log"), Some(2));
        assert_eq!(ver(&r, "branch:to:b"), Some(2));
        assert!(
            matches!(&r.states[1], State::Value(Some(Val::List(v))) if *v == vec![s("a"), s("push0"), s("push1")])
        );
        // Pre-bump version recorded as seen.
        assert_eq!(
            r.seen.get("a").unwrap().get("start"),
            Some(&Version::Int(1))
        );
        assert!(r.seen.get("y").unwrap().is_empty());
        assert_eq!(r.firing_nodes(&g, &TestOps).unwrap(), vec![1]);
        assert_eq!(
            r.seen.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            vec!["__input__", "a", "y", "z"]
        );
    }

    #[test]
    fn no_next_version_leaves_versions() {
        let g = graph(vec![("a", Kind::LastValue)], &[("n", &["a"])]);
        let mut r = run(&g);
        let up = r
            .apply_writes(
                &g,
                vec![task("t", "", &["a"], vec![(0, Val::Int(1))])],
                None::<Inc>,
                &TestOps,
            )
            .unwrap();
        assert!(up.is_empty());
        assert!(r.versions.is_empty());
        assert!(matches!(&r.states[0], State::Value(Some(Val::Int(1)))));
    }

    #[test]
    fn barrier_consume_and_deferred_finish() {
        let g = graph(
            vec![
                (
                    "join",
                    Kind::Barrier {
                        names: vec![s("a"), s("b")],
                        names_obj: Val::None,
                        after_finish: false,
                    },
                ),
                ("branch:to:d", Kind::LastValueAfterFinish),
                ("x", Kind::LastValue),
            ],
            &[("c", &["join"]), ("d", &["branch:to:d"]), ("a", &["x"])],
        );
        let mut r = run(&g);
        r.apply_writes(
            &g,
            vec![task("__input__", "", &[], vec![(2, Val::Int(0))])],
            inc(),
            &TestOps,
        )
        .unwrap();
        // a and b write the join; a also defers d. "join" triggers c, so no finish pass.
        let up = r
            .apply_writes(
                &g,
                vec![
                    task(
                        "a",
                        "~__pregel_pull, a",
                        &["x"],
                        vec![(0, s("a")), (1, Val::None)],
                    ),
                    task("b", "~__pregel_pull, b", &["x"], vec![(0, s("b"))]),
                ],
                inc(),
                &TestOps,
            )
            .unwrap();
        assert_eq!(up.iter().map(|s| &**s).collect::<Vec<_>>(), vec!["join"]);
        assert_eq!(ver(&r, "branch:to:d"), Some(2));
        assert_eq!(r.firing_nodes(&g, &TestOps).unwrap(), vec![0]);
        // c consumes the barrier; nothing that triggers is updated -> finish makes d available.
        let up = r
            .apply_writes(
                &g,
                vec![task("c", "~__pregel_pull, c", &["join"], vec![])],
                inc(),
                &TestOps,
            )
            .unwrap();
        assert_eq!(
            up.iter().map(|s| &**s).collect::<Vec<_>>(),
            vec!["branch:to:d"]
        );
        assert_eq!(ver(&r, "join"), Some(3));
        assert_eq!(ver(&r, "branch:to:d"), Some(3));
        assert_eq!(r.firing_nodes(&g, &TestOps).unwrap(), vec![1]);
        // d consumes its deferred trigger.
        let up = r
            .apply_writes(
                &g,
                vec![task("d", "~__pregel_pull, d", &["branch:to:d"], vec![])],
                inc(),
                &TestOps,
            )
            .unwrap();
        assert!(up.is_empty());
        assert_eq!(ver(&r, "branch:to:d"), Some(4));
        assert!(r.firing_nodes(&g, &TestOps).unwrap().is_empty());
    }

    #[test]
    fn errors_propagate() {
        let g = graph(
            vec![
                ("a", Kind::LastValue),
                (
                    "s",
                    Kind::BinOp {
                        op: Val::FailOp,
                        initial: Some(Val::Int(0)),
                    },
                ),
            ],
            &[],
        );
        let mut r = run(&g);
        let two = vec![
            task("x", "1", &[], vec![(0, Val::Int(1))]),
            task("y", "2", &[], vec![(0, Val::Int(2))]),
        ];
        assert!(matches!(
            r.apply_writes(&g, two, inc(), &TestOps),
            Err(crate::error::CoreError::InvalidUpdate(_))
        ));
        let bad = vec![task("x", "1", &[], vec![(1, Val::Int(1))])];
        assert!(matches!(
            r.apply_writes(&g, bad, inc(), &TestOps),
            Err(crate::error::CoreError::External(_))
        ));
    }

    #[test]
    fn interrupt_seen_copies_versions() {
        let g = graph(vec![("a", Kind::LastValue)], &[]);
        let mut r = run(&g);
        r.apply_writes(
            &g,
            vec![task("__input__", "", &[], vec![(0, Val::Int(1))])],
            inc(),
            &TestOps,
        )
        .unwrap();
        r.mark_interrupt_seen(&g);
        assert_eq!(
            r.seen.get("__interrupt__").unwrap().get("a"),
            Some(&Version::Int(1))
        );
    }
}
