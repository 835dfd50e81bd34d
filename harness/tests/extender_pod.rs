//! The pod an extender is sent (`scheduler::extender::pod`) is a real
//! Kubernetes v1.Pod: read here with k8s-openapi, which only the binary
//! pins to a Kubernetes version.

use schedlab_core::testing::{GI, PodSpecChanges, pod};

#[test]
fn the_pod_sent_reads_back_unchanged_as_a_kubernetes_v1_pod() {
    let spec = pod(250, GI)
        .priority(5)
        .limits(schedlab_core::resources::Resources::new(500, 2 * GI));
    let pending = scheduler::testing::pending(&spec);
    let sent = serde_json::to_value(scheduler::extender::pod::PodJson::of(&pending)).unwrap();
    let read: k8s_openapi::api::core::v1::Pod = serde_json::from_value(sent.clone()).unwrap();
    // every field sent is one of v1.Pod's: k8s-openapi would drop any other
    assert_eq!(serde_json::to_value(&read).unwrap(), sent);
    let container = &read.spec.as_ref().unwrap().containers[0];
    let requests = container.resources.as_ref().unwrap().requests.as_ref().unwrap();
    assert_eq!(requests["cpu"].0, "250m");
}
