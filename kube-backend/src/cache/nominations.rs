//! The pending pods nominated to a node by a preemption
//! ([`schedlab_core::ClusterView::nominated`]), by cache key, so filters and
//! DefaultPreemption leave them their room as kube-scheduler's nominator does.

use schedlab_core::node::NodeId;
use schedlab_core::view::Nomination;

/// The nominations in force, one per pod at most.
#[derive(Debug, Default)]
pub(super) struct Nominations {
    list: Vec<Nomination>,
    /// the cache key of each of `list`, index for index
    keys: Vec<String>,
}

impl Nominations {
    /// The nomination of the pod under `key` is now `nomination` (None: it has none).
    pub(super) fn set(&mut self, key: &str, nomination: Option<Nomination>) {
        let at = self.keys.iter().position(|k| k == key);
        match (at, nomination) {
            (Some(i), Some(n)) => self.list[i] = n,
            (Some(i), None) => {
                self.list.swap_remove(i);
                self.keys.swap_remove(i);
            }
            (None, Some(n)) => {
                self.list.push(n);
                self.keys.push(key.to_string());
            }
            (None, None) => {}
        }
    }

    pub(super) fn list(&self) -> &[Nomination] {
        &self.list
    }

    /// The keys of the pods nominated to `node` with a priority below `priority`.
    pub(super) fn below<'a>(&'a self, node: NodeId, priority: i32) -> impl Iterator<Item = &'a str> + 'a {
        self.list
            .iter()
            .zip(&self.keys)
            .filter(move |(n, _)| n.node == node && n.priority < priority)
            .map(|(_, k)| k.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::pod::PodId;
    use schedlab_core::resources::Resources;

    fn nomination(pod: u64, node: u32, priority: i32) -> Nomination {
        Nomination {
            pod: PodId(pod),
            node: NodeId(node),
            priority,
            requests: Resources::new(1, 1),
        }
    }

    #[test]
    fn one_nomination_per_pod() {
        let mut n = Nominations::default();
        n.set("a", Some(nomination(1, 0, 5)));
        n.set("b", Some(nomination(2, 0, 1)));
        n.set("c", Some(nomination(3, 1, 1)));
        n.set("a", Some(nomination(1, 0, 0)));
        assert_eq!(n.list().len(), 3);
        let mut below: Vec<&str> = n.below(NodeId(0), 1).collect();
        assert_eq!(below, ["a"]);
        below = n.below(NodeId(0), 9).collect();
        below.sort_unstable();
        assert_eq!(below, ["a", "b"]);
        n.set("a", None);
        n.set("nobody", None);
        assert_eq!(n.list(), [nomination(3, 1, 1), nomination(2, 0, 1)]);
        assert_eq!(n.below(NodeId(0), 2).collect::<Vec<_>>(), ["b"]);
    }
}
