//! Requests drawn per pod slot: each slot of a template whose requests are
//! distributions gets its own spec, drawn once from a stream keyed by the
//! run's seed, the template's name and the slot's ordinal. Every arm of a
//! seed plays the same timeline, so it sees the same requests for the same
//! pod (common random numbers), and a slot keeps its requests across
//! incarnations, as a recreated pod keeps its autoscaler's recommendation.

use crate::model::{Template, UsageSource};
use crate::resolve::{request_cap, scaled};
use schedlab_core::rng::{self, purpose};
use schedlab_core::{Dist, PodSpec, Resources};

/// Stream keys of the two requests (under `purpose::POD_REQUESTS`), so a
/// memory draw does not depend on whether cpu is drawn too.
const CPU: u64 = 1;
const MEMORY: u64 = 2;

/// The spec of every slot `0..slots` of `t`; empty when its requests are
/// constant (every pod uses the template's spec).
pub(crate) fn slot_specs(t: &Template, seed: u64, slots: u32) -> Vec<PodSpec> {
    if !t.sizing.draws() {
        return Vec::new();
    }
    let key = name_key(&t.name);
    (0..slots).map(|ordinal| slot_spec(t, seed, key, ordinal)).collect()
}

/// One slot's spec: requests drawn (capped at the distribution's 99.9th
/// percentile, which validation checked fits some node), each limit keeping
/// the template's ratio of limit to the request's median, and a usage that
/// follows the request following it to this pod's request.
fn slot_spec(t: &Template, seed: u64, key: u64, ordinal: u32) -> PodSpec {
    let s = &t.sizing;
    let base = t.spec.requests;
    let draw = |d: &Option<Dist>, dim: u64, constant: u64| match d {
        Some(d) => {
            let mut rng = rng::stream(seed, &[purpose::POD_REQUESTS, key, dim, u64::from(ordinal)]);
            d.sample(&mut rng).min(request_cap(d)).round() as u64
        }
        None => constant,
    };
    let requests = Resources::new(
        draw(&s.cpu, CPU, base.cpu_milli),
        draw(&s.memory, MEMORY, base.memory_bytes),
    );
    let mut spec = t.spec.clone();
    spec.requests = requests;
    spec.limits = spec.limits.map(|l| {
        Resources::new(
            relative(l.cpu_milli, base.cpu_milli, requests.cpu_milli, s.cpu.is_some()),
            relative(
                l.memory_bytes,
                base.memory_bytes,
                requests.memory_bytes,
                s.memory.is_some(),
            ),
        )
    });
    let b = &mut spec.behaviour;
    if s.cpu.is_some() {
        follow(&mut b.cpu_usage, &s.cpu_usage, requests.cpu_milli);
    }
    if s.memory.is_some() {
        follow(&mut b.memory_usage, &s.memory_usage, requests.memory_bytes);
    }
    spec
}

/// A pod's limit: the written limit scaled by the pod's request over the
/// median request (a vertical autoscaler keeps limits proportional to
/// requests); 0 (no limit) stays 0, and a constant request keeps its limit.
fn relative(limit: u64, median: u64, request: u64, drawn: bool) -> u64 {
    if !drawn || limit == 0 || median == 0 {
        return limit;
    }
    if limit == median {
        // limits equal to requests stay equal (Guaranteed QoS), exactly
        return request;
    }
    (request as f64 * limit as f64 / median as f64).round() as u64
}

fn follow(usage: &mut Dist, source: &UsageSource, request: u64) {
    match source {
        UsageSource::Written => {}
        UsageSource::Requests => *usage = Dist::Const { value: request as f64 },
        UsageSource::Ratio(ratio) => *usage = scaled(ratio, request as f64),
    }
}

/// A template's stream key from its name (FNV-1a), so that adding or
/// renaming another template leaves this one's draws as they were.
fn name_key(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_keep_their_ratio_to_the_median() {
        assert_eq!(relative(2048, 1024, 1500, true), 3000);
        assert_eq!(relative(1024, 1024, 1500, true), 1500);
        assert_eq!(relative(0, 1024, 1500, true), 0);
        assert_eq!(relative(2048, 1024, 1500, false), 2048);
    }

    #[test]
    fn name_keys_differ_by_name() {
        assert_ne!(name_key("web"), name_key("job"));
        assert_eq!(name_key("web"), name_key("web"));
    }
}
