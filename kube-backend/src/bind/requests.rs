//! The bind loop's writes: the Binding subresource, the PodScheduled
//! condition, and a preemption's deletes and nominations; and what their
//! failures mean for the loop.

use super::queue::PodKey;
use crate::client::ApiClient;
use crate::labels;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use schedlab_core::node::NodeId;
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
            "conditions": [pod_scheduled_condition(answer, message, now)]
        }
    })
}

fn pod_scheduled_condition(answer: Answer, message: &str, now: jiff::Timestamp) -> serde_json::Value {
    serde_json::json!({
        "type": "PodScheduled",
        "status": "False",
        "reason": labels::condition_reason(answer),
        "message": message,
        "lastProbeTime": null,
        "lastTransitionTime": now.to_string(),
    })
}

/// The strategic merge patch of pods/status that sets
/// `status.nominatedNodeName` to `node` (None: removes it) and, when given,
/// PodScheduled=False with `condition`'s answer and message: kube-scheduler
/// writes both in one patch after a preemption.
pub fn nomination_patch(
    node: Option<&str>,
    condition: Option<(Answer, &str)>,
    now: jiff::Timestamp,
) -> serde_json::Value {
    let mut status = serde_json::Map::new();
    status.insert(
        "nominatedNodeName".into(),
        node.map_or(serde_json::Value::Null, Into::into),
    );
    if let Some((answer, message)) = condition {
        status.insert(
            "conditions".into(),
            serde_json::Value::Array(vec![pod_scheduled_condition(answer, message, now)]),
        );
    }
    serde_json::json!({ "status": status })
}

fn status_params() -> PatchParams {
    PatchParams {
        field_manager: Some(labels::FIELD_MANAGER.to_string()),
        ..Default::default()
    }
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
    let patch = pod_scheduled_patch(answer, message, jiff::Timestamp::now());
    pods.patch_status(&key.name, &status_params(), &Patch::Strategic(&patch))
        .await
        .map(|_| ())
}

/// Writes [`nomination_patch`] to the pod `key`.
pub async fn write_nomination(
    api: &ApiClient,
    key: &PodKey,
    node: Option<&str>,
    condition: Option<(Answer, &str)>,
) -> Result<(), kube::Error> {
    api.throttle().await;
    let pods: Api<core::Pod> = Api::namespaced(api.client(), &key.namespace);
    let patch = nomination_patch(node, condition, jiff::Timestamp::now());
    pods.patch_status(&key.name, &status_params(), &Patch::Strategic(&patch))
        .await
        .map(|_| ())
}

/// The delete of a preemption's victim: the pod's own grace period (no
/// options, as kube-scheduler deletes it), on condition that the pod under
/// its name is still the one chosen (`uid`; none when empty).
pub fn victim_delete_params(uid: &str) -> DeleteParams {
    DeleteParams {
        preconditions: (!uid.is_empty()).then(|| Preconditions {
            uid: Some(uid.to_string()),
            resource_version: None,
        }),
        ..Default::default()
    }
}

/// Deletes the pod `key` of uid `uid` (see [`victim_delete_params`]).
pub async fn delete_victim(api: &ApiClient, key: &PodKey, uid: &str) -> Result<(), kube::Error> {
    api.throttle().await;
    let pods: Api<core::Pod> = Api::namespaced(api.client(), &key.namespace);
    pods.delete(&key.name, &victim_delete_params(uid)).await.map(|_| ())
}

/// Makes a preemption's writes in kube-scheduler's order: the victims one
/// after the other (stopping at the first that fails other than by being
/// gone), then, with every victim gone, the lower-priority nominations
/// cleared and the pod's nomination with its condition; after a failure
/// only the condition, if it is due.
pub async fn carry_out(api: &ApiClient, p: &Preemption) -> PreemptionResults {
    let mut results = PreemptionResults::default();
    for victim in &p.victims {
        let result = delete_victim(api, &victim.key, &victim.uid).await;
        let stop = !is_gone_or_ok(result.as_ref().err());
        results.deleted.push(result);
        if stop {
            break;
        }
    }
    let condition = p.condition.as_deref().map(|m| (Answer::Unschedulable, m));
    if !p.victims_gone(&results.deleted) {
        if let Some((answer, message)) = condition {
            results.status = Some(write_pod_scheduled(api, &p.key, answer, message).await);
        }
        return results;
    }
    for pod in &p.lower_nominated {
        results.cleared.push(write_nomination(api, pod, None, None).await);
    }
    results.status = Some(write_nomination(api, &p.key, Some(&p.node_name), condition).await);
    results
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

/// A pod deleted to make room: which one exactly (its uid, so that a pod
/// recreated under its name is not deleted in its place).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Victim {
    pub key: PodKey,
    pub uid: String,
}

/// The writes of one preemption, made in this order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preemption {
    /// the preemptor
    pub key: PodKey,
    pub node: NodeId,
    pub node_name: String,
    /// deleted one after the other; the first that fails (other than by
    /// being gone already) ends the preemption with nothing nominated
    pub victims: Vec<Victim>,
    /// pending pods of lower priority nominated to `node`: their
    /// `nominatedNodeName` is cleared, as they may no longer fit there
    pub lower_nominated: Vec<PodKey>,
    /// the PodScheduled=False message to write with the nomination; None
    /// when the pod already carries it
    pub condition: Option<String>,
    /// the pod's nomination before this one, which it keeps when the
    /// preemption fails
    pub previous: Option<NodeId>,
}

/// What the API server answered to a [`Preemption`]'s writes.
#[derive(Debug, Default)]
pub struct PreemptionResults {
    /// one per victim tried, in order
    pub deleted: Vec<Result<(), kube::Error>>,
    /// one per pod of `lower_nominated`, when every victim is gone
    pub cleared: Vec<Result<(), kube::Error>>,
    /// the status write (the nomination, or after a failed preemption the
    /// condition alone); None when nothing was written
    pub status: Option<Result<(), kube::Error>>,
}

impl Preemption {
    /// Whether every victim is deleted or already gone, given their results.
    pub fn victims_gone(&self, deleted: &[Result<(), kube::Error>]) -> bool {
        deleted.len() == self.victims.len() && deleted.iter().all(|r| is_gone_or_ok(r.as_ref().err()))
    }
}

/// A delete that succeeded, or found the pod gone (404) or replaced under its
/// name (409 on the uid precondition): the victim no longer holds the room.
pub fn is_gone_or_ok(err: Option<&kube::Error>) -> bool {
    err.is_none_or(|e| matches!(classify(e), Failure::Gone | Failure::Conflict))
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
    fn a_nomination_patch_sets_or_removes_the_node_and_may_carry_the_condition() {
        let now = jiff::Timestamp::from_second(1_700_000_000).unwrap();
        let patch = nomination_patch(
            Some("n-1"),
            Some((Answer::Unschedulable, "0/3 nodes are available")),
            now,
        );
        let status: core::PodStatus = serde_json::from_value(patch["status"].clone()).unwrap();
        assert_eq!(status.nominated_node_name.as_deref(), Some("n-1"));
        let pod = core::Pod {
            status: Some(status),
            ..Default::default()
        };
        assert_eq!(
            written_answer(&pod),
            Some((Answer::Unschedulable, "0/3 nodes are available".to_string()))
        );
        // a strategic merge patch removes a field set to null
        let clear = nomination_patch(None, None, now);
        assert_eq!(clear, serde_json::json!({"status": {"nominatedNodeName": null}}));
    }

    /// A request the fake API server was sent.
    #[derive(Debug, Clone)]
    struct Sent {
        method: String,
        path: String,
        content_type: String,
        body: serde_json::Value,
    }

    type Responder = Box<dyn Fn(&str, &str) -> u16 + Send + Sync>;

    /// A plain-HTTP API server on 127.0.0.1 that answers `/version`, and
    /// every other request with the status `answer` gives for its method and
    /// path (a Pod when 2xx, a Status otherwise); what it was sent, in order.
    fn fake_api(answer: Responder) -> (u16, std::sync::Arc<std::sync::Mutex<Vec<Sent>>>) {
        use std::io::{BufRead, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let sent = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let answer = std::sync::Arc::new(answer);
        let record = sent.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let (answer, record) = (answer.clone(), record.clone());
                std::thread::spawn(move || {
                    let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let mut parts = line.split_whitespace();
                        let (method, path) = (
                            parts.next().unwrap_or("").to_string(),
                            parts.next().unwrap_or("").to_string(),
                        );
                        let (mut length, mut content_type) = (0usize, String::new());
                        loop {
                            let mut header = String::new();
                            if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                                break;
                            }
                            let (name, value) = header.split_once(':').unwrap_or((&header, ""));
                            match name.to_ascii_lowercase().as_str() {
                                "content-length" => length = value.trim().parse().unwrap_or(0),
                                "content-type" => content_type = value.trim().to_string(),
                                _ => {}
                            }
                        }
                        let mut body = vec![0; length];
                        reader.read_exact(&mut body).unwrap();
                        let (code, reply) = if path == "/version" {
                            (
                                200,
                                serde_json::json!({"major": "1", "minor": "34", "gitVersion": "v1.34.0", "gitCommit": "", "gitTreeState": "", "buildDate": "", "goVersion": "", "compiler": "", "platform": ""}),
                            )
                        } else {
                            record.lock().unwrap().push(Sent {
                                method: method.clone(),
                                path: path.clone(),
                                content_type,
                                body: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
                            });
                            let code = answer(&method, &path);
                            let reply = if code < 300 {
                                serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}})
                            } else {
                                serde_json::json!({"apiVersion": "v1", "kind": "Status", "status": "Failure", "message": "no", "code": code})
                            };
                            (code, reply)
                        };
                        let text = reply.to_string();
                        let head = format!(
                            "HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                            text.len()
                        );
                        if stream.write_all(head.as_bytes()).is_err() || stream.write_all(text.as_bytes()).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (port, sent)
    }

    async fn client(port: u16) -> ApiClient {
        let config = kube::Config::new(format!("http://127.0.0.1:{port}").parse().unwrap());
        ApiClient::from_config(config, &crate::client::ClientOptions::default())
            .await
            .unwrap()
    }

    fn preemption() -> Preemption {
        use super::Victim;
        Preemption {
            key: PodKey::new("ns", "high"),
            node: schedlab_core::node::NodeId(0),
            node_name: "n-0".into(),
            victims: vec![
                Victim {
                    key: PodKey::new("ns", "low-1"),
                    uid: "u-1".into(),
                },
                Victim {
                    key: PodKey::new("other", "low-2"),
                    uid: "u-2".into(),
                },
            ],
            lower_nominated: vec![PodKey::new("ns", "mid")],
            condition: Some("0/1 nodes are available".into()),
            previous: None,
        }
    }

    #[tokio::test]
    async fn a_preemption_deletes_then_clears_then_nominates() {
        // low-2 is gone already: fine
        let (port, sent) = fake_api(Box::new(|method, path| {
            if method == "DELETE" && path.contains("low-2") {
                404
            } else {
                200
            }
        }));
        let results = carry_out(&client(port).await, &preemption()).await;
        assert_eq!(results.deleted.len(), 2);
        assert!(results.deleted[0].is_ok());
        assert_eq!(classify(results.deleted[1].as_ref().unwrap_err()), Failure::Gone);
        assert_eq!(results.cleared.len(), 1);
        assert!(results.cleared[0].is_ok());
        assert!(matches!(results.status, Some(Ok(()))));
        let sent = sent.lock().unwrap().clone();
        let lines: Vec<(String, String)> = sent
            .iter()
            .map(|s| (s.method.clone(), s.path.split('?').next().unwrap().to_string()))
            .collect();
        let expect = [
            ("DELETE", "/api/v1/namespaces/ns/pods/low-1"),
            ("DELETE", "/api/v1/namespaces/other/pods/low-2"),
            ("PATCH", "/api/v1/namespaces/ns/pods/mid/status"),
            ("PATCH", "/api/v1/namespaces/ns/pods/high/status"),
        ];
        assert_eq!(lines, expect.map(|(m, p)| (m.to_string(), p.to_string())), "{sent:#?}");
        // the pod's own grace period, and only the pod chosen
        assert_eq!(sent[0].body["preconditions"]["uid"], "u-1");
        assert!(sent[0].body.get("gracePeriodSeconds").is_none(), "{:?}", sent[0].body);
        assert_eq!(sent[2].content_type, "application/strategic-merge-patch+json");
        assert_eq!(sent[2].body, serde_json::json!({"status": {"nominatedNodeName": null}}));
        let status = &sent[3].body["status"];
        assert_eq!(status["nominatedNodeName"], "n-0");
        assert_eq!(status["conditions"][0]["type"], "PodScheduled");
        assert_eq!(status["conditions"][0]["reason"], "Unschedulable");
        assert_eq!(status["conditions"][0]["message"], "0/1 nodes are available");
    }

    #[tokio::test]
    async fn a_victim_that_cannot_be_deleted_ends_the_preemption_with_nothing_nominated() {
        let (port, sent) = fake_api(Box::new(|method, _| if method == "DELETE" { 500 } else { 200 }));
        let results = carry_out(&client(port).await, &preemption()).await;
        assert_eq!(results.deleted.len(), 1, "the second victim is not tried");
        assert!(results.cleared.is_empty());
        assert!(matches!(results.status, Some(Ok(()))));
        let sent = sent.lock().unwrap().clone();
        assert_eq!(sent.len(), 2, "{sent:#?}");
        let status = &sent[1].body["status"];
        assert!(status.get("nominatedNodeName").is_none(), "{status}");
        assert_eq!(status["conditions"][0]["reason"], "Unschedulable");
        // without a condition due, nothing is written
        let (port, sent) = fake_api(Box::new(|_, _| 500));
        let quiet = Preemption {
            condition: None,
            ..preemption()
        };
        let results = carry_out(&client(port).await, &quiet).await;
        assert!(results.status.is_none());
        assert_eq!(sent.lock().unwrap().len(), 1);
    }

    #[test]
    fn a_victim_is_deleted_with_its_own_grace_period_and_only_under_its_uid() {
        let p = victim_delete_params("u-9");
        assert_eq!(p.grace_period_seconds, None);
        assert_eq!(p.propagation_policy, None);
        assert_eq!(p.preconditions.as_ref().and_then(|c| c.uid.as_deref()), Some("u-9"));
        assert!(victim_delete_params("").preconditions.is_none());
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
