//! Seeded randomness and the values mutations draw from.
//!
//! Every input gets its own ChaCha8 stream, keyed by the run's seed and the
//! target's name and selected by the input's index, so input `i` of a run
//! can be regenerated alone, without the `i - 1` inputs before it: a failure
//! is reproduced from (target, seed, index).

use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The random stream of input `index` of target `target` in a run seeded `seed`.
pub fn input_rng(target: &str, seed: u64, index: u64) -> ChaCha8Rng {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    // the name, cut to the key's 24 remaining bytes, keeps targets' inputs apart
    for (k, b) in key[8..].iter_mut().zip(target.bytes()) {
        *k = b;
    }
    let mut rng = ChaCha8Rng::from_seed(key);
    rng.set_stream(index);
    rng
}

/// One of `items`, uniformly. `items` must not be empty.
pub fn pick<'a, T, R: Rng + ?Sized>(rng: &mut R, items: &'a [T]) -> &'a T {
    &items[rng.random_range(0..items.len())]
}

/// A count that is usually small and sometimes large: most mutations want a
/// few, and the rare large one finds what scales badly.
pub fn small_or_large<R: Rng + ?Sized>(rng: &mut R, small: usize, large: usize) -> usize {
    if rng.random_bool(0.95) {
        rng.random_range(1..=small.max(1))
    } else {
        rng.random_range(small.max(1)..=large.max(small.max(1)))
    }
}

/// Numbers as YAML and JSON may write them, at and past every edge a field
/// checks: zero, signs, the 32- and 64-bit limits, the f64 limits, the
/// scenario caps and one past them, and spellings only some parsers accept.
pub const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "2",
    "0.5",
    "-0.5",
    "0.1",
    "1e308",
    "-1e308",
    "1e309",
    "1.7976931348623157e308",
    "5e-324",
    "1e-320",
    "2147483647",
    "2147483648",
    "-2147483648",
    "-2147483649",
    "4294967295",
    "4294967296",
    "9007199254740993",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999",
    "100000",
    "100001",
    "1000000",
    "1000001",
    "10000000",
    "20000001",
    ".nan",
    ".NaN",
    "NaN",
    ".inf",
    "-.inf",
    "+.inf",
    "inf",
    "0x7fffffff",
    "0o777",
    "0b101",
    "1_000",
    "1e3",
    "1E+3",
    "+5",
    "007",
    "1.",
    ".1",
    "1..2",
    "--1",
    "1e",
    "e1",
    "3.000000000000001",
    "0.49999999999999994",
    "2.5",
];

/// Durations, spelled right and wrong, at the zero, millisecond and 366-day edges.
pub const DURATIONS: &[&str] = &[
    "0",
    "0s",
    "1ms",
    "0.4ms",
    "0.5ms",
    "1s",
    "59s",
    "90s",
    "5m",
    "1h",
    "1h30m",
    "1.5h",
    "2d",
    "366d",
    "367d",
    "8784h",
    "8785h",
    "31622400",
    "31622401",
    "1e9h",
    "-5m",
    "-0s",
    "5 m",
    "5mm",
    "1h1h",
    "1d1",
    "P1D",
    "1h30m15s250ms",
    "5µs",
    "5us",
    "1y",
    "m",
    "1.2.3s",
    "1e3s",
    "99999999999999999999s",
    ".5m",
];

/// cpu and memory quantities, the units Kubernetes knows and some it does not.
pub const QUANTITIES: &[&str] = &[
    "0",
    "1m",
    "0.5m",
    "0.0001",
    "250m",
    "1.5",
    "1e3",
    "1e15",
    "1e16",
    "1Ki",
    "1k",
    "1K",
    "1M",
    "1Mi",
    "512Mi",
    "1Gi",
    "1.5Gi",
    "1G",
    "1T",
    "1Pi",
    "1P",
    "1E",
    "8Ei",
    "16Ei",
    "1e18",
    "1e400",
    "-1",
    "-1Gi",
    "1mi",
    "1MB",
    "0.1",
    "1.0000001Mi",
    "Mi",
    "1 Gi",
    "1Gi ",
    "1e-3",
    "100n",
    "100u",
];

/// Strings at the edges of what names, labels and texts allow.
pub fn strings(rng: &mut impl Rng) -> String {
    const FIXED: &[&str] = &[
        "",
        " ",
        "a",
        "A",
        "-a",
        "a-",
        "a--b",
        "a.b",
        "a_b",
        "ünïcödé",
        "名前",
        "🦀",
        "a\u{0301}",
        "\u{202e}abc",
        "\u{200b}",
        "\u{feff}",
        "\u{2028}",
        "\u{85}",
        "\0",
        // terminal control: colour, a window title (OSC ... BEL), a C1 CSI, a bell
        "\u{1b}[31mred\u{1b}[0m",
        "\u{1b}]0;title\u{7}",
        "\u{9b}2J",
        "\u{7}",
        "a\nb",
        "a\r\nb",
        "a\rb",
        "\t",
        "a\tb",
        "${nodes}",
        "${",
        "}",
        "$",
        "$${nodes}",
        "${nodes}${nodes}",
        "%s%s%n",
        "../../etc/passwd",
        "/dev/zero",
        "null",
        "true",
        "~",
        "cloud.google.com/gke-spot",
        "kubernetes.io/hostname",
        "on-demand",
        "spot",
        "NoSchedule",
        "NoExecute",
        "PreferNoSchedule",
        "Exists",
        "Equal",
        "Always",
        "OnFailure",
        "Never",
        "keep",
        "skip",
        "openb-pod-list",
        "requests",
        "none",
    ];
    match rng.random_range(0..10) {
        0 => "a".repeat(*pick(rng, &[50, 51, 63, 64, 253, 254])),
        1 => "x".repeat(*pick(rng, &[65_535, 65_536, 65_537, 300_000])),
        2 => {
            // a run of random characters from every plane
            let n = rng.random_range(1..40);
            (0..n).map(|_| random_char(rng)).collect()
        }
        _ => pick(rng, FIXED).to_string(),
    }
}

/// A character: mostly ASCII, sometimes control characters or any Unicode scalar.
pub fn random_char(rng: &mut impl Rng) -> char {
    match rng.random_range(0..4) {
        0 => char::from(rng.random_range(0u8..0x20)),
        1 => loop {
            if let Some(c) = char::from_u32(rng.random_range(0x80..0x11_0000)) {
                break c;
            }
        },
        _ => char::from(rng.random_range(0x20u8..0x7f)),
    }
}

/// A scalar value for a field named `key`, usually of the kind the key
/// suggests (so that it gets past the type check to the range checks), and
/// otherwise of any kind.
pub fn value_for(rng: &mut impl Rng, key: &str) -> String {
    const DURATION_KEYS: &[&str] = &[
        "duration",
        "sample_interval",
        "at",
        "over",
        "every",
        "for",
        "wait",
        "recover_after",
        "fail_after",
        "replace_after",
        "offset",
        "mean",
        "std",
        "median",
        "min",
        "max",
    ];
    const QUANTITY_KEYS: &[&str] = &["cpu", "memory", "mean", "std", "median", "min", "max", "const"];
    let kind = if rng.random_bool(0.7) {
        if DURATION_KEYS.contains(&key) && rng.random_bool(0.5) {
            1
        } else if QUANTITY_KEYS.contains(&key) {
            2
        } else {
            0
        }
    } else {
        rng.random_range(0..4)
    };
    match kind {
        0 => pick(rng, NUMBERS).to_string(),
        1 => pick(rng, DURATIONS).to_string(),
        2 => pick(rng, QUANTITIES).to_string(),
        _ => strings(rng),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inputs_stream_depends_on_target_seed_and_index_only() {
        let draw = |t: &str, s: u64, i: u64| {
            let mut r = input_rng(t, s, i);
            (0..8).map(|_| r.random::<u64>()).collect::<Vec<_>>()
        };
        assert_eq!(draw("scenario", 1, 7), draw("scenario", 1, 7));
        assert_ne!(draw("scenario", 1, 7), draw("scenario", 1, 8));
        assert_ne!(draw("scenario", 1, 7), draw("scenario", 2, 7));
        assert_ne!(draw("scenario", 1, 7), draw("records", 1, 7));
    }

    #[test]
    fn values_follow_their_key_most_of_the_time() {
        let mut rng = input_rng("t", 1, 0);
        let durations = (0..1000)
            .filter(|_| DURATIONS.contains(&value_for(&mut rng, "wait").as_str()))
            .count();
        assert!(durations > 250, "{durations}");
    }
}
