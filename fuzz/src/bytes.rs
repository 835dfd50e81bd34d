//! Byte-level mutations, after the structure-level ones: what no tree can
//! express (a cut in the middle of a token, a stray quote, invalid UTF-8, a
//! NUL), as a classic fuzzer's havoc stage does.

use crate::generate::{pick, small_or_large};
use rand::Rng;

/// Tokens that YAML, JSON or the expression language treat specially.
const TOKENS: &[&str] = &[
    ": ",
    "- ",
    "-",
    ":",
    "{",
    "}",
    "[",
    "]",
    ",",
    "&a ",
    "*a",
    "<<: *a\n",
    "${",
    "${nodes",
    "}",
    "!!",
    "!!str ",
    "\t",
    "\n",
    "\r\n",
    "\r",
    "#",
    "'",
    "\"",
    "\\",
    "|",
    ">",
    "---\n",
    "...\n",
    "%YAML 1.1\n",
    "\u{feff}",
    "\0",
    "?",
    "@",
    "`",
    "%",
    "~",
    "null",
    "true",
    "NaN",
    "1e999",
    "-1",
    "0",
    "99999999999999999999",
    "\u{2028}",
    "\u{85}",
    "é",
    "🦀",
    " ",
    "    ",
    "\"\\u0000\"",
    "\"\\ud800\"",
    "{\"",
    "\":",
    "null,",
    "[[[[[[[[",
    "]]]]]]]]",
];

/// The most an input may grow to: the 4 MiB that schedlab reads of a
/// scenario file or a kubeconfig. A larger text is outside what the
/// formats promise to handle quickly, so mutations stop growing it there.
pub const MAX_INPUT: usize = 4 << 20;

/// Applies 1..=`max` random byte mutations to `bytes`.
pub fn havoc(bytes: &mut Vec<u8>, max: usize, rng: &mut impl Rng) {
    let n = rng.random_range(1..=max.max(1));
    for _ in 0..n {
        one(bytes, rng);
    }
    bytes.truncate(MAX_INPUT);
}

/// [`havoc`] that leaves alone every line holding one of `keep` (a planted
/// credential and the key that says it is one): a mutation that would
/// change, remove or copy such a line is not made. A credential whose key
/// was mangled (`toke�n: x`) is no longer recognisably one, and a copy of
/// it in another field is not a credential; neither showing is a leak.
pub fn havoc_keeping(bytes: &mut Vec<u8>, keep: &[&str], max: usize, rng: &mut impl Rng) {
    let kept = |b: &[u8]| -> Vec<Vec<u8>> {
        b.split(|&c| c == b'\n')
            .filter(|line| {
                keep.iter()
                    .any(|k| !k.is_empty() && line.windows(k.len()).any(|w| w == k.as_bytes()))
            })
            .map(<[u8]>::to_vec)
            .collect()
    };
    let before = kept(bytes);
    let n = rng.random_range(1..=max.max(1));
    for _ in 0..n {
        let mut trial = bytes.clone();
        one(&mut trial, rng);
        if kept(&trial) == before {
            *bytes = trial;
        }
    }
    bytes.truncate(MAX_INPUT);
}

fn one(bytes: &mut Vec<u8>, rng: &mut impl Rng) {
    let len = bytes.len();
    let at = |rng: &mut dyn rand::RngCore| if len == 0 { 0 } else { rng.random_range(0..len) };
    match rng.random_range(0..10) {
        // flip a bit
        0 if len > 0 => {
            let i = at(rng);
            bytes[i] ^= 1 << rng.random_range(0..8);
        }
        // a random byte in place
        1 if len > 0 => {
            let i = at(rng);
            bytes[i] = rng.random();
        }
        // insert random bytes
        2 => {
            let i = at(rng);
            let k = rng.random_range(1..=8);
            let fresh: Vec<u8> = (0..k).map(|_| rng.random()).collect();
            bytes.splice(i..i, fresh);
        }
        // delete a range
        3 if len > 0 => {
            let i = at(rng);
            let k = small_or_large(rng, 8, len - i).min(len - i);
            bytes.drain(i..i + k);
        }
        // duplicate a range
        4 if len > 0 => {
            let i = at(rng);
            let k = small_or_large(rng, 16, 4096).min(len - i);
            let copy = bytes[i..i + k].to_vec();
            bytes.splice(i..i, copy);
        }
        // truncate
        5 if len > 0 => {
            let i = at(rng);
            bytes.truncate(i);
        }
        // a whole line repeated or removed
        6 if len > 0 => {
            let i = at(rng);
            let start = bytes[..i].iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
            let end = bytes[i..].iter().position(|&b| b == b'\n').map_or(len, |p| i + p + 1);
            if rng.random_bool(0.5) {
                bytes.drain(start..end);
            } else {
                let line = &bytes[start..end];
                // no further than the cap: a long line repeated 200 times is
                // hundreds of megabytes that the cap would cut off anyway
                let room = MAX_INPUT.saturating_sub(len) / line.len().max(1);
                let times = small_or_large(rng, 2, 200).min(room);
                let block = line.repeat(times);
                bytes.splice(start..start, block);
            }
        }
        // a special token
        _ => {
            let i = at(rng);
            let t = pick(rng, TOKENS).as_bytes();
            bytes.splice(i..i, t.iter().copied());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::input_rng;

    #[test]
    fn havoc_changes_the_input_and_is_deterministic() {
        let base = b"name: x\nduration: 1h\ncluster:\n  pools: []\n".to_vec();
        let run = |i| {
            let mut b = base.clone();
            havoc(&mut b, 4, &mut input_rng("bytes", 1, i));
            b
        };
        let changed = (0..200).filter(|&i| run(i) != base).count();
        assert!(changed > 190, "{changed}");
        assert_eq!(run(7), run(7));
    }

    #[test]
    fn havoc_keeping_leaves_the_kept_lines_alone() {
        let base = b"users:\n- name: u\n  user:\n    token: s3cr3t\n  x: y\n".to_vec();
        let mut changed = 0;
        for i in 0..500 {
            let mut b = base.clone();
            havoc_keeping(&mut b, &["s3cr3t"], 4, &mut input_rng("bytes", 3, i));
            let text = String::from_utf8_lossy(&b);
            let lines: Vec<&str> = text.split('\n').filter(|l| l.contains("s3cr3t")).collect();
            assert_eq!(lines, ["    token: s3cr3t"], "{text:?}");
            changed += usize::from(b != base);
        }
        assert!(changed > 300, "{changed}");
    }

    #[test]
    fn havoc_does_not_grow_an_input_far_past_the_cap() {
        let long_line = vec![b'x'; 500_000];
        for i in 0..50 {
            let mut b = long_line.clone();
            havoc(&mut b, 4, &mut input_rng("bytes", 4, i));
            assert!(b.len() <= MAX_INPUT, "{}", b.len());
        }
    }

    #[test]
    fn havoc_handles_the_empty_input() {
        for i in 0..100 {
            let mut b = Vec::new();
            havoc(&mut b, 4, &mut input_rng("bytes", 2, i));
        }
    }
}
