//! Leader election through a `coordination.k8s.io/v1` Lease, with
//! `kube-lease-manager` doing the locking (server-side apply, so two
//! replicas cannot both take a free Lease).
//!
//! Two things are added on top, both from a `get` of the Lease every
//! [`check_every`] (at most a second):
//!
//! - Fencing: a leader steps down as soon as the Lease names somebody else,
//!   or when it has not seen its own renewal for so long that the Lease is
//!   about to run out (renewals failing): it stops binding before a standby
//!   may take over.
//! - Quick takeover: a standby that sees the Lease released (no holder: the
//!   leader shut down gracefully) contends at once, instead of sleeping
//!   until the old expiry as the lease manager alone would.
//! - Fresh claims only: the lease manager says "leader" as soon as the
//!   Lease names this replica, also when that record ran out while nobody
//!   could renew it (an API server outage); this replica leads only once the
//!   Lease shows a renewal with time left (see [`fresh_claim`]).

use crate::events;
use crate::health::Health;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use kube_lease_manager::{LeaseManager, LeaseManagerBuilder};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Which Lease, who we are, and its timing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseSettings {
    pub name: String,
    pub namespace: String,
    pub identity: String,
    /// whole seconds, at least 2 (see [`crate::args::lease_timing`])
    pub duration_secs: u64,
    /// renew this many seconds before expiry
    pub grace_secs: u64,
}

impl LeaseSettings {
    pub fn duration(&self) -> Duration {
        Duration::from_secs(self.duration_secs)
    }
}

/// How often the Lease is read: half the renewal margin, at most a second.
pub fn check_every(settings: &LeaseSettings) -> Duration {
    (Duration::from_secs(settings.grace_secs) / 2).min(Duration::from_secs(1))
}

/// What one read of the Lease means for this replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// nothing to do
    Keep,
    /// leading: the Lease is ours until this instant (renewTime + duration)
    Confirmed(SystemTime),
    /// leading, but the Lease names another holder
    Lost { holder: String },
    /// standing by, and the Lease has no holder: contend now
    Released,
}

/// Reads a Lease as this replica (`leading` or not) sees it.
pub fn judge(lease: &Lease, identity: &str, leading: bool) -> Verdict {
    let spec = lease.spec.clone().unwrap_or_default();
    match (leading, spec.holder_identity) {
        (true, Some(holder)) if holder == identity => {
            let expiry = spec
                .renew_time
                .zip(spec.lease_duration_seconds)
                .and_then(|(renew, secs)| {
                    let renew: SystemTime = renew.0.into();
                    renew.checked_add(Duration::from_secs(u64::try_from(secs).unwrap_or(0)))
                });
            expiry.map_or(Verdict::Keep, Verdict::Confirmed)
        }
        (true, holder) => Verdict::Lost {
            holder: holder.unwrap_or_else(|| "nobody".into()),
        },
        (false, None) => Verdict::Released,
        (false, Some(_)) => Verdict::Keep,
    }
}

/// Whether a leader whose Lease was last seen valid until `confirmed` must
/// stop binding at `now`: when less than half the renewal margin is left,
/// so it stops before any standby may take the Lease.
pub fn must_step_down(confirmed: SystemTime, now: SystemTime, grace: Duration) -> bool {
    match confirmed.duration_since(now) {
        Ok(left) => left < grace / 2,
        Err(_) => true,
    }
}

/// Until when a Lease naming `identity` is valid, if it was renewed
/// recently enough to lead on: more than half the renewal margin left at
/// `now` (see [`must_step_down`]). The lease manager reports leadership as
/// soon as the Lease *names* this replica, also when that record ran out
/// while nobody could renew it (the API server was down); leading on it
/// would let this replica bind while another force-releases the expired
/// Lease and takes it.
pub fn fresh_claim(lease: &Lease, identity: &str, now: SystemTime, grace: Duration) -> Option<SystemTime> {
    match judge(lease, identity, true) {
        Verdict::Confirmed(until) if !must_step_down(until, now, grace) => Some(until),
        _ => None,
    }
}

/// A running election. `leader()` tells whether this replica leads now.
#[derive(Debug)]
pub struct Election {
    role: watch::Receiver<bool>,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl Election {
    /// Starts contending for the Lease (created if missing).
    pub fn start(client: kube::Client, settings: LeaseSettings, health: Arc<Health>) -> Election {
        let (tx, role) = watch::channel(false);
        let stop = CancellationToken::new();
        let task = tokio::spawn(elect(client, settings, tx, health, stop.clone()));
        Election { role, stop, task }
    }

    /// A receiver of the leadership flag (true while this replica leads).
    pub fn watch(&self) -> watch::Receiver<bool> {
        self.role.clone()
    }

    pub fn leader(&self) -> bool {
        *self.role.borrow()
    }

    /// Stops contending and releases the Lease if held, so a standby takes
    /// over at once. Call it after binding has stopped.
    pub async fn resign(self) {
        self.stop.cancel();
        if let Err(err) = self.task.await {
            tracing::warn!(error = %err, "the election task ended abnormally");
        }
    }
}

async fn build(
    client: &kube::Client,
    s: &LeaseSettings,
) -> Result<LeaseManager, kube_lease_manager::LeaseManagerError> {
    LeaseManagerBuilder::new(client.clone(), &s.name)
        .with_namespace(&s.namespace)
        .with_identity(&s.identity)
        .with_grace(s.grace_secs)
        .with_duration(s.duration_secs)
        .with_field_manager(format!("agmarl-scheduler-{}", s.identity))
        .build()
        .await
}

/// Sleeps `d` unless `stop` fires first; returns whether to go on.
async fn pause(d: Duration, stop: &CancellationToken) -> bool {
    tokio::select! {
        () = stop.cancelled() => false,
        () = tokio::time::sleep(d) => true,
    }
}

fn announce(tx: &watch::Sender<bool>, leading: bool, s: &LeaseSettings) {
    let was = tx.send_replace(leading);
    if was != leading {
        if leading {
            tracing::info!(identity = %s.identity, lease = %s.name, "became leader");
        } else {
            tracing::info!(identity = %s.identity, lease = %s.name, "not leading");
        }
    }
}

async fn elect(
    client: kube::Client,
    s: LeaseSettings,
    tx: watch::Sender<bool>,
    health: Arc<Health>,
    stop: CancellationToken,
) {
    let leases: Api<Lease> = Api::namespaced(client.clone(), &s.namespace);
    let every = check_every(&s);
    let grace = Duration::from_secs(s.grace_secs);
    let retry = Duration::from_secs(1);
    'manager: loop {
        health.election_beat(Instant::now());
        let built = tokio::select! {
            () = stop.cancelled() => return,
            built = build(&client, &s) => built,
        };
        let manager = match built {
            Ok(m) => m,
            Err(err) => {
                tracing::warn!(error = %err, lease = %s.name, namespace = %s.namespace, "cannot use the Lease; retrying");
                announce(&tx, false, &s);
                if pause(retry, &stop).await {
                    continue 'manager;
                }
                return;
            }
        };
        health.started();
        let mut confirmed: Option<SystemTime> = None;
        // The lease manager's word that it holds the Lease; this replica
        // leads (`tx`) only once the Lease shows a fresh renewal too.
        let mut held = false;
        // The first read comes one period after the manager starts, so a
        // fresh manager gets to lock a free Lease before it is judged.
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut changed = Box::pin(manager.changed());
        loop {
            tokio::select! {
                biased;
                () = stop.cancelled() => {
                    announce(&tx, false, &s);
                    drop(changed);
                    match tokio::time::timeout(s.duration(), manager.release()).await {
                        Ok(Ok(())) => tracing::info!(lease = %s.name, "Lease released"),
                        Ok(Err(err)) => tracing::warn!(error = %err, "releasing the Lease failed; it expires by itself"),
                        Err(_) => tracing::warn!("releasing the Lease timed out; it expires by itself"),
                    }
                    return;
                }
                result = &mut changed => {
                    match result {
                        Ok(holds) => {
                            held = holds;
                            if !holds {
                                announce(&tx, false, &s);
                            } else {
                                let read = tokio::time::timeout(every.max(Duration::from_millis(500)), leases.get(&s.name)).await;
                                match read.ok().and_then(Result::ok) {
                                    Some(lease) => match fresh_claim(&lease, &s.identity, SystemTime::now(), grace) {
                                        Some(until) => {
                                            confirmed = Some(until);
                                            events::leader_elected(&client, &s);
                                            announce(&tx, true, &s);
                                        }
                                        None => tracing::info!("the Lease names this replica but has run out; leading once it is renewed"),
                                    },
                                    None => tracing::info!("cannot read the Lease just acquired; leading once it is confirmed"),
                                }
                            }
                        }
                        Err(err) => {
                            tracing::warn!(error = %err, "leader election failed; starting over");
                            announce(&tx, false, &s);
                            drop(changed);
                            if pause(retry, &stop).await {
                                continue 'manager;
                            }
                            return;
                        }
                    }
                    changed = Box::pin(manager.changed());
                }
                _ = tick.tick() => {
                    health.election_beat(Instant::now());
                    let leading = *tx.borrow();
                    let read = tokio::time::timeout(every.max(Duration::from_millis(500)), leases.get(&s.name)).await;
                    if let Ok(Ok(lease)) = read {
                        match judge(&lease, &s.identity, leading || held) {
                            Verdict::Keep => {}
                            Verdict::Confirmed(until) => {
                                confirmed = Some(until);
                                if !leading && fresh_claim(&lease, &s.identity, SystemTime::now(), grace).is_some() {
                                    events::leader_elected(&client, &s);
                                    announce(&tx, true, &s);
                                }
                            }
                            Verdict::Lost { holder } => {
                                if leading {
                                    tracing::warn!(%holder, "the Lease names another holder; stepping down");
                                }
                                announce(&tx, false, &s);
                                continue 'manager;
                            }
                            Verdict::Released => {
                                tracing::info!("the Lease was released; contending now");
                                continue 'manager;
                            }
                        }
                    }
                    if leading && confirmed.is_some_and(|c| must_step_down(c, SystemTime::now(), grace)) {
                        tracing::warn!("the Lease was not renewed in time; stepping down");
                        announce(&tx, false, &s);
                        continue 'manager;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::coordination::v1::LeaseSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;

    fn lease(holder: Option<&str>, renew: Option<SystemTime>, secs: Option<i32>) -> Lease {
        Lease {
            spec: Some(LeaseSpec {
                holder_identity: holder.map(str::to_string),
                renew_time: renew.map(|t| MicroTime(t.try_into().unwrap())),
                lease_duration_seconds: secs,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn judging_a_lease() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(
            judge(&lease(Some("me"), Some(t), Some(4)), "me", true),
            Verdict::Confirmed(t + Duration::from_secs(4))
        );
        assert_eq!(judge(&lease(Some("me"), None, Some(4)), "me", true), Verdict::Keep);
        assert_eq!(
            judge(&lease(Some("you"), Some(t), Some(4)), "me", true),
            Verdict::Lost { holder: "you".into() }
        );
        assert_eq!(
            judge(&lease(None, None, None), "me", true),
            Verdict::Lost {
                holder: "nobody".into()
            }
        );
        assert_eq!(judge(&lease(None, None, None), "me", false), Verdict::Released);
        assert_eq!(judge(&Lease::default(), "me", false), Verdict::Released);
        assert_eq!(judge(&lease(Some("you"), Some(t), Some(4)), "me", false), Verdict::Keep);
    }

    #[test]
    fn a_leader_steps_down_before_its_lease_runs_out() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let grace = Duration::from_secs(2);
        assert!(!must_step_down(now + Duration::from_secs(3), now, grace));
        assert!(!must_step_down(now + Duration::from_millis(1001), now, grace));
        assert!(must_step_down(now + Duration::from_millis(999), now, grace));
        assert!(must_step_down(now - Duration::from_secs(1), now, grace));
    }

    #[test]
    fn an_expired_lease_naming_us_is_no_claim_to_lead() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let grace = Duration::from_secs(1);
        let renewed = |ago: u64| Some(now - Duration::from_secs(ago));
        // renewed just now: valid for the whole 4 s
        assert_eq!(
            fresh_claim(&lease(Some("me"), renewed(0), Some(4)), "me", now, grace),
            Some(now + Duration::from_secs(4))
        );
        // renewed before an outage longer than the lease: ran out
        assert_eq!(
            fresh_claim(&lease(Some("me"), renewed(10), Some(4)), "me", now, grace),
            None
        );
        // less than half the renewal margin left: about to run out
        assert_eq!(
            fresh_claim(&lease(Some("me"), renewed(4), Some(4)), "me", now, grace),
            None
        );
        assert_eq!(
            fresh_claim(&lease(Some("you"), renewed(0), Some(4)), "me", now, grace),
            None
        );
        assert_eq!(fresh_claim(&lease(None, None, None), "me", now, grace), None);
        assert_eq!(fresh_claim(&lease(Some("me"), None, Some(4)), "me", now, grace), None);
    }

    #[test]
    fn checks_come_often_enough_to_fence() {
        let s = |grace_secs| LeaseSettings {
            name: "l".into(),
            namespace: "n".into(),
            identity: "i".into(),
            duration_secs: 15,
            grace_secs,
        };
        assert_eq!(check_every(&s(5)), Duration::from_secs(1));
        assert_eq!(check_every(&s(1)), Duration::from_millis(500));
    }
}
