//! The one Event the scheduler writes: `LeaderElection` on its Lease when a
//! replica takes over, as kube-scheduler does, so `kubectl describe lease`
//! and `kubectl get events -n schedlab-system` show who leads since when.

use crate::leader::LeaseSettings;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, ObjectMeta, PostParams};

/// The component name in events.
pub const COMPONENT: &str = "agmarl-scheduler";

/// The Event saying `settings.identity` became leader at `now`.
pub fn leader_event(settings: &LeaseSettings, now: jiff::Timestamp) -> core::Event {
    core::Event {
        metadata: ObjectMeta {
            generate_name: Some(format!("{}.", settings.name)),
            namespace: Some(settings.namespace.clone()),
            ..Default::default()
        },
        involved_object: core::ObjectReference {
            api_version: Some("coordination.k8s.io/v1".into()),
            kind: Some("Lease".into()),
            name: Some(settings.name.clone()),
            namespace: Some(settings.namespace.clone()),
            ..Default::default()
        },
        reason: Some("LeaderElection".into()),
        message: Some(format!("{} became leader", settings.identity)),
        type_: Some("Normal".into()),
        source: Some(core::EventSource {
            component: Some(COMPONENT.into()),
            host: None,
        }),
        reporting_component: Some(COMPONENT.into()),
        reporting_instance: Some(settings.identity.clone()),
        first_timestamp: Some(Time(now)),
        last_timestamp: Some(Time(now)),
        count: Some(1),
        ..Default::default()
    }
}

/// Posts [`leader_event`] in the background; a failure is only logged
/// (leadership does not depend on it).
pub fn leader_elected(client: &kube::Client, settings: &LeaseSettings) {
    let events: Api<core::Event> = Api::namespaced(client.clone(), &settings.namespace);
    let event = leader_event(settings, jiff::Timestamp::now());
    tokio::spawn(async move {
        if let Err(err) = events.create(&PostParams::default(), &event).await {
            tracing::warn!(error = %err, "cannot record the LeaderElection event");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_points_at_the_lease() {
        let s = LeaseSettings {
            name: "agmarl-scheduler".into(),
            namespace: "schedlab-system".into(),
            identity: "pod-a".into(),
            duration_secs: 15,
            grace_secs: 5,
        };
        let now = jiff::Timestamp::from_second(1_700_000_000).unwrap();
        let v = serde_json::to_value(leader_event(&s, now)).unwrap();
        assert_eq!(v["involvedObject"]["kind"], "Lease");
        assert_eq!(v["involvedObject"]["name"], "agmarl-scheduler");
        assert_eq!(v["metadata"]["namespace"], "schedlab-system");
        assert_eq!(v["reason"], "LeaderElection");
        assert_eq!(v["message"], "pod-a became leader");
        assert_eq!(v["type"], "Normal");
    }
}
