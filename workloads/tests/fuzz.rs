//! Property-based fuzzing of the parser: whatever the input, loading returns
//! Ok or Err and never panics; what loads also expands without panicking.

mod common;

use proptest::prelude::*;
use std::io::Write;

fn small() -> String {
    common::read_data("small.yaml")
}

/// Loads through a file, as `schedlab scenario FILE` does.
fn load_text(text: &str) -> Result<workloads::Scenario, workloads::ScenarioError> {
    let mut f = tempfile::NamedTempFile::new().expect("temp file");
    f.write_all(text.as_bytes()).expect("temp file written");
    workloads::load(f.path().to_str().expect("utf-8 temp path"), &[])
}

fn exercise(result: Result<workloads::Scenario, workloads::ScenarioError>) {
    match result {
        Ok(s) => {
            let t = s.expand(1);
            assert!(t.actions.windows(2).all(|w| w[0].at <= w[1].at));
            let _ = s.resolved();
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.is_empty() && !msg.contains('\n'), "{msg:?}");
        }
    }
}

/// Fragments that YAML, the expression language or the validator treat specially.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("-".to_string()),
        Just(":".to_string()),
        Just("{".to_string()),
        Just("}".to_string()),
        Just("[".to_string()),
        Just("&a".to_string()),
        Just("*a".to_string()),
        Just("<<: *a".to_string()),
        Just("${".to_string()),
        Just("${nodes / 0}".to_string()),
        Just("${((((((1".to_string()),
        Just("\"".to_string()),
        Just("'".to_string()),
        Just("#".to_string()),
        Just("\n".to_string()),
        Just("  ".to_string()),
        Just("\t".to_string()),
        Just("~".to_string()),
        Just("-1".to_string()),
        Just("0".to_string()),
        Just("1e308".to_string()),
        Just("NaN".to_string()),
        Just(".inf".to_string()),
        Just("999".to_string()),
        Just("1ms".to_string()),
        "[a-z_]{1,6}",
        "[0-9.]{1,4}",
        any::<char>().prop_map(|c| c.to_string()),
    ]
}

#[derive(Debug, Clone)]
enum Mutation {
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapValues(usize, usize),
    Insert(usize, String),
    ReplaceValue(usize, String),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapValues(a, b)),
        (any::<usize>(), fragment()).prop_map(|(at, s)| Mutation::Insert(at, s)),
        (any::<usize>(), fragment()).prop_map(|(at, s)| Mutation::ReplaceValue(at, s)),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let n = lines.len();
    match m {
        Mutation::DeleteLine(i) => {
            lines.remove(i % n);
        }
        Mutation::DuplicateLine(i) => {
            let l = lines[i % n].clone();
            lines.insert(i % n, l);
        }
        Mutation::SwapValues(a, b) => {
            let (a, b) = (a % n, b % n);
            if let (Some(x), Some(y)) = (lines[a].find(": "), lines[b].find(": ")) {
                let va = lines[a][x + 2..].to_string();
                let vb = lines[b][y + 2..].to_string();
                lines[a] = format!("{}: {vb}", &lines[a][..x]);
                lines[b] = format!("{}: {va}", &lines[b][..y]);
            }
        }
        Mutation::Insert(at, s) => {
            let joined = lines.join("\n");
            let mut cut = at % (joined.len() + 1);
            while !joined.is_char_boundary(cut) {
                cut -= 1;
            }
            return format!("{}{s}{}", &joined[..cut], &joined[cut..]);
        }
        Mutation::ReplaceValue(i, s) => {
            let i = i % n;
            if let Some(x) = lines[i].find(": ") {
                lines[i] = format!("{}: {s}", &lines[i][..x]);
            }
        }
    }
    lines.join("\n")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_strings_never_panic(text in ".{0,400}") {
        exercise(workloads::parse_str("fuzz", &text));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        exercise(workloads::parse_str("fuzz", &String::from_utf8_lossy(&bytes)));
    }

    #[test]
    fn mutated_scenarios_never_panic(mutations in proptest::collection::vec(mutation(), 1..4)) {
        let mut text = small();
        for m in &mutations {
            text = apply(&text, m);
        }
        exercise(load_text(&text));
    }

    #[test]
    fn mutated_builtins_never_panic(which in 0usize..2, mutations in proptest::collection::vec(mutation(), 1..3)) {
        let mut text = workloads::builtins()[which].yaml.to_string();
        for m in &mutations {
            text = apply(&text, m);
        }
        exercise(workloads::parse_str_with("fuzz", &text, &["nodes=4".to_string()]));
    }

    #[test]
    fn arbitrary_overrides_never_panic(key in "[a-z_]{0,12}", value in ".{0,20}") {
        exercise(workloads::load("churn", &[format!("{key}={value}")]));
        exercise(workloads::load("pressure", &[format!("nodes={value}")]));
    }
}

#[test]
fn the_unmutated_inputs_are_valid() {
    load_text(&small()).unwrap();
    for b in workloads::builtins() {
        if b.files.is_empty() {
            workloads::parse_str_with("fuzz", b.yaml, &["nodes=4".to_string()]).unwrap();
        } else {
            // its replay reads bundled files, which only loading by name finds
            workloads::load(b.name, &["nodes=4".to_string()]).unwrap();
        }
    }
}
