//! Carrying out a policy's preemption as kube-scheduler v1.20 does
//! (DefaultPreemption's `PrepareCandidate`, then the scheduler's
//! `handleSchedulingFailure`): delete the victims, take the nominations of
//! pods of lower priority on the node away, nominate the pod there
//! (`status.nominatedNodeName`, with PodScheduled=False) and retry it after
//! its back-off. The victims leave with their own grace period; while one
//! is still terminating on the node the pod is nominated to, the pod does not
//! preempt again (`PodEligibleToPreemptOthers`), so a slow kubelet does not
//! make it delete more pods than it needs. The writes of one preemption go
//! out while other pods are decided, where kube-scheduler makes them within
//! the pod's scheduling cycle; so the pod's nomination holds from the
//! decision on, the pod does not preempt again while they are in flight, and
//! a victim counts as terminating as soon as its delete is accepted.

use super::{Binder, Request};
use crate::bind::queue::PodKey;
use crate::bind::requests::{Failure, classify};
pub use crate::bind::requests::{Preemption, PreemptionResults, Victim, is_gone_or_ok};
use crate::error::KubeError;
use schedlab_core::node::NodeId;
use schedlab_core::pod::PodId;
use schedlab_core::time::Time;
use schedlab_core::verdict::Answer;
use std::borrow::Cow;

impl Binder {
    /// The policy answered Preempt for the pending pod `key` (of `priority`):
    /// the writes that carry it out, after checking it may and can be; a
    /// preemption that may not or cannot be carried out leaves the pod
    /// unschedulable, with nothing deleted.
    pub(super) fn preempt(
        &mut self,
        key: PodKey,
        priority: i32,
        node: NodeId,
        victims: &[PodId],
        reason: Cow<'static, str>,
        now: Time,
    ) -> Option<Request> {
        if self.tracked.get(&key).is_some_and(|t| t.never_preempts) {
            tracing::debug!(pod = %key, "preemptionPolicy Never: the pod does not preempt");
            self.stats.unschedulable += 1;
            return self.not_placed(key, Answer::Unschedulable, reason, now);
        }
        let in_flight = self.tracked.get(&key).is_some_and(|t| t.preempting);
        let nominated = self.cache.nomination(&key.namespace, &key.name);
        if in_flight || nominated.is_some_and(|n| self.cache.terminating_below(n, priority)) {
            tracing::debug!(pod = %key, in_flight, "its last preemption's victims are still leaving; not preempting again");
            self.stats.preemptions_waiting += 1;
            return self.not_placed(key, Answer::Unschedulable, reason, now);
        }
        let (node_name, victims) = match self.check_victims(node, victims, priority) {
            Ok(checked) => checked,
            Err(why) => {
                tracing::warn!(pod = %key, node = node.0, %why, "the policy's preemption cannot be carried out; nothing was deleted");
                self.stats.rejected_preemptions += 1;
                return self.not_placed(key, Answer::Unschedulable, reason, now);
            }
        };
        // the room is the pod's from now on, for every decision made while
        // the victims leave (kube-scheduler's AddNominatedPod)
        let previous = nominated;
        self.cache.nominate(&key.namespace, &key.name, Some(node));
        let lower_nominated = self
            .cache
            .nominated_below(node, priority)
            .into_iter()
            .map(|(namespace, name)| PodKey::new(namespace, name))
            .collect();
        self.queue.failed(&key, now, Time::ZERO, &self.model);
        if let Some(t) = self.tracked.get_mut(&key) {
            t.preempting = true;
        }
        let condition = self.condition_to_write(&key, Answer::Unschedulable, reason);
        Some(Request::Preempt(Box::new(Preemption {
            key,
            node,
            node_name,
            victims,
            lower_nominated,
            condition,
            previous,
        })))
    }

    /// The node's name and the victims, if `node` is known and every victim
    /// is a pod of lower priority than `priority` counted on it (as the
    /// simulator checks a preemption).
    fn check_victims(&self, node: NodeId, victims: &[PodId], priority: i32) -> Result<(String, Vec<Victim>), String> {
        let node_name = self
            .cache
            .node_name(node)
            .ok_or_else(|| format!("node {} does not exist", node.0))?
            .to_string();
        let mut checked = Vec::with_capacity(victims.len());
        for &victim in victims {
            let (namespace, name, pod) = self
                .cache
                .pod_on(node, victim)
                .ok_or_else(|| format!("pod {} is not on node {node_name}", victim.0))?;
            if pod.spec.priority >= priority {
                return Err(format!(
                    "pod {namespace}/{name} has priority {}, not below the preemptor's {priority}",
                    pod.spec.priority
                ));
            }
            checked.push(Victim {
                key: PodKey::new(namespace, name),
                uid: pod.uid.clone(),
            });
        }
        Ok((node_name, checked))
    }

    /// A preemption's writes came back. Only a refusal that retrying cannot
    /// cure (401/403 on a delete) is an error; a failed status write is
    /// counted and logged, as for any other status write.
    pub fn preempt_done(&mut self, p: &Preemption, results: PreemptionResults) -> Result<(), KubeError> {
        if let Some(t) = self.tracked.get_mut(&p.key) {
            t.preempting = false;
        }
        let all_gone = p.victims_gone(&results.deleted);
        for (victim, result) in p.victims.iter().zip(results.deleted) {
            let err = match result {
                Ok(()) => {
                    self.stats.victims += 1;
                    // terminating from now on, whenever the watch shows it
                    self.cache.mark_terminating(&victim.key.namespace, &victim.key.name);
                    continue;
                }
                Err(err) => err,
            };
            match classify(&err) {
                Failure::Gone | Failure::Conflict => {
                    tracing::debug!(pod = %victim.key, "victim already gone");
                }
                Failure::Throttled { .. } => self.stats.throttled += 1,
                Failure::Unavailable { .. } => {
                    tracing::debug!(pod = %victim.key, error = %crate::redact::shown(&err), "victim delete failed; the preemptor retries");
                    self.stats.unavailable += 1;
                }
                Failure::Refused => {
                    tracing::warn!(pod = %victim.key, preemptor = %p.key, error = %crate::redact::shown(&err), "the API server refused to delete a victim");
                    self.stats.refused += 1;
                }
                Failure::Forbidden => {
                    return Err(KubeError::Api {
                        what: format!(
                            "deleting pod {} to make room for {} on node {}",
                            victim.key, p.key, p.node_name
                        ),
                        error: err,
                    });
                }
            }
        }
        if all_gone {
            self.stats.preemptions += 1;
        } else if self.cache.nomination(&p.key.namespace, &p.key.name) == Some(p.node) {
            // nothing nominated: the pod keeps what it had, as after a failed
            // PrepareCandidate
            self.cache.nominate(&p.key.namespace, &p.key.name, p.previous);
        }
        for (pod, result) in p.lower_nominated.iter().zip(results.cleared) {
            match result {
                Ok(()) => {
                    self.stats.nominations_cleared += 1;
                    self.cache.nominate(&pod.namespace, &pod.name, None);
                }
                Err(err) => {
                    // not critical, as upstream: the nomination stays until a later preemption clears it
                    self.status_write_failed(pod, &err, "could not clear a lower-priority pod's nomination");
                }
            }
        }
        match results.status {
            Some(Ok(())) if p.condition.is_some() => self.stats.status_writes += 1,
            None | Some(Ok(())) => {}
            Some(Err(err)) => {
                if self.status_write_failed(&p.key, &err, "could not write the pod's nomination")
                    && let Some(message) = &p.condition
                {
                    self.condition_not_written(&p.key, Answer::Unschedulable, message);
                }
            }
        }
        Ok(())
    }
}
