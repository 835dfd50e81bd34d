//! The bind loop's writes: the Binding subresource and the PodScheduled
//! condition, and what their failures mean for the loop.

use super::queue::PodKey;
use crate::client::ApiClient;
use crate::labels;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, Patch, PatchParams, PostParams};
use schedlab_core::verdict::Answer;
use std::time::Duration;

/// How long to wait before retrying after a 429 or a server error that
/// named no Retry-After.
pub const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(1);

/// What a failed request means for the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// 409: somebody else bound the pod (or it was recreated under its name)
    Conflict,
    /// 404: the pod is gone
    Gone,
    /// 429: the server sheds load; try again after the delay
    Throttled { after: Duration },
    /// 5xx or no answer (a restarting API server): try again after the delay
    Unavailable { after: Duration },
    /// 401/403: this identity may not do it; retrying cannot help
    Forbidden,
    /// any other refusal (400, 422, ...): the request itself is wrong
    Refused,
}

/// Sorts an API error into what the loop does about it.
pub fn classify(err: &kube::Error) -> Failure {
    match err {
        kube::Error::Api(status) => {
            let after = status
                .details
                .as_ref()
                .map(|d| d.retry_after_seconds)
                .filter(|s| *s > 0)
                .map_or(DEFAULT_RETRY_AFTER, |s| Duration::from_secs(u64::from(s)));
            match status.code {
                409 => Failure::Conflict,
                404 | 410 => Failure::Gone,
                429 => Failure::Throttled { after },
                401 | 403 => Failure::Forbidden,
                500..=599 => Failure::Unavailable { after },
                _ => Failure::Refused,
            }
        }
        // Connection errors, timeouts, bodies cut short: the server may be restarting.
        _ => Failure::Unavailable {
            after: DEFAULT_RETRY_AFTER,
        },
    }
}

/// The Binding of `key` (with its uid, so a pod recreated under the same
/// name is not bound by mistake) to `node`.
pub fn binding_object(key: &PodKey, uid: &str, node: &str) -> core::Binding {
    core::Binding {
        metadata: ObjectMeta {
            name: Some(key.name.clone()),
            namespace: Some(key.namespace.clone()),
            uid: (!uid.is_empty()).then(|| uid.to_string()),
            ..Default::default()
        },
        target: core::ObjectReference {
            api_version: Some("v1".to_string()),
            kind: Some("Node".to_string()),
            name: Some(node.to_string()),
            ..Default::default()
        },
    }
}

/// POSTs the Binding subresource: the API server sets the pod's nodeName and
/// PodScheduled=True.
pub async fn post_binding(api: &ApiClient, key: &PodKey, uid: &str, node: &str) -> Result<(), kube::Error> {
    api.throttle().await;
    let pods: Api<core::Pod> = Api::namespaced(api.client(), &key.namespace);
    // The answer is a Status object; its content adds nothing to the code.
    pods.create_subresource::<_, serde_json::Value>(
        "binding",
        &key.name,
        &PostParams::default(),
        &binding_object(key, uid, node),
    )
    .await
    .map(|_| ())
}

/// The strategic merge patch of pods/status that sets PodScheduled=False
/// (merged by condition type, leaving the others alone).
pub fn pod_scheduled_patch(answer: Answer, message: &str, now: jiff::Timestamp) -> serde_json::Value {
    serde_json::json!({
        "status": {
            "conditions": [{
                "type": "PodScheduled",
                "status": "False",
                "reason": labels::condition_reason(answer),
                "message": message,
                "lastProbeTime": null,
                "lastTransitionTime": now.to_string(),
            }]
        }
    })
}

/// Writes PodScheduled=False with `answer`'s reason and `message`.
pub async fn write_pod_scheduled(
    api: &ApiClient,
    key: &PodKey,
    answer: Answer,
    message: &str,
) -> Result<(), kube::Error> {
    api.throttle().await;
    let pods: Api<core::Pod> = Api::namespaced(api.client(), &key.namespace);
    let params = PatchParams {
        field_manager: Some(labels::FIELD_MANAGER.to_string()),
        ..Default::default()
    };
    let patch = pod_scheduled_patch(answer, message, jiff::Timestamp::now());
    pods.patch_status(&key.name, &params, &Patch::Strategic(&patch))
        .await
        .map(|_| ())
}

/// The PodScheduled=False answer a pod already carries, if any (so a
/// restarted loop does not write it again).
pub fn written_answer(pod: &core::Pod) -> Option<(Answer, String)> {
    let c = pod
        .status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "PodScheduled" && c.status == "False")?;
    Some((
        labels::answer_of_reason(c.reason.as_deref()?)?,
        c.message.clone().unwrap_or_default(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api_error(code: u16, retry_after: u32) -> kube::Error {
        let status = serde_json::json!({
            "status": "Failure",
            "code": code,
            "details": {"retryAfterSeconds": retry_after},
        });
        kube::Error::Api(Box::new(serde_json::from_value(status).unwrap()))
    }

    #[test]
    fn api_errors_sort_into_what_the_loop_does() {
        assert_eq!(classify(&api_error(409, 0)), Failure::Conflict);
        assert_eq!(classify(&api_error(404, 0)), Failure::Gone);
        assert_eq!(
            classify(&api_error(429, 7)),
            Failure::Throttled {
                after: Duration::from_secs(7)
            }
        );
        assert_eq!(
            classify(&api_error(429, 0)),
            Failure::Throttled {
                after: DEFAULT_RETRY_AFTER
            }
        );
        assert_eq!(
            classify(&api_error(503, 2)),
            Failure::Unavailable {
                after: Duration::from_secs(2)
            }
        );
        assert_eq!(
            classify(&api_error(500, 0)),
            Failure::Unavailable {
                after: DEFAULT_RETRY_AFTER
            }
        );
        assert_eq!(classify(&api_error(403, 0)), Failure::Forbidden);
        assert_eq!(classify(&api_error(422, 0)), Failure::Refused);
        let broken = kube::Error::LinesCodecMaxLineLengthExceeded;
        assert!(matches!(classify(&broken), Failure::Unavailable { .. }));
    }

    #[test]
    fn a_binding_names_the_pod_uid_and_node() {
        let b = binding_object(&PodKey::new("ns", "p"), "u-1", "n-3");
        let v = serde_json::to_value(&b).unwrap();
        assert_eq!(v["kind"], "Binding");
        assert_eq!(v["apiVersion"], "v1");
        assert_eq!(v["metadata"]["name"], "p");
        assert_eq!(v["metadata"]["namespace"], "ns");
        assert_eq!(v["metadata"]["uid"], "u-1");
        assert_eq!(v["target"]["kind"], "Node");
        assert_eq!(v["target"]["name"], "n-3");
        let no_uid = serde_json::to_value(binding_object(&PodKey::new("ns", "p"), "", "n")).unwrap();
        assert!(no_uid["metadata"].get("uid").is_none());
    }

    #[test]
    fn the_condition_patch_reads_back_as_the_answer() {
        let now = jiff::Timestamp::from_second(1_700_000_000).unwrap();
        let patch = pod_scheduled_patch(Answer::Declined, "restraint: stress 0.9", now);
        let status: core::PodStatus = serde_json::from_value(patch["status"].clone()).unwrap();
        let pod = core::Pod {
            status: Some(status),
            ..Default::default()
        };
        assert_eq!(
            written_answer(&pod),
            Some((Answer::Declined, "restraint: stress 0.9".to_string()))
        );
        assert_eq!(labels::answer_of_reason("Unschedulable"), Some(Answer::Unschedulable));
        assert_eq!(labels::answer_of_reason("SchedulerError"), None);
        assert_eq!(written_answer(&core::Pod::default()), None);
    }
}
