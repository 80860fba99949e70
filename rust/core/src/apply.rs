//! Per-run state (channel states, `channel_versions`, `versions_seen`, updated channels) and
//! LangGraph's `apply_writes` / PULL-task selection over it.

use std::sync::Arc;

use crate::channel::{ChannelSpec, Kind, State, ValueOps};
use crate::error::CoreResult;
use crate::triggers::{name_index, Topology};
use crate::version::{null_version, FastMap, MaxCache, OrdMap, Version, VersionMap};

mod tracking;

pub use tracking::ChangeLog;
use tracking::IndexSet;

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
    pub index: FastMap<Arc<str>, usize>,
    pub topology: Topology,
    /// Channels whose `update([])` / `consume()` / `finish()` can change something.
    pub volatile: Vec<bool>,
    pub consumable: Vec<bool>,
    pub finishable: Vec<usize>,
    /// Custom (embedder-implemented) channels.
    pub custom: Vec<bool>,
    /// Channels whose `checkpoint()` is never MISSING (topics, barriers, custom).
    pub always_valued: Vec<bool>,
    /// `rank[c]`: position of channel `c`'s name in sorted name order.
    pub rank: Vec<usize>,
}

impl<V> Graph<V> {
    /// Builds the per-graph indexes. `names[i]` is the name of `channels[i]`.
    pub fn new(names: Vec<Arc<str>>, channels: Vec<ChannelSpec<V>>, topology: Topology) -> Self {
        let index = name_index(&names);
        let volatile = channels
            .iter()
            .map(ChannelSpec::reacts_to_empty_update)
            .collect();
        let consumable = channels
            .iter()
            .enumerate()
            .map(|(i, c)| c.reacts_to_consume() && !RESERVED.contains(&&*names[i]))
            .collect();
        let finishable = (0..channels.len())
            .filter(|&i| channels[i].reacts_to_finish())
            .collect();
        let custom = channels
            .iter()
            .map(|c| matches!(c.kind, Kind::Custom { .. }))
            .collect();
        let always_valued = channels
            .iter()
            .map(|c| {
                matches!(
                    c.kind,
                    Kind::Custom { .. } | Kind::Topic { .. } | Kind::Barrier { .. }
                )
            })
            .collect();
        let mut order: Vec<usize> = (0..names.len()).collect();
        order.sort_by(|&a, &b| names[a].cmp(&names[b]));
        let mut rank = vec![0; names.len()];
        for (r, &c) in order.iter().enumerate() {
            rank[c] = r;
        }
        Graph {
            channels,
            names,
            index,
            topology,
            volatile,
            consumable,
            finishable,
            custom,
            always_valued,
            rank,
        }
    }
}

impl<V> Graph<V> {
    /// Resolves a trigger name.
    pub fn trigger(&self, name: &str) -> Trigger {
        match self.index.get(name) {
            Some(&c) => Trigger::Channel(c),
            None => Trigger::Other(name.to_owned()),
        }
    }
}

/// A task trigger: a channel of the graph or any other name.
#[derive(Debug, Clone)]
pub enum Trigger {
    Channel(usize),
    Other(String),
}

/// One task's contribution to `apply_writes`.
#[derive(Debug)]
pub struct TaskWrites<V> {
    pub name: String,
    /// The index of the node named `name`, when the caller knows it (a lookup shortcut;
    /// `None` is always correct).
    pub node: Option<usize>,
    /// `task_path_str(path)`: the sort key (only read when there are several tasks).
    pub sort_key: String,
    /// Triggers (only versioned ones are recorded as seen).
    pub triggers: Vec<Trigger>,
    /// Writes to known channels, already stripped of reserved keys.
    pub writes: Vec<(usize, V)>,
}

const NO_SLOT: usize = usize::MAX;

/// The mutable state of one run.
///
/// Besides LangGraph's state it keeps indexes that make a super-step cost O(work done):
/// each channel's slot in `versions`, the running maximum version, the volatile channels that
/// may be available, the channels that may have a checkpoint value, and change logs of the
/// `versions` / `seen` slots for incremental readers.
#[derive(Debug)]
pub struct Run<V> {
    /// Channel states; whatever may change `states[c]` also bumps `state_gen[c]`.
    pub states: Vec<State<V>>,
    /// Per channel: a counter bumped by every operation that may change its state (so a
    /// reader can tell that a value it copied earlier is still current).
    pub state_gen: Vec<u64>,
    versions: VersionMap,
    seen: OrdMap<VersionMap>,
    /// Sorted names updated by the last `apply_writes` (or restored / set).
    updated: Vec<Arc<str>>,
    /// The channel indices among `updated`, in the same order.
    updated_idx: Vec<usize>,
    chan_slot: Vec<usize>,
    /// Per node: its slot in `seen` (`NO_SLOT` until it has an entry).
    node_seen: Vec<usize>,
    max: MaxCache,
    live: IndexSet,
    valued: IndexSet,
    /// Slots of `versions` changed (or added), in order.
    pub version_log: ChangeLog,
    /// Slots of `seen` changed (or added), in order.
    pub seen_log: ChangeLog,
    gen: u32,
    consumed_at: Vec<u32>,
    updated_at: Vec<u32>,
    group_at: Vec<u32>,
    group_idx: Vec<u32>,
    /// Scratch buffers of `apply_writes`, reused across steps.
    order: Vec<usize>,
    groups: Vec<Vec<V>>,
    spare_updated: Vec<usize>,
    /// Whether `versions` / `seen` have been given their full capacity.
    reserved: bool,
}

impl<V> Run<V> {
    /// A run over restored state (`states[c]` for each channel of `graph`).
    pub fn new(
        graph: &Graph<V>,
        states: Vec<State<V>>,
        versions: VersionMap,
        seen: OrdMap<VersionMap>,
        updated: Vec<Arc<str>>,
    ) -> Self {
        let n = graph.channels.len();
        let chan_slot = if versions.is_empty() {
            vec![NO_SLOT; n]
        } else {
            graph
                .names
                .iter()
                .map(|name| versions.slot(name).unwrap_or(NO_SLOT))
                .collect()
        };
        let max = MaxCache::new(&versions);
        let node_seen = graph
            .topology
            .nodes
            .iter()
            .map(|node| seen.slot(&node.name).unwrap_or(NO_SLOT))
            .collect();
        let mut live = IndexSet::new(n);
        let mut valued = IndexSet::new(n);
        for c in 0..n {
            if graph.volatile[c] {
                live.insert(c);
            }
            valued.insert(c);
        }
        let mut run = Run {
            states,
            state_gen: vec![0; n],
            versions,
            seen,
            updated: Vec::new(),
            updated_idx: Vec::new(),
            chan_slot,
            node_seen,
            max,
            live,
            valued,
            version_log: ChangeLog::default(),
            seen_log: ChangeLog::default(),
            gen: 0,
            consumed_at: vec![0; n],
            updated_at: vec![0; n],
            group_at: vec![0; n],
            group_idx: vec![0; n],
            order: Vec::new(),
            groups: Vec::new(),
            spare_updated: Vec::new(),
            reserved: false,
        };
        run.set_updated(graph, updated);
        run
    }

    pub fn versions(&self) -> &VersionMap {
        &self.versions
    }

    pub fn seen(&self) -> &OrdMap<VersionMap> {
        &self.seen
    }

    /// The last step's updated channel names (sorted).
    pub fn updated(&self) -> &[Arc<str>] {
        &self.updated
    }

    /// The channel indices of `updated()`; `None` if some name is not a channel.
    pub fn updated_channels(&self) -> Option<&[usize]> {
        (self.updated_idx.len() == self.updated.len()).then_some(&self.updated_idx[..])
    }

    /// Replaces the trigger hint for the next step (sorted and deduplicated here).
    pub fn set_updated(&mut self, graph: &Graph<V>, mut names: Vec<Arc<str>>) {
        names.sort();
        names.dedup();
        self.updated_idx = names
            .iter()
            .filter_map(|n| graph.index.get(n).copied())
            .collect();
        self.updated = names;
    }

    /// The current version of channel `c`.
    pub fn channel_version(&self, c: usize) -> Option<&Version> {
        match self.chan_slot[c] {
            NO_SLOT => None,
            s => Some(self.versions.at(s)),
        }
    }

    /// Whether every version is an int or every version is a str (see [`MaxCache`]).
    pub fn versions_homogeneous(&self) -> bool {
        self.max.homogeneous()
    }

    /// Channels that may have a checkpoint value, ascending (a superset; checked by caller).
    pub fn maybe_valued(&mut self) -> &[usize] {
        self.valued.sorted()
    }

    /// Drops from [`Run::maybe_valued`] the channels whose state is now empty.
    pub fn prune_valued(&mut self, graph: &Graph<V>) {
        let states = &self.states;
        self.valued.retain(|c| {
            graph.always_valued[c]
                || !matches!(
                    states[c],
                    State::Value(None) | State::Deferred { value: None, .. }
                )
        });
    }

    /// The slot of channel `c` in `versions()`.
    pub fn channel_slot(&self, c: usize) -> Option<usize> {
        (self.chan_slot[c] != NO_SLOT).then_some(self.chan_slot[c])
    }

    /// The PULL tasks that fire now, in LangGraph's order.
    pub fn firing_nodes<O: ValueOps<V = V>>(
        &self,
        graph: &Graph<V>,
        ops: &O,
    ) -> CoreResult<Vec<usize>, O::Err> {
        let mut out = Vec::new();
        self.firing_nodes_into(graph, ops, &mut out)?;
        Ok(out)
    }

    /// [`Run::firing_nodes`] into a reused buffer (cleared first).
    pub fn firing_nodes_into<O: ValueOps<V = V>>(
        &self,
        graph: &Graph<V>,
        ops: &O,
        out: &mut Vec<usize>,
    ) -> CoreResult<(), O::Err> {
        out.clear();
        let Some(null) = null_version(&self.versions) else {
            return Ok(());
        };
        let topo = &graph.topology;
        topo.candidates_into(
            &self.updated_idx,
            !self.updated.is_empty(),
            !self.versions.is_empty(),
            out,
        );
        let mut keep = 0;
        for i in 0..out.len() {
            let n = out[i];
            let seen = match self.node_seen[n] {
                NO_SLOT => None,
                s => Some(self.seen.at(s)),
            };
            let avail = |c: usize| graph.channels[c].is_available(&self.states[c], ops);
            let version_of = |c: usize| self.channel_version(c);
            if topo.fires(n, &graph.names, version_of, seen, &null, avail)? {
                out[keep] = n;
                keep += 1;
            }
        }
        out.truncate(keep);
        Ok(())
    }

    fn set_version(&mut self, graph: &Graph<V>, c: usize, v: &Option<Version>) {
        let Some(v) = v else { return };
        let slot = self.chan_slot[c];
        if slot == NO_SLOT {
            self.max.replace(None, v);
            let s = self.versions.insert_arc(&graph.names[c], v.clone());
            self.chan_slot[c] = s;
            self.version_log.push(s);
        } else {
            self.max.replace(Some(self.versions.at(slot)), v);
            self.versions.set_at(slot, v.clone());
            self.version_log.push(slot);
        }
    }

    fn seen_slot(&mut self, graph: &Graph<V>, name: &str) -> usize {
        match self.seen.slot(name) {
            Some(s) => s,
            None => {
                let s = self.seen.insert(name, VersionMap::new());
                self.seen_log.push(s);
                if let Some(&n) = graph.topology.node_index.get(name) {
                    self.node_seen[n] = s;
                }
                s
            }
        }
    }

    fn next_gen(&mut self) -> u32 {
        if self.gen == u32::MAX {
            self.gen = 0;
            for v in [
                &mut self.consumed_at,
                &mut self.updated_at,
                &mut self.group_at,
            ] {
                v.iter_mut().for_each(|x| *x = 0);
            }
        }
        self.gen += 1;
        self.gen
    }

    /// LangGraph's `apply_writes`. `next_version` is called once with the current maximum
    /// version when given (`None` leaves versions untouched). Returns the updated channels
    /// (indices, in sorted name order). The tasks' `writes` are drained (the caller may reuse
    /// the buffers); the tasks may be reordered.
    pub fn apply_writes<O, F>(
        &mut self,
        graph: &Graph<V>,
        tasks: &mut [TaskWrites<V>],
        next_version: Option<F>,
        ops: &O,
    ) -> CoreResult<&[usize], O::Err>
    where
        O: ValueOps<V = V>,
        F: FnOnce(Option<&Version>) -> CoreResult<Option<Version>, O::Err>,
    {
        if !self.reserved {
            // Room for every channel's version and every node's entry, once per run.
            self.reserved = true;
            let chans = graph.channels.len().saturating_sub(self.versions.len());
            self.versions.reserve(chans);
            let nodes = (graph.topology.nodes.len() + 1).saturating_sub(self.seen.len());
            self.seen.reserve(nodes);
        }
        if tasks.len() > 1 {
            tasks.sort_by(|a, b| a.sort_key.cmp(&b.sort_key));
        }
        let bump_step = tasks.iter().any(|t| !t.triggers.is_empty());

        for t in tasks.iter() {
            let slot = match t.node {
                Some(n) if self.node_seen[n] != NO_SLOT => self.node_seen[n],
                Some(n) => {
                    // A node without an entry: `node_seen` says its name is not in `seen`.
                    let entry = VersionMap::with_capacity(t.triggers.len());
                    let s = self
                        .seen
                        .push_absent(graph.topology.nodes[n].name.clone(), entry);
                    self.seen_log.push(s);
                    self.node_seen[n] = s;
                    s
                }
                None => self.seen_slot(graph, &t.name),
            };
            let mut changed = false;
            for trig in &t.triggers {
                match trig {
                    Trigger::Channel(c) => {
                        if let Some(v) = self.channel_version(*c).cloned() {
                            self.seen.at_mut(slot).insert_arc(&graph.names[*c], v);
                            changed = true;
                        }
                    }
                    Trigger::Other(s) => {
                        if let Some(v) = self.versions.get(s).cloned() {
                            self.seen.at_mut(slot).insert(s, v);
                            changed = true;
                        }
                    }
                }
            }
            if changed {
                self.seen_log.push(slot);
            }
        }

        let next = match next_version {
            None => None,
            Some(f) => {
                let cur = self.max.get(&self.versions)?;
                f(cur.as_ref())?
            }
        };

        let g = self.next_gen();
        for t in tasks.iter() {
            for trig in &t.triggers {
                if let Trigger::Channel(c) = *trig {
                    if graph.consumable[c] && self.consumed_at[c] != g {
                        self.consumed_at[c] = g;
                        self.state_gen[c] += 1;
                        if graph.channels[c].consume(&mut self.states[c], ops)? {
                            self.set_version(graph, c, &next);
                        }
                    }
                }
            }
        }

        // Group the writes per channel (first-write order), in reused buffers.
        let mut order = std::mem::take(&mut self.order);
        let mut groups = std::mem::take(&mut self.groups);
        order.clear();
        for t in tasks.iter_mut() {
            for (c, v) in t.writes.drain(..) {
                if self.group_at[c] != g {
                    self.group_at[c] = g;
                    let gi = order.len();
                    self.group_idx[c] = gi as u32;
                    order.push(c);
                    match groups.get_mut(gi) {
                        Some(buf) => buf.clear(),
                        None => groups.push(Vec::new()),
                    }
                }
                groups[self.group_idx[c] as usize].push(v);
            }
        }

        let mut updated = std::mem::take(&mut self.spare_updated);
        updated.clear();
        for (i, &c) in order.iter().enumerate() {
            if graph.volatile[c] {
                self.live.insert(c);
            }
            self.valued.insert(c);
            let spec = &graph.channels[c];
            self.state_gen[c] += 1;
            if spec.update_drain(&mut self.states[c], &mut groups[i], ops)? && next.is_some() {
                self.set_version(graph, c, &next);
                if spec.is_available(&self.states[c], ops)? {
                    self.updated_at[c] = g;
                    updated.push(c);
                }
            }
        }

        if bump_step {
            let n_live = self.live.sorted().len();
            for i in 0..n_live {
                let c = self.live.items[i];
                let spec = &graph.channels[c];
                if self.updated_at[c] != g
                    && spec.is_available(&self.states[c], ops)?
                    && {
                        self.state_gen[c] += 1;
                        spec.update(&mut self.states[c], Vec::new(), ops)?
                    }
                    && next.is_some()
                {
                    self.set_version(graph, c, &next);
                    if spec.is_available(&self.states[c], ops)? {
                        self.updated_at[c] = g;
                        updated.push(c);
                    }
                }
            }
            // Non-custom volatile channels only become available through an update.
            let states = &self.states;
            self.live.retain(|c| {
                graph.custom[c]
                    || graph.channels[c]
                        .is_available(&states[c], ops)
                        .unwrap_or(true)
            });
        }

        let updates_trigger = updated.iter().any(|&c| graph.topology.is_trigger(c));
        if bump_step && !updates_trigger {
            for &c in &graph.finishable {
                let spec = &graph.channels[c];
                self.state_gen[c] += 1;
                if spec.finish(&mut self.states[c], ops)? && next.is_some() {
                    self.set_version(graph, c, &next);
                    if spec.is_available(&self.states[c], ops)? && self.updated_at[c] != g {
                        self.updated_at[c] = g;
                        updated.push(c);
                    }
                }
            }
        }

        self.order = order;
        self.groups = groups;
        updated.sort_unstable_by_key(|&c| graph.rank[c]);
        self.updated.clear();
        self.updated
            .extend(updated.iter().map(|&c| graph.names[c].clone()));
        self.spare_updated = std::mem::replace(&mut self.updated_idx, updated);
        Ok(&self.updated_idx)
    }

    /// On resume: `versions_seen["__interrupt__"][k] = channel_versions[k]` for every channel
    /// (in channel order) that has a version; other entries are kept.
    pub fn mark_interrupt_seen(&mut self, graph: &Graph<V>) {
        let slot = self.seen_slot(graph, "__interrupt__");
        for (c, name) in graph.names.iter().enumerate() {
            let s = self.chan_slot[c];
            if s != NO_SLOT {
                let v = self.versions.at(s).clone();
                self.seen.at_mut(slot).insert_arc(name, v);
            }
        }
        self.seen_log.push(slot);
    }
}

#[cfg(test)]
mod tests;
