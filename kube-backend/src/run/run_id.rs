//! Fresh run ids.

use crate::objects::dns_label;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The longest run id: it is also a namespace name and part of node and
/// PriorityClass names, which must stay DNS labels (63) with room for more.
pub const MAX_RUN_ID_LEN: usize = 40;

/// A fresh run id: `<prefix>-<8 hex chars from the wall clock and pid>`, a
/// DNS label of at most [`MAX_RUN_ID_LEN`] characters. The prefix is made a
/// DNS label (lower case, '-' for anything else) and shortened to fit; a
/// prefix without a letter or digit gives "run".
pub fn new_run_id(prefix: &str) -> String {
    // Two ids asked for within one clock tick of one process still differ.
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let mixed = splitmix64(nanos ^ (u64::from(std::process::id()) << 32) ^ splitmix64(call));
    let suffix = format!("{:08x}", mixed as u32);
    let mut prefix = if prefix.chars().any(|c| c.is_ascii_alphanumeric()) {
        dns_label(&[prefix])
    } else {
        "run".to_string()
    };
    prefix.truncate(MAX_RUN_ID_LEN - suffix.len() - 1);
    format!("{}-{suffix}", prefix.trim_end_matches('-'))
}

/// A bijective mix, so nearby clock readings give unrelated suffixes.
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_dns_label(s: &str) -> bool {
        !s.is_empty()
            && s.len() <= 63
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !s.starts_with('-')
            && !s.ends_with('-')
    }

    #[test]
    fn ids_are_short_dns_labels_with_the_prefix() {
        for prefix in ["schedlab", "Churn_Test", "", "---", &"long".repeat(30), "a-"] {
            let id = new_run_id(prefix);
            assert!(is_dns_label(&id) && id.len() <= MAX_RUN_ID_LEN, "{prefix:?} -> {id:?}");
            let (head, tail) = id.rsplit_once('-').unwrap();
            assert_eq!(tail.len(), 8);
            assert!(tail.chars().all(|c| c.is_ascii_hexdigit()));
            assert!(!head.is_empty());
        }
        assert!(new_run_id("Churn_Test").starts_with("churn-test-"));
        assert!(new_run_id("").starts_with("run-"));
    }

    #[test]
    fn ids_in_a_row_differ() {
        let ids: std::collections::HashSet<String> = (0..200).map(|_| new_run_id("t")).collect();
        assert_eq!(ids.len(), 200);
    }
}
