//! Unit tests of `apply_writes` / PULL-task selection over plain Rust values.
use super::*;
use crate::channel::testing::*;
use crate::channel::Kind;
use crate::version::increment;

fn graph(chans: Vec<(&str, Kind<Val>)>, nodes: &[(&str, &[&str])]) -> Graph<Val> {
    let channels: Vec<&str> = chans.iter().map(|(n, _)| *n).collect();
    let (topo, names) = crate::triggers::testing::topology(&channels, nodes);
    let specs = chans.into_iter().map(|(n, k)| spec(n, k)).collect();
    Graph::new(names, specs, topo)
}

fn run(g: &Graph<Val>) -> Run<Val> {
    Run::new(
        g,
        g.channels.iter().map(|c| c.empty_state(&TestOps)).collect(),
        VersionMap::new(),
        OrdMap::new(),
        Vec::new(),
    )
}

fn names(g: &Graph<Val>, up: &[usize]) -> Vec<String> {
    up.iter().map(|&c| g.names[c].to_string()).collect()
}

fn task(
    g: &Graph<Val>,
    name: &str,
    path: &str,
    triggers: &[&str],
    writes: Vec<(usize, Val)>,
) -> TaskWrites<Val> {
    TaskWrites {
        name: name.into(),
        node: g.topology.node_index.get(name).copied(),
        sort_key: path.into(),
        triggers: triggers.iter().map(|s| g.trigger(s)).collect(),
        writes,
    }
}

/// A PULL task of `node` (its task path is the node's name).
fn pull(
    g: &Graph<Val>,
    node: &str,
    triggers: &[&str],
    writes: Vec<(usize, Val)>,
) -> TaskWrites<Val> {
    task(
        g,
        node,
        &format!("~__pregel_pull, {node}"),
        triggers,
        writes,
    )
}

/// The input "task" (no triggers, no path).
fn input(g: &Graph<Val>, writes: Vec<(usize, Val)>) -> TaskWrites<Val> {
    task(g, "__input__", "", &[], writes)
}

/// `apply_writes` over owned tasks; checks the writes were drained.
fn apply<F>(
    r: &mut Run<Val>,
    g: &Graph<Val>,
    mut tasks: Vec<TaskWrites<Val>>,
    next: Option<F>,
    ops: &TestOps,
) -> CoreResult<Vec<usize>, String>
where
    F: FnOnce(Option<&Version>) -> CoreResult<Option<Version>, String>,
{
    let up = r.apply_writes(g, &mut tasks, next, ops)?.to_vec();
    assert!(tasks.iter().all(|t| t.writes.is_empty()));
    assert_eq!(r.updated_channels(), Some(&up[..]));
    Ok(up)
}

/// `apply` of one task's writes, which must succeed.
fn apply_one(
    r: &mut Run<Val>,
    g: &Graph<Val>,
    t: TaskWrites<Val>,
    next: Option<Inc>,
) -> Vec<usize> {
    apply(r, g, vec![t], next, &TestOps).unwrap()
}

type Inc = fn(Option<&Version>) -> CoreResult<Option<Version>, String>;
fn inc() -> Option<Inc> {
    Some(|v| increment(v).map(Some))
}

fn ver(r: &Run<Val>, c: &str) -> Option<i64> {
    match r.versions().get(c) {
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
    let up = apply_one(&mut r, &g, input(&g, vec![(0, Val::None)]), inc());
    assert_eq!(names(&g, &up), vec!["start"]);
    assert_eq!(ver(&r, "start"), Some(1));
    // No triggers: no finish/empty pass; versions_seen gets an empty entry.
    assert!(r.seen().get("__input__").unwrap().is_empty());
    assert_eq!(r.firing_nodes(&g, &TestOps).unwrap(), vec![0]);

    let l = |x: &str| Val::List(vec![s(x)]);
    let tasks = vec![
        task(
            &g,
            "z",
            "~__pregel_push, 0000000001, False",
            &["__pregel_push"],
            vec![(1, l("push1"))],
        ),
        pull(&g, "a", &["start"], vec![(1, l("a")), (2, Val::None)]),
        task(
            &g,
            "y",
            "~__pregel_push, 0000000000, False",
            &["__pregel_push"],
            vec![(1, l("push0"))],
        ),
    ];
    let up = apply(&mut r, &g, tasks, inc(), &TestOps).unwrap();
    // The ephemeral start channel was cleared (bumped, not reported).
    assert_eq!(names(&g, &up), vec!["branch:to:b", "log"]);
    assert_eq!(ver(&r, "start"), Some(2));
    assert_eq!(ver(&r, "log"), Some(2));
    assert_eq!(ver(&r, "branch:to:b"), Some(2));
    assert!(
        matches!(&r.states[1], State::Value(Some(Val::List(v))) if *v == vec![s("a"), s("push0"), s("push1")])
    );
    // Pre-bump version recorded as seen.
    assert_eq!(
        r.seen().get("a").unwrap().get("start"),
        Some(&Version::Int(1))
    );
    assert!(r.seen().get("y").unwrap().is_empty());
    assert_eq!(r.firing_nodes(&g, &TestOps).unwrap(), vec![1]);
    assert_eq!(
        r.seen().iter().map(|(k, _)| k).collect::<Vec<_>>(),
        vec!["__input__", "a", "y", "z"]
    );
}

#[test]
fn no_next_version_leaves_versions() {
    let g = graph(vec![("a", Kind::LastValue)], &[("n", &["a"])]);
    let mut r = run(&g);
    let up = apply_one(
        &mut r,
        &g,
        task(&g, "t", "", &["a"], vec![(0, Val::Int(1))]),
        None::<Inc>,
    );
    assert!(up.is_empty());
    assert!(r.versions().is_empty());
    assert!(matches!(&r.states[0], State::Value(Some(Val::Int(1)))));
}

#[test]
fn barrier_consume_and_deferred_finish() {
    let g = graph(
        vec![
            ("join", barrier_kind(&["a", "b"], false)),
            ("branch:to:d", Kind::LastValueAfterFinish),
            ("x", Kind::LastValue),
        ],
        &[("c", &["join"]), ("d", &["branch:to:d"]), ("a", &["x"])],
    );
    let mut r = run(&g);
    apply_one(&mut r, &g, input(&g, vec![(2, Val::Int(0))]), inc());
    // a and b write the join; a also defers d. "join" triggers c, so no finish pass.
    let up = apply(
        &mut r,
        &g,
        vec![
            pull(&g, "a", &["x"], vec![(0, s("a")), (1, Val::None)]),
            pull(&g, "b", &["x"], vec![(0, s("b"))]),
        ],
        inc(),
        &TestOps,
    )
    .unwrap();
    assert_eq!(names(&g, &up), vec!["join"]);
    assert_eq!(ver(&r, "branch:to:d"), Some(2));
    assert_eq!(r.firing_nodes(&g, &TestOps).unwrap(), vec![0]);
    // c consumes the barrier; nothing that triggers is updated -> finish makes d available.
    let up = apply_one(&mut r, &g, pull(&g, "c", &["join"], vec![]), inc());
    assert_eq!(names(&g, &up), vec!["branch:to:d"]);
    assert_eq!(ver(&r, "join"), Some(3));
    assert_eq!(ver(&r, "branch:to:d"), Some(3));
    assert_eq!(r.firing_nodes(&g, &TestOps).unwrap(), vec![1]);
    // d consumes its deferred trigger.
    let up = apply_one(&mut r, &g, pull(&g, "d", &["branch:to:d"], vec![]), inc());
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
        task(&g, "x", "1", &[], vec![(0, Val::Int(1))]),
        task(&g, "y", "2", &[], vec![(0, Val::Int(2))]),
    ];
    assert!(matches!(
        apply(&mut r, &g, two, inc(), &TestOps),
        Err(crate::error::CoreError::InvalidUpdate(_))
    ));
    let bad = vec![task(&g, "x", "1", &[], vec![(1, Val::Int(1))])];
    assert!(matches!(
        apply(&mut r, &g, bad, inc(), &TestOps),
        Err(crate::error::CoreError::External(_))
    ));
}

#[test]
fn interrupt_seen_copies_versions() {
    let g = graph(vec![("a", Kind::LastValue)], &[]);
    let mut r = run(&g);
    apply_one(&mut r, &g, input(&g, vec![(0, Val::Int(1))]), inc());
    r.mark_interrupt_seen(&g);
    assert_eq!(
        r.seen().get("__interrupt__").unwrap().get("a"),
        Some(&Version::Int(1))
    );
}

#[test]
fn node_hint_and_name_agree_on_seen() {
    // A node's seen entry counts whether the task named it with or without the index hint,
    // and restored entries are found too.
    let g = graph(
        vec![("a", Kind::LastValue), ("b", Kind::LastValue)],
        &[("x", &["a"]), ("y", &["b"])],
    );
    for hint in [false, true] {
        let mut r = run(&g);
        let first = vec![input(&g, vec![(0, Val::Int(1))])];
        apply(&mut r, &g, first, inc(), &TestOps).unwrap();
        assert_eq!(r.firing_nodes(&g, &TestOps).unwrap(), vec![0]);
        let mut t = task(&g, "x", "", &["a"], vec![]);
        if !hint {
            t.node = None;
        }
        apply(&mut r, &g, vec![t], inc(), &TestOps).unwrap();
        // x saw a's version: it no longer fires (nothing triggers y either).
        r.set_updated(&g, vec![]);
        assert_eq!(r.firing_nodes(&g, &TestOps).unwrap(), Vec::<usize>::new());
        let restored = Run::new(
            &g,
            g.channels.iter().map(|c| c.empty_state(&TestOps)).collect(),
            r.versions().clone(),
            r.seen().clone(),
            Vec::new(),
        );
        assert_eq!(restored.seen().get("x").map(|m| m.len()), Some(1));
    }
}

#[test]
fn state_gen_counts_every_possible_state_change() {
    // two channels, only "a" written: its generation moves, "b"'s does not, even when
    // no versions are kept (next_version None) and the value did change
    let g = graph(
        vec![("a", Kind::LastValue), ("b", Kind::LastValue)],
        &[("n", &["a"])],
    );
    let mut r = run(&g);
    assert_eq!(r.state_gen, vec![0, 0]);
    apply_one(
        &mut r,
        &g,
        task(&g, "t", "", &["a"], vec![(0, Val::Int(1))]),
        None::<Inc>,
    );
    assert!(r.versions().is_empty());
    assert!(r.state_gen[0] > 0);
    assert_eq!(r.state_gen[1], 0);
    let before = r.state_gen[0];
    apply_one(
        &mut r,
        &g,
        task(&g, "t", "", &["a"], vec![(0, Val::Int(2))]),
        None::<Inc>,
    );
    assert!(r.state_gen[0] > before);
    assert_eq!(r.state_gen[1], 0);
}

#[test]
fn versions_seen_updates_are_recorded_in_the_change_log() {
    // The binding re-encodes only the `versions_seen` entries the change log names, so an
    // update of an existing entry that is not recorded would leave a stale checkpoint.
    let g = graph(
        vec![
            ("start", Kind::LastValue),
            ("x", Kind::LastValue),
            ("never", Kind::LastValue),
        ],
        &[("a", &["start", "never"])],
    );
    let mut r = run(&g);
    let feed = |v: i64| vec![input(&g, vec![(0, Val::Int(v))])];
    apply(&mut r, &g, feed(1), inc(), &TestOps).unwrap();
    let step = |r: &mut Run<Val>, w: i64| {
        let t = pull(&g, "a", &["start"], vec![(1, Val::Int(w))]);
        apply(r, &g, vec![t], inc(), &TestOps).unwrap();
    };
    step(&mut r, 10); // creates the entry for "a"
    let slot = r.seen.slot("a").expect("an entry for a");
    assert_eq!(
        r.seen().get("a").unwrap().get("start"),
        Some(&Version::Int(1))
    );
    // A new input bumps "start"; the task then sees version 3: the existing entry changes.
    apply(&mut r, &g, feed(2), inc(), &TestOps).unwrap();
    let pos = r.seen_log.pos();
    step(&mut r, 20);
    assert_eq!(
        r.seen().get("a").unwrap().get("start"),
        Some(&Version::Int(3))
    );
    let changed = r.seen_log.since(pos).expect("log kept");
    assert!(
        changed.contains(&slot),
        "versions_seen[a] changed but not logged: {changed:?}"
    );
    // A task whose triggers have no version changes nothing and records nothing.
    let pos = r.seen_log.pos();
    let t = pull(&g, "a", &["never"], vec![]);
    apply(&mut r, &g, vec![t], inc(), &TestOps).unwrap();
    assert_eq!(r.seen_log.since(pos), Some(&[][..]));
}
