//! One line for an error and its causes.

/// An error's message followed by those of its causes not already in it,
/// joined by ": ". An error that shows its cause and also hands it on as
/// its source (ours, or a library's) would otherwise print the cause twice
/// or three times.
pub fn one_line(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = String::new();
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(c) = cause {
        let part = c.to_string();
        if !part.is_empty() && !text.contains(&part) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&part);
        }
        cause = c.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("records r.jsonl line 3: {source}")]
    struct ShowsAndHandsOn {
        #[source]
        source: std::io::Error,
    }

    #[derive(Debug, thiserror::Error)]
    #[error("reporting on rf")]
    struct Outer(#[source] ShowsAndHandsOn);

    #[test]
    fn a_cause_already_shown_is_not_repeated() {
        let err = Outer(ShowsAndHandsOn {
            source: std::io::Error::other("disk on fire"),
        });
        assert_eq!(one_line(&err), "reporting on rf: records r.jsonl line 3: disk on fire");
    }

    #[test]
    fn distinct_causes_are_all_shown_in_order() {
        let err = Outer(ShowsAndHandsOn {
            source: std::io::Error::other(""),
        });
        assert_eq!(one_line(&err), "reporting on rf: records r.jsonl line 3: ");
    }
}
