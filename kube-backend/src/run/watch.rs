//! Watches that survive a restarting apiserver: kube's watcher relists by
//! itself (with a back-off between tries); this turns its stream into
//! changes and reports the objects that vanished while it was not looking.

use futures::{Stream, StreamExt};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use std::collections::HashSet;
use std::fmt::Debug;
use std::pin::Pin;

/// What a watch saw happen to one object.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Change<K> {
    Applied(K),
    /// deleted, with its last state
    Deleted(K),
    /// gone from a relist: deleted while the watch was broken
    Vanished(String),
}

/// A watch stream of `api` restricted by `labels`, resuming by itself.
pub(crate) type WatchStream<K> = Pin<Box<dyn Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send>>;

pub(crate) fn watch<K>(api: Api<K>, labels: &str) -> WatchStream<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    let mut config = watcher::Config::default();
    if !labels.is_empty() {
        config = config.labels(labels);
    }
    watcher(api, config).default_backoff().boxed()
}

/// The names an object watch has shown and not seen deleted, so that a
/// relist can tell which ones vanished meanwhile.
#[derive(Debug, Default)]
pub(crate) struct Relist {
    known: HashSet<String>,
    listing: Option<HashSet<String>>,
}

impl Relist {
    /// Turns one watcher event into changes, in order.
    pub(crate) fn changes<K: Resource>(&mut self, event: watcher::Event<K>, out: &mut Vec<Change<K>>) {
        match event {
            watcher::Event::Init => self.listing = Some(HashSet::new()),
            watcher::Event::InitApply(obj) => {
                let name = obj.name_any();
                if let Some(listing) = self.listing.as_mut() {
                    listing.insert(name.clone());
                }
                self.known.insert(name);
                out.push(Change::Applied(obj));
            }
            watcher::Event::InitDone => {
                if let Some(listing) = self.listing.take() {
                    let mut gone: Vec<String> = self.known.difference(&listing).cloned().collect();
                    gone.sort();
                    out.extend(gone.into_iter().map(Change::Vanished));
                    self.known = listing;
                }
            }
            watcher::Event::Apply(obj) => {
                self.known.insert(obj.name_any());
                out.push(Change::Applied(obj));
            }
            watcher::Event::Delete(obj) => {
                self.known.remove(&obj.name_any());
                out.push(Change::Deleted(obj));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::ObjectMeta;

    fn pod(name: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn names(changes: &[Change<Pod>]) -> Vec<String> {
        changes
            .iter()
            .map(|c| match c {
                Change::Applied(p) => format!("+{}", p.name_any()),
                Change::Deleted(p) => format!("-{}", p.name_any()),
                Change::Vanished(n) => format!("?{n}"),
            })
            .collect()
    }

    #[test]
    fn a_relist_reports_what_vanished_meanwhile() {
        let mut r = Relist::default();
        let mut out = Vec::new();
        for e in [
            watcher::Event::Init,
            watcher::Event::InitApply(pod("a")),
            watcher::Event::InitApply(pod("b")),
            watcher::Event::InitDone,
            watcher::Event::Apply(pod("c")),
            watcher::Event::Delete(pod("a")),
            // the apiserver restarts: b and c were deleted meanwhile, d is new
            watcher::Event::Init,
            watcher::Event::InitApply(pod("d")),
            watcher::Event::InitDone,
        ] {
            r.changes(e, &mut out);
        }
        assert_eq!(names(&out), ["+a", "+b", "+c", "-a", "+d", "?b", "?c"]);
        out.clear();
        r.changes(watcher::Event::Init, &mut out);
        r.changes(watcher::Event::InitDone, &mut out);
        assert_eq!(names(&out), ["?d"]);
    }
}
