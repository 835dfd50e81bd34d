//! The checks against the cluster before a submission creates anything:
//! which Job shape the server runs, and whether the caller may create the
//! objects and read the cells' pods and logs afterwards. A submission that
//! fails half-way (the ConfigMap made, the Job refused) would leave objects
//! behind; asking first names every missing permission at once.

use super::error::{Denied, SweepJobError};
use super::names;
use super::shape::JobShape;
use k8s_openapi::api::authorization::v1::{ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec};
use kube::api::{Api, PostParams};
use kube_backend::KubeError;
use std::fmt;

/// One permission in a namespace a sweep's submission (or its `status` and
/// `fetch`) needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Permission {
    pub verb: &'static str,
    /// the API group ("" for the core group)
    pub group: &'static str,
    pub resource: &'static str,
    pub subresource: Option<&'static str>,
}

impl fmt::Display for Permission {
    /// As kubectl names it: "create jobs.batch", "get pods/log".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.verb, self.resource)?;
        if !self.group.is_empty() {
            write!(f, ".{}", self.group)?;
        }
        if let Some(sub) = self.subresource {
            write!(f, "/{sub}")?;
        }
        Ok(())
    }
}

const fn permission(verb: &'static str, group: &'static str, resource: &'static str) -> Permission {
    Permission {
        verb,
        group,
        resource,
        subresource: None,
    }
}

/// What a submission in `shape` needs in its namespace: creating its
/// ServiceAccount, ConfigMap and Job(s); reading the Jobs back (`status`
/// gets a Job by name and lists a sweep's Jobs by label, many of them in
/// the per-cell shape); listing and reading the cells' pods and their logs
/// (`status`, and `fetch` of streamed results). Both shapes need the same
/// permissions today; the shape is an argument so that a shape needing
/// more is checked by the same call.
pub fn required_permissions(shape: JobShape) -> Vec<Permission> {
    match shape {
        // Written out per shape, so that a new shape decides what it needs.
        JobShape::Indexed | JobShape::PerCell => vec![
            permission("create", "", "serviceaccounts"),
            permission("create", "", "configmaps"),
            permission("create", "batch", "jobs"),
            permission("get", "batch", "jobs"),
            permission("list", "batch", "jobs"),
            permission("get", "", "pods"),
            permission("list", "", "pods"),
            Permission {
                subresource: Some("log"),
                ..permission("get", "", "pods")
            },
        ],
    }
}

/// Asks the API server (SelfSubjectAccessReview, authorization.k8s.io/v1)
/// whether the caller has every [`required_permissions`] in `namespace`,
/// before anything is created; the error names each one missing.
pub async fn preflight(client: &kube::Client, namespace: &str, shape: JobShape) -> Result<(), SweepJobError> {
    if !names::is_dns_label(namespace) {
        return Err(SweepJobError::invalid(
            "namespace",
            namespace,
            "a namespace is a DNS-1123 label",
        ));
    }
    let reviews: Api<SelfSubjectAccessReview> = Api::all(client.clone());
    let mut missing = Vec::new();
    for wanted in required_permissions(shape) {
        let review = SelfSubjectAccessReview {
            spec: SelfSubjectAccessReviewSpec {
                resource_attributes: Some(ResourceAttributes {
                    namespace: Some(namespace.to_string()),
                    verb: Some(wanted.verb.to_string()),
                    group: Some(wanted.group.to_string()),
                    resource: Some(wanted.resource.to_string()),
                    subresource: wanted.subresource.map(str::to_string),
                    ..ResourceAttributes::default()
                }),
                non_resource_attributes: None,
            },
            ..SelfSubjectAccessReview::default()
        };
        let answer = reviews
            .create(&PostParams::default(), &review)
            .await
            .map_err(KubeError::api(format!(
                "asking whether this identity may {wanted} in namespace {namespace}"
            )))?;
        if let Some(denied) = denial(wanted, answer.status.as_ref()) {
            missing.push(denied);
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(SweepJobError::Forbidden {
            namespace: namespace.to_string(),
            missing,
        })
    }
}

/// Why the review refused `wanted`, or None when it allowed it.
fn denial(
    wanted: Permission,
    status: Option<&k8s_openapi::api::authorization::v1::SubjectAccessReviewStatus>,
) -> Option<Denied> {
    let status = match status {
        Some(s) if s.allowed => return None,
        Some(s) => s,
        None => {
            return Some(Denied {
                permission: wanted.to_string(),
                reason: "the API server's review gave no answer".to_string(),
            });
        }
    };
    let text = |t: &Option<String>| {
        t.as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
    };
    let reason = match (text(&status.reason), text(&status.evaluation_error)) {
        (Some(reason), Some(error)) => format!("{reason} ({error})"),
        (Some(reason), None) => reason,
        (None, Some(error)) => format!("the authorizer failed: {error}"),
        (None, None) => "no rule allows it".to_string(),
    };
    Some(Denied {
        permission: wanted.to_string(),
        reason: schedlab_core::text::escape_controls(&reason).into_owned(),
    })
}

/// The shape the API server behind `client` runs a sweep in, from its
/// version (`/version`; its gitVersion when major and minor are empty).
pub async fn server_shape(client: &kube::Client) -> Result<JobShape, SweepJobError> {
    let info = client
        .apiserver_version()
        .await
        .map_err(KubeError::api("asking the API server its version"))?;
    if !info.major.trim().is_empty() && !info.minor.trim().is_empty() {
        return Ok(JobShape::for_server(&info.major, &info.minor));
    }
    Ok(JobShape::for_git_version(&info.git_version).unwrap_or(JobShape::PerCell))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::authorization::v1::SubjectAccessReviewStatus;

    #[test]
    fn permissions_read_as_kubectl_names_them() {
        let names: Vec<String> = required_permissions(JobShape::Indexed)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            names,
            [
                "create serviceaccounts",
                "create configmaps",
                "create jobs.batch",
                "get jobs.batch",
                "list jobs.batch",
                "get pods",
                "list pods",
                "get pods/log"
            ]
        );
        assert_eq!(
            required_permissions(JobShape::PerCell),
            required_permissions(JobShape::Indexed)
        );
    }

    #[test]
    fn a_denial_says_why() {
        let wanted = permission("create", "batch", "jobs");
        let allowed = SubjectAccessReviewStatus {
            allowed: true,
            ..Default::default()
        };
        assert_eq!(denial(wanted, Some(&allowed)), None);
        let silent = SubjectAccessReviewStatus::default();
        let d = denial(wanted, Some(&silent)).unwrap();
        assert_eq!(d.permission, "create jobs.batch");
        assert_eq!(d.reason, "no rule allows it");
        let failing = SubjectAccessReviewStatus {
            reason: Some("RBAC: nope\nsecond line".into()),
            evaluation_error: Some("webhook down".into()),
            ..Default::default()
        };
        let d = denial(wanted, Some(&failing)).unwrap();
        assert_eq!(d.reason, "RBAC: nope\\nsecond line (webhook down)");
        assert!(denial(wanted, None).is_some());
        let err = SweepJobError::Forbidden {
            namespace: "lab".into(),
            missing: vec![d, denial(wanted, Some(&silent)).unwrap()],
        };
        let text = err.to_string();
        assert!(
            text.contains("cannot create jobs.batch in namespace lab: RBAC: nope"),
            "{text}"
        );
        assert_eq!(text.matches("cannot create jobs.batch").count(), 2, "{text}");
        assert!(err.is_input_error());
    }
}
