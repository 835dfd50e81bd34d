//! Structure-level mutations of a [`Node`] tree: what a person editing a
//! file gets wrong (a key dropped, doubled, misspelt, a value swapped for
//! another's or for an extreme one) and what an attacker tries (deep
//! nesting, alias bombs, merge keys, tags, huge strings).

use crate::generate::{pick, small_or_large, strings};
use crate::yaml::Node;
use rand::Rng;

/// Makes a fresh scalar for a field named `key`: each target knows what
/// values its fields take.
pub type Fresh<'a, R> = &'a mut dyn FnMut(&mut R, &str) -> Node;

/// What one mutation did, for failure reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    DropEntry,
    DuplicateEntry,
    RenameKey,
    ReplaceScalar,
    Swap,
    ChangeType,
    Nest,
    Repeat,
    AnchorAlias,
    MergeKey,
    AliasBomb,
    Tag,
    InsertKey,
}

const KINDS: &[Kind] = &[
    Kind::DropEntry,
    Kind::DuplicateEntry,
    Kind::RenameKey,
    Kind::ReplaceScalar,
    Kind::ReplaceScalar,
    Kind::ReplaceScalar,
    Kind::Swap,
    Kind::ChangeType,
    Kind::Nest,
    Kind::Repeat,
    Kind::AnchorAlias,
    Kind::MergeKey,
    Kind::AliasBomb,
    Kind::Tag,
    Kind::InsertKey,
];

/// Applies `n` random mutations to `root`; returns what was done. `keys`
/// are names a renamed key may take (usually the tree's own keys).
pub fn mutate<R: Rng>(root: &mut Node, n: usize, keys: &[&str], fresh: Fresh<'_, R>, rng: &mut R) -> Vec<Kind> {
    let mut done = Vec::with_capacity(n);
    for _ in 0..n {
        let kind = *pick(rng, KINDS);
        if apply(root, kind, keys, fresh, rng) {
            done.push(kind);
        }
    }
    done
}

/// One mutation of `kind`; false when the tree offered no place for it.
pub fn apply<R: Rng>(root: &mut Node, kind: Kind, keys: &[&str], fresh: Fresh<'_, R>, rng: &mut R) -> bool {
    let paths = root.paths();
    let choose = |rng: &mut R, ok: &dyn Fn(&Node, Option<&str>) -> bool| -> Option<(Vec<usize>, Option<String>)> {
        let fits: Vec<&(Vec<usize>, Option<String>)> = paths
            .iter()
            .filter(|(p, k)| root.at(p).is_some_and(|n| ok(n, k.as_deref())))
            .collect();
        (!fits.is_empty()).then(|| (*pick(rng, &fits)).clone())
    };
    let collection = |n: &Node, _: Option<&str>| {
        matches!(n, Node::Map(e) if !e.is_empty()) || matches!(n, Node::Seq(s) if !s.is_empty())
    };
    let movable = |n: &Node, _: Option<&str>| !n.holds_secret();
    let scalar = |n: &Node, _: Option<&str>| matches!(n, Node::Plain(_) | Node::Str(_));
    match kind {
        Kind::DropEntry => {
            let Some((p, _)) = choose(rng, &collection) else {
                return false;
            };
            match root.at_mut(&p) {
                Some(Node::Map(e)) => {
                    let i = rng.random_range(0..e.len());
                    e.remove(i);
                }
                Some(Node::Seq(s)) => {
                    let i = rng.random_range(0..s.len());
                    s.remove(i);
                }
                _ => return false,
            }
        }
        Kind::DuplicateEntry => {
            let Some((p, _)) = choose(rng, &collection) else {
                return false;
            };
            match root.at_mut(&p) {
                Some(Node::Map(e)) => {
                    let i = rng.random_range(0..e.len());
                    if e[i].1.holds_secret() {
                        return false;
                    }
                    let copy = e[i].clone();
                    e.insert(i + 1, copy);
                }
                Some(Node::Seq(s)) => {
                    let i = rng.random_range(0..s.len());
                    if s[i].holds_secret() {
                        return false;
                    }
                    let copy = s[i].clone();
                    s.insert(i + 1, copy);
                }
                _ => return false,
            }
        }
        Kind::RenameKey => {
            let has_map = |n: &Node, _: Option<&str>| matches!(n, Node::Map(e) if !e.is_empty());
            let Some((p, _)) = choose(rng, &has_map) else {
                return false;
            };
            let Some(Node::Map(e)) = root.at_mut(&p) else {
                return false;
            };
            let i = rng.random_range(0..e.len());
            // a credential keeps a credential's key, so that it stays where no message may show it
            if e[i].1.holds_secret() {
                return false;
            }
            e[i].0 = renamed(&e[i].0, keys, rng);
        }
        Kind::ReplaceScalar => {
            let Some((p, key)) = choose(rng, &scalar) else {
                return false;
            };
            let value = fresh(rng, key.as_deref().unwrap_or(""));
            if let Some(n) = root.at_mut(&p) {
                *n = value;
            }
        }
        Kind::Swap => {
            let Some((a, _)) = choose(rng, &movable) else {
                return false;
            };
            let Some((b, _)) = choose(rng, &movable) else {
                return false;
            };
            if a.starts_with(&b) || b.starts_with(&a) {
                return false;
            }
            let (Some(x), Some(y)) = (root.at(&a).cloned(), root.at(&b).cloned()) else {
                return false;
            };
            if let Some(n) = root.at_mut(&a) {
                *n = y;
            }
            if let Some(n) = root.at_mut(&b) {
                *n = x;
            }
        }
        Kind::ChangeType => {
            let Some((p, key)) = choose(rng, &movable) else {
                return false;
            };
            let Some(n) = root.at_mut(&p) else { return false };
            let old = std::mem::replace(n, Node::Plain("~".into()));
            *n = match (old, rng.random_range(0..4)) {
                (Node::Map(_) | Node::Seq(_), 0) => Node::Map(vec![]),
                (Node::Map(_) | Node::Seq(_), 1) => Node::Seq(vec![]),
                (Node::Map(_) | Node::Seq(_), _) => fresh(rng, key.as_deref().unwrap_or("")),
                (s, 0) => Node::Seq(vec![s]),
                (s, 1) => Node::Map(vec![(key.unwrap_or_else(|| "value".into()), s)]),
                (_, 2) => Node::Plain(pick(rng, &["~", "null", "{}", "[]", "''", "true"]).to_string()),
                (s, _) => Node::Seq(vec![s.clone(), s]),
            };
        }
        Kind::Nest => {
            let Some((p, _)) = choose(rng, &movable) else {
                return false;
            };
            let depth = *pick(rng, &[2, 3, 10, 63, 64, 65, 100, 254, 256, 1000, 100_000]);
            let maps = rng.random_bool(0.3);
            let Some(n) = root.at_mut(&p) else { return false };
            let inner = std::mem::replace(n, Node::Plain("~".into()));
            *n = Node::Nested {
                depth,
                maps,
                inner: Box::new(inner),
            };
        }
        Kind::Repeat => {
            let seq = |n: &Node, _: Option<&str>| matches!(n, Node::Seq(s) if !s.is_empty()) && !n.holds_secret();
            let Some((p, _)) = choose(rng, &seq) else { return false };
            let times = small_or_large(rng, 4, 3000);
            let Some(Node::Seq(s)) = root.at_mut(&p) else {
                return false;
            };
            let i = rng.random_range(0..s.len());
            let copy = s[i].clone();
            // no more copies than fit the 4 MiB an input is cut to: a deep nesting
            // 3000 times over would take gigabytes to write only to be cut off
            let times = times.min(crate::bytes::MAX_INPUT / copy.approx_len().max(1));
            s.splice(i..i, std::iter::repeat_n(copy, times));
        }
        Kind::AnchorAlias => return anchor_alias(root, &paths, rng),
        Kind::MergeKey => {
            let has_map = |n: &Node, _: Option<&str>| matches!(n, Node::Map(_)) && !n.holds_secret();
            let Some((p, _)) = choose(rng, &has_map) else {
                return false;
            };
            let Some(Node::Map(e)) = root.at_mut(&p) else {
                return false;
            };
            // `<<: *a` either after a real anchor (from an earlier mutation) or dangling
            let target = if rng.random_bool(0.5) { "a0" } else { "nope" };
            let value = if rng.random_bool(0.7) {
                Node::Alias(target.into())
            } else {
                Node::Seq(vec![Node::Alias(target.into()), Node::Alias(target.into())])
            };
            let at = rng.random_range(0..=e.len());
            e.insert(at, ("<<".into(), value));
        }
        Kind::AliasBomb => {
            let Some((p, _)) = choose(rng, &movable) else {
                return false;
            };
            let levels = rng.random_range(2..10);
            let width = rng.random_range(2..10);
            let bomb = alias_bomb(levels, width);
            let Some(n) = root.at_mut(&p) else { return false };
            *n = bomb;
        }
        Kind::Tag => {
            let Some((p, _)) = choose(rng, &movable) else {
                return false;
            };
            let tag = *pick(
                rng,
                &[
                    "!!str",
                    "!!int",
                    "!!float",
                    "!!bool",
                    "!!null",
                    "!!binary",
                    "!!map",
                    "!!seq",
                    "!!timestamp",
                    "!custom",
                    "!<tag:yaml.org,2002:str>",
                    "!",
                    "!include",
                ],
            );
            let Some(n) = root.at_mut(&p) else { return false };
            let inner = std::mem::replace(n, Node::Plain("~".into()));
            *n = Node::Tagged(tag.into(), Box::new(inner));
        }
        Kind::InsertKey => {
            let has_map = |n: &Node, _: Option<&str>| matches!(n, Node::Map(_));
            let Some((p, _)) = choose(rng, &has_map) else {
                return false;
            };
            let key = if rng.random_bool(0.5) {
                pick(rng, keys).to_string()
            } else {
                renamed("key", keys, rng)
            };
            let value = fresh(rng, &key);
            let Some(Node::Map(e)) = root.at_mut(&p) else {
                return false;
            };
            let at = rng.random_range(0..=e.len());
            e.insert(at, (key, value));
        }
    }
    true
}

/// A key that is another known key, a misspelling of this one, or junk.
fn renamed(key: &str, keys: &[&str], rng: &mut impl Rng) -> String {
    match rng.random_range(0..5) {
        0 | 1 if !keys.is_empty() => pick(rng, keys).to_string(),
        2 if !key.is_empty() => {
            // one character changed, dropped or doubled
            let mut chars: Vec<char> = key.chars().collect();
            let i = rng.random_range(0..chars.len());
            match rng.random_range(0..3) {
                0 => chars[i] = char::from(rng.random_range(b'a'..=b'z')),
                1 => {
                    chars.remove(i);
                }
                _ => chars.insert(i, chars[i]),
            }
            chars.into_iter().collect()
        }
        3 => key.to_uppercase(),
        _ => strings(rng),
    }
}

/// Anchors a subtree and replaces a later node with an alias to it (or, now
/// and then, a node before it, or an alias to nothing).
fn anchor_alias(root: &mut Node, paths: &[(Vec<usize>, Option<String>)], rng: &mut impl Rng) -> bool {
    if paths.len() < 3 {
        return false;
    }
    let i = rng.random_range(1..paths.len());
    let a = paths[i].0.clone();
    if root.at(&a).is_none_or(Node::holds_secret) {
        return false;
    }
    let later: Vec<&Vec<usize>> = paths[i + 1..]
        .iter()
        .map(|(p, _)| p)
        .filter(|p| !p.starts_with(&a))
        .collect();
    let (target, name) = match rng.random_range(0..10) {
        0 => (paths[rng.random_range(1..=i)].0.clone(), "a0"),
        1 => (paths[rng.random_range(1..paths.len())].0.clone(), "undefined"),
        _ if !later.is_empty() => ((*pick(rng, &later)).clone(), "a0"),
        _ => return false,
    };
    if a.starts_with(&target) || root.at(&target).is_none_or(Node::holds_secret) {
        return false;
    }
    if let Some(n) = root.at_mut(&target) {
        *n = Node::Alias(name.into());
    }
    if let Some(n) = root.at_mut(&a) {
        let inner = std::mem::replace(n, Node::Plain("~".into()));
        *n = Node::Anchor("a0".into(), Box::new(inner));
    }
    true
}

/// The "billion laughs": each level a list of `width` aliases of the level
/// before, `width^levels` nodes once expanded.
pub fn alias_bomb(levels: usize, width: usize) -> Node {
    let mut entries = vec![(
        "l0".to_string(),
        Node::Anchor("l0".into(), Box::new(Node::Seq(vec![Node::str("lol"); width]))),
    )];
    for l in 1..levels {
        let items = vec![Node::Alias(format!("l{}", l - 1)); width];
        entries.push((
            format!("l{l}"),
            Node::Anchor(format!("l{l}"), Box::new(Node::Seq(items))),
        ));
    }
    Node::Map(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::input_rng;
    use crate::yaml::{Style, write};

    fn tree() -> Node {
        Node::map(vec![
            ("name", Node::str("x")),
            ("token", Node::Secret("s3cr3t".into())),
            (
                "pools",
                Node::Seq(vec![Node::map(vec![
                    ("count", Node::plain(3)),
                    ("cpu", Node::str("250m")),
                ])]),
            ),
        ])
    }

    #[test]
    fn every_kind_changes_the_tree_when_it_applies() {
        for &kind in KINDS {
            let mut changed = false;
            for i in 0..50 {
                let mut rng = input_rng("mutate", 1, i);
                let mut t = tree();
                let mut fresh = |_: &mut _, _: &str| Node::plain(-1);
                if apply(&mut t, kind, &["name", "count"], &mut fresh, &mut rng) && t != tree() {
                    changed = true;
                    break;
                }
            }
            assert!(changed, "{kind:?} never changed the tree");
        }
    }

    #[test]
    fn secrets_are_never_moved_or_copied() {
        for i in 0..2000 {
            let mut rng = input_rng("mutate", 2, i);
            let mut t = tree();
            let mut fresh = |_: &mut _, _: &str| Node::plain(0);
            mutate(&mut t, 4, &["name", "token"], &mut fresh, &mut rng);
            let text = write(&t, &Style::plain(), &mut rng);
            let count = text.matches("s3cr3t").count();
            assert!(count <= 1, "{text}");
            if count == 1 {
                let line = text.lines().find(|l| l.contains("s3cr3t")).unwrap_or_default();
                assert!(line.trim_start().starts_with("token:"), "{text}");
            }
        }
    }

    #[test]
    fn mutation_is_deterministic_per_seed() {
        let run = |i| {
            let mut rng = input_rng("mutate", 3, i);
            let mut t = tree();
            let mut fresh = |r: &mut rand_chacha::ChaCha8Rng, _: &str| Node::plain(r.random::<u32>());
            mutate(&mut t, 3, &["name"], &mut fresh, &mut rng);
            t
        };
        assert_eq!(run(5), run(5));
        assert!((0..20).any(|i| run(i) != run(i + 1)));
    }
}
