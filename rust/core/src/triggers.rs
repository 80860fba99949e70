//! The node/trigger topology of a graph: `trigger_to_nodes`, candidate selection for the next
//! step, LangGraph's `_triggers` rule and `should_interrupt`.

use std::sync::Arc;

use crate::error::{CoreError, CoreResult};
use crate::version::{null_version, py_gt, FastMap, OrdMap, Version, VersionMap};

/// What a node reads as its input.
#[derive(Debug, Clone)]
pub enum ReadSpec {
    /// A single channel (`None` when the name is not a channel: the node never gets a task).
    One(Option<usize>),
    /// Several channels (names that are not channels are skipped: managed values).
    Many(Vec<usize>),
}

/// A node as far as scheduling is concerned.
#[derive(Debug, Clone)]
pub struct NodeSpec {
    pub name: Arc<str>,
    /// Trigger channel indices, in declaration order.
    pub triggers: Vec<usize>,
    /// `sorted(triggers)` names (task id parts and the task's `triggers`).
    pub sorted_triggers: Vec<Arc<str>>,
    pub read: ReadSpec,
}

/// Nodes and the channel -> nodes index, built once per graph.
#[derive(Debug, Clone)]
pub struct Topology {
    pub nodes: Vec<NodeSpec>,
    pub node_index: FastMap<Arc<str>, usize>,
    /// Per channel: nodes it triggers, in node order.
    pub trigger_to_nodes: Vec<Vec<usize>>,
    /// `rank[node]`: position of the node name in sorted name order.
    pub rank: Vec<usize>,
    /// Whether any node has a trigger (`trigger_to_nodes` non-empty).
    pub has_triggers: bool,
}

impl Topology {
    /// Builds the topology. `nodes` are (name, trigger names, read) with read already resolved.
    pub fn new<E>(
        channel_index: &FastMap<Arc<str>, usize>,
        n_channels: usize,
        nodes: Vec<(String, Vec<String>, ReadSpec)>,
    ) -> CoreResult<Topology, E> {
        let mut trigger_to_nodes = vec![Vec::new(); n_channels];
        let mut specs = Vec::with_capacity(nodes.len());
        let mut node_index = FastMap::default();
        for (i, (name, triggers, read)) in nodes.into_iter().enumerate() {
            let mut idx = Vec::with_capacity(triggers.len());
            for t in &triggers {
                let c = *channel_index.get(t.as_str()).ok_or_else(|| {
                    CoreError::InvalidArgument(format!(
                        "node '{name}' is triggered by '{t}', which is not a channel"
                    ))
                })?;
                if !trigger_to_nodes[c].contains(&i) {
                    trigger_to_nodes[c].push(i);
                }
                idx.push(c);
            }
            let mut sorted: Vec<Arc<str>> =
                triggers.iter().map(|t| Arc::from(t.as_str())).collect();
            sorted.sort();
            let name: Arc<str> = Arc::from(name.as_str());
            if node_index.insert(name.clone(), i).is_some() {
                return Err(CoreError::InvalidArgument(format!(
                    "duplicate node name '{name}'"
                )));
            }
            specs.push(NodeSpec {
                name,
                triggers: idx,
                sorted_triggers: sorted,
                read,
            });
        }
        let mut order: Vec<usize> = (0..specs.len()).collect();
        order.sort_by(|&a, &b| specs[a].name.cmp(&specs[b].name));
        let mut rank = vec![0; specs.len()];
        for (r, &n) in order.iter().enumerate() {
            rank[n] = r;
        }
        let has_triggers = trigger_to_nodes.iter().any(|v| !v.is_empty());
        Ok(Topology {
            nodes: specs,
            node_index,
            trigger_to_nodes,
            rank,
            has_triggers,
        })
    }

    /// Whether channel `c` triggers some node.
    pub fn is_trigger(&self, c: usize) -> bool {
        !self.trigger_to_nodes[c].is_empty()
    }

    /// The nodes to check for the next step, in LangGraph's order.
    ///
    /// `updated` are the known channel indices of the previous step's updated channels and
    /// `any_updated` whether that set (including names that are not channels) is non-empty.
    /// Costs O(candidates log candidates) when `updated` is non-empty.
    pub fn candidates(
        &self,
        updated: &[usize],
        any_updated: bool,
        has_versions: bool,
    ) -> Vec<usize> {
        let mut out = Vec::new();
        self.candidates_into(updated, any_updated, has_versions, &mut out);
        out
    }

    /// [`Topology::candidates`] appended to `out`.
    pub fn candidates_into(
        &self,
        updated: &[usize],
        any_updated: bool,
        has_versions: bool,
        out: &mut Vec<usize>,
    ) {
        let start = out.len();
        if any_updated && self.has_triggers {
            for &c in updated {
                out.extend_from_slice(&self.trigger_to_nodes[c]);
            }
            if out.len() - start > 1 {
                out[start..].sort_unstable_by_key(|&n| self.rank[n]);
                let mut w = start + 1;
                for r in start + 1..out.len() {
                    if out[r] != out[w - 1] {
                        out[w] = out[r];
                        w += 1;
                    }
                }
                out.truncate(w);
            }
        } else if has_versions {
            out.extend(0..self.nodes.len());
        }
    }

    /// LangGraph's `_triggers`: whether node `n` fires. `version_of(c)` is the channel's current
    /// version, `available(c)` its availability.
    pub fn fires<'a, E>(
        &self,
        n: usize,
        channel_names: &[Arc<str>],
        version_of: impl Fn(usize) -> Option<&'a Version>,
        seen: Option<&VersionMap>,
        null: &'a Version,
        mut available: impl FnMut(usize) -> CoreResult<bool, E>,
    ) -> CoreResult<bool, E> {
        let node = &self.nodes[n];
        match seen {
            None => {
                for &c in &node.triggers {
                    if available(c)? {
                        return Ok(true);
                    }
                }
            }
            Some(seen) => {
                for &c in &node.triggers {
                    if available(c)? {
                        let cur = version_of(c).unwrap_or(null);
                        let old = seen.get(&channel_names[c]).unwrap_or(null);
                        if py_gt(Some(cur), Some(old))? {
                            return Ok(true);
                        }
                    }
                }
            }
        }
        Ok(false)
    }
}

/// LangGraph's `should_interrupt`: whether any channel changed since the last interrupt and
/// any task matches `interrupt_nodes` (`None` means `"*"`: every task not hidden).
pub fn should_interrupt<E>(
    versions: &VersionMap,
    seen: &OrdMap<VersionMap>,
    interrupt_nodes: Option<&[String]>,
    tasks: &[(String, bool)],
) -> CoreResult<bool, E> {
    let null = null_version(versions);
    let interrupt_seen = seen.get("__interrupt__");
    let mut any_update = false;
    for (chan, version) in versions.iter() {
        let old = interrupt_seen.and_then(|s| s.get(chan)).or(null.as_ref());
        if py_gt(Some(version), old)? {
            any_update = true;
            break;
        }
    }
    if !any_update {
        return Ok(false);
    }
    Ok(tasks.iter().any(|(name, hidden)| match interrupt_nodes {
        None => !hidden,
        Some(nodes) => nodes.iter().any(|n| n == name),
    }))
}

/// The position of each name in `names`: the index `Topology::new` and the engine's graph
/// take (built once per graph).
pub fn name_index(names: &[Arc<str>]) -> FastMap<Arc<str>, usize> {
    names
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, n)| (n, i))
        .collect()
}

/// Test helpers shared by this crate's unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// A topology over `channels` whose nodes (name, trigger channels) read nothing.
    pub fn topology(channels: &[&str], nodes: &[(&str, &[&str])]) -> (Topology, Vec<Arc<str>>) {
        let names: Vec<Arc<str>> = channels.iter().map(|c| Arc::from(*c)).collect();
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
        let topology = Topology::new::<()>(&name_index(&names), names.len(), nodes).unwrap();
        (topology, names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_follow_langgraph() {
        let (t, _) = testing::topology(
            &["a", "b", "c"],
            &[("zeta", &["a"]), ("alpha", &["a", "b"]), ("mid", &["c"])],
        );
        assert_eq!(t.trigger_to_nodes, vec![vec![0, 1], vec![1], vec![2]]);
        // Sorted by node name, deduplicated.
        assert_eq!(t.candidates(&[0, 1], true, true), vec![1, 0]);
        // Updated names that are not channels: non-empty set, no candidates.
        assert_eq!(t.candidates(&[], true, true), Vec::<usize>::new());
        // Empty hint: every node in order, or none without versions.
        assert_eq!(t.candidates(&[], false, true), vec![0, 1, 2]);
        assert!(t.candidates(&[], false, false).is_empty());
        assert!(Topology::new::<()>(
            &FastMap::default(),
            0,
            vec![("n".into(), vec!["x".into()], ReadSpec::One(None))]
        )
        .is_err());
    }

    #[test]
    fn triggers_rule() {
        let (t, names) = testing::topology(&["a", "b"], &[("n", &["a", "b"])]);
        let mut versions = VersionMap::new();
        versions.insert("a", Version::Int(2));
        versions.insert("b", Version::Int(1));
        let null = Version::Int(0);
        let vo = |c: usize| versions.get(&names[c]);
        let avail = |c: usize| -> CoreResult<bool, ()> { Ok(c == 1) };
        // Never ran: any available trigger fires.
        assert!(t.fires(0, &names, vo, None, &null, avail).unwrap());
        // Seen b at 1: b is not newer; a is newer but unavailable.
        let mut seen = VersionMap::new();
        seen.insert("a", Version::Int(1));
        seen.insert("b", Version::Int(1));
        assert!(!t.fires(0, &names, vo, Some(&seen), &null, avail).unwrap());
        seen.insert("b", Version::Int(0));
        assert!(t.fires(0, &names, vo, Some(&seen), &null, avail).unwrap());
        // A seen entry without the channel compares with the null version.
        let empty = VersionMap::new();
        assert!(t.fires(0, &names, vo, Some(&empty), &null, avail).unwrap());
    }

    #[test]
    fn interrupts() {
        let mut versions = VersionMap::new();
        versions.insert("a", Version::str("2"));
        let mut seen = OrdMap::new();
        let tasks = vec![("n".to_string(), false), ("h".to_string(), true)];
        assert!(should_interrupt::<()>(&versions, &seen, None, &tasks).unwrap());
        assert!(
            !should_interrupt::<()>(&versions, &seen, Some(&["x".to_string()]), &tasks).unwrap()
        );
        assert!(
            should_interrupt::<()>(&versions, &seen, Some(&["h".to_string()]), &tasks).unwrap()
        );
        let mut s = VersionMap::new();
        s.insert("a", Version::str("2"));
        seen.insert("__interrupt__", s);
        assert!(!should_interrupt::<()>(&versions, &seen, None, &tasks).unwrap());
        assert!(
            !should_interrupt::<()>(&versions, &seen, None, &[("h".to_string(), true)]).unwrap()
        );
    }
}
