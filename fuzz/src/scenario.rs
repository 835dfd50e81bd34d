//! Target `scenario`: scenario YAML through `workloads::parse_str_with`
//! (and, now and then, `workloads::load` of a file).
//!
//! Inputs start from real scenarios (the built-ins, the test scenario that
//! uses every phase, the example in FORMAT.md), parsed into trees, reshaped
//! by structure mutations, written in a random YAML style and then, for a
//! share of them, mutated byte by byte. A `replay` phase reads a trace file
//! from the run's folder: the bundled sample, or a mutated copy of it.
//!
//! What loads must also expand for a seed into a timeline whose actions are
//! sorted by time, resolve, and (for a quarter of them) load again from its
//! resolved JSON into the same timeline, as FORMAT.md promises.

use crate::bytes::havoc;
use crate::generate::{DURATIONS, NUMBERS, QUANTITIES, pick, strings, value_for};
use crate::mutate::mutate;
use crate::oracle::{Checked, check_error, one_line};
use crate::yaml::{Node, Style, write};
use crate::{FuzzError, Target, expr};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::path::PathBuf;

/// The trace file a mutated replay reads.
const FUZZ_TRACE: &str = "trace-fuzz.csv";
/// A credential planted in files a trace path may name (inside the
/// scenario's folder and outside it): no message may show it.
const PLANTED_SECRET: &str = "fz-planted-9c2e71d04b";
/// The first line of those files, as a `.env` or an environment dump has it.
const PLANTED_LINE: &str = "AWS_SECRET_ACCESS_KEY=fz-planted-9c2e71d04b";

/// Rows of the bundled sample kept in a mutated trace: enough for every
/// qos class, few enough to keep an input cheap.
const TRACE_ROWS: usize = 60;

/// A scenario to load.
#[derive(Debug, Clone)]
pub struct Case {
    pub yaml: Vec<u8>,
    pub overrides: Vec<String>,
    /// the mutated trace file, when the scenario replays one
    pub trace: Option<Vec<u8>>,
    /// load it from a file with `workloads::load` rather than `parse_str_with`
    pub from_file: bool,
    /// the seed it is expanded with
    pub seed: u64,
}

/// A real scenario to start from, and its params.
#[derive(Debug, Clone)]
struct Base {
    tree: Node,
    params: Vec<String>,
}

/// The `scenario` target: its bases and a folder for the files it reads.
#[derive(Debug)]
pub struct Scenario {
    bases: Vec<Base>,
    keys: Vec<String>,
    sample_csv: String,
    dir: tempfile::TempDir,
    /// a folder beside it holding a planted secret, for trace paths that
    /// escape the scenario's folder (kept for its lifetime: dropped, it is deleted)
    _outside: tempfile::TempDir,
    /// trace paths that name a file holding [`PLANTED_SECRET`]
    secret_paths: Vec<String>,
    /// what the last input earned beyond the time limit
    allowance: std::time::Duration,
}

impl Scenario {
    pub fn new() -> Result<Scenario, FuzzError> {
        let dir = tempfile::tempdir().map_err(|e| FuzzError::io("a temporary folder", e))?;
        let mut texts: Vec<(String, String)> = workloads::builtins()
            .iter()
            .map(|b| (format!("builtin:{}", b.name), b.yaml.to_string()))
            .collect();
        texts.push((
            "workloads/tests/data/small.yaml".into(),
            include_str!("../../workloads/tests/data/small.yaml").into(),
        ));
        texts.push(("FORMAT.md".into(), format_example()));
        // a replay reads its trace beside the scenario: the bundled files go in the folder
        for b in workloads::builtins() {
            for (name, text) in b.files {
                std::fs::write(dir.path().join(name), text).map_err(|e| FuzzError::io(*name, e))?;
            }
        }
        let mut bases = Vec::new();
        let mut keys = std::collections::BTreeSet::new();
        for (name, text) in texts {
            let value: serde_json::Value =
                serde_saphyr::from_str(&text).map_err(|e| FuzzError::Base(format!("{name}: {e}")))?;
            let tree = Node::from_json(&value);
            for (_, k) in tree.paths() {
                keys.extend(k);
            }
            let params = value["params"]
                .as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default();
            bases.push(Base { tree, params });
        }
        // files a shared scenario's trace path could point at: a .env beside
        // it, and one outside its folder (by an absolute path or through ..)
        let outside = tempfile::tempdir().map_err(|e| FuzzError::io("a temporary folder", e))?;
        let planted = format!("{PLANTED_LINE}\nAPI_PASSWORD={PLANTED_SECRET}\n");
        for (folder, name) in [(dir.path(), ".env"), (outside.path(), "secret.env")] {
            std::fs::write(folder.join(name), &planted).map_err(|e| FuzzError::io(name, e))?;
        }
        let outside_file = outside.path().join("secret.env");
        let escaping = outside
            .path()
            .file_name()
            .map(|n| format!("../{}/secret.env", n.to_string_lossy()))
            .unwrap_or_default();
        let secret_paths = vec![
            ".env".to_string(),
            "./.env".to_string(),
            "missing/../.env".to_string(),
            outside_file.display().to_string(),
            escaping,
        ];
        let sample_csv = workloads::builtin("trace")
            .and_then(|b| b.files.first())
            .map(|(_, text)| text.lines().take(TRACE_ROWS + 1).collect::<Vec<_>>().join("\n"))
            .unwrap_or_default();
        Ok(Scenario {
            bases,
            keys: keys.into_iter().collect(),
            sample_csv,
            dir,
            _outside: outside,
            secret_paths,
            allowance: std::time::Duration::ZERO,
        })
    }

    fn origin(&self) -> String {
        self.dir.path().join("fuzz.yaml").display().to_string()
    }
}

/// The complete example of FORMAT.md: the docs' scenario is a real one too.
fn format_example() -> String {
    let doc = include_str!("../../workloads/FORMAT.md");
    doc.split("```yaml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .unwrap_or_default()
        .to_string()
}

/// A scalar for a field named `key`: an extreme number, duration or
/// quantity, an odd string, or a long `${...}` expression.
pub fn fresh_scalar(rng: &mut ChaCha8Rng, key: &str) -> Node {
    match rng.random_range(0..20) {
        0..=5 => Node::Plain(pick(rng, NUMBERS).to_string()),
        6..=8 => Node::Str(pick(rng, DURATIONS).to_string()),
        9..=10 => Node::Str(pick(rng, QUANTITIES).to_string()),
        11..=12 => Node::Str(strings(rng)),
        13..=15 => {
            let e = expr::expression(rng);
            Node::Str(format!("${{{}}}", expr::render(&e, rng)))
        }
        _ => Node::Str(value_for(rng, key)),
    }
}

impl Target for Scenario {
    type Case = Case;
    const NAME: &'static str = "scenario";

    fn generate(&mut self, rng: &mut ChaCha8Rng) -> Case {
        let base = pick(rng, &self.bases).clone();
        let mut tree = base.tree;
        let keys: Vec<&str> = self.keys.iter().map(String::as_str).collect();
        // a quarter only restyled (and resized), so that enough inputs load and expand
        let n = if rng.random_bool(0.25) {
            0
        } else {
            rng.random_range(1..=3)
        };
        mutate(&mut tree, n, &keys, &mut fresh_scalar, rng);
        let mut trace = None;
        let replays = tree
            .paths()
            .into_iter()
            .filter(|(_, k)| k.as_deref() == Some("trace"))
            .collect::<Vec<_>>();
        if !replays.is_empty() && rng.random_bool(0.5) {
            for (p, _) in &replays {
                if let Some(n) = tree.at_mut(p) {
                    *n = Node::str(FUZZ_TRACE);
                }
            }
            trace = Some(self.mutated_trace(rng));
        } else if !replays.is_empty() && rng.random_bool(0.2) {
            // a trace path naming a file that holds a credential
            let path = pick(rng, &self.secret_paths).clone();
            for (p, _) in &replays {
                if let Some(n) = tree.at_mut(p) {
                    *n = Node::str(path.clone());
                }
            }
        }
        if rng.random_bool(0.05) {
            grow_by_substitution(&mut tree, rng);
        }
        let mut yaml = write(&tree, &Style::random(rng), rng).into_bytes();
        if n > 0 && rng.random_bool(0.3) {
            havoc(&mut yaml, 4, rng);
        }
        yaml.truncate(crate::bytes::MAX_INPUT);
        let mut overrides = Vec::new();
        // the built-ins' default sizes make every input slow; most runs shrink them
        if base.params.iter().any(|p| p == "nodes") && rng.random_bool(0.7) {
            overrides.push(format!("nodes={}", rng.random_range(1..=8)));
        }
        if base.params.iter().any(|p| p == "duration") && rng.random_bool(0.5) {
            overrides.push(format!("duration={}m", rng.random_range(1..=20)));
        }
        if rng.random_bool(0.15) {
            let key = if !base.params.is_empty() && rng.random_bool(0.8) {
                pick(rng, &base.params).clone()
            } else {
                strings(rng)
            };
            let value = value_for(rng, &key);
            overrides.push(match rng.random_range(0..10) {
                0 => key,
                1 => format!("={value}"),
                _ => format!("{key}={value}"),
            });
        }
        Case {
            yaml,
            overrides,
            trace,
            from_file: rng.random_bool(0.1),
            seed: rng.random_range(0..4),
        }
    }

    fn exercise(&mut self, case: &Case) -> Checked {
        let origin = self.origin();
        // only this input's files: a replay must not read the one before's
        let trace_path = self.dir.path().join(FUZZ_TRACE);
        let _ = std::fs::remove_file(&trace_path);
        let _ = std::fs::remove_file(&origin);
        if let Some(t) = &case.trace
            && let Err(e) = std::fs::write(&trace_path, t)
        {
            return Checked::Violation(format!("the fuzzer could not write its trace file: {e}"));
        }
        let text = String::from_utf8_lossy(&case.yaml);
        let loaded = if case.from_file {
            if let Err(e) = std::fs::write(&origin, text.as_bytes()) {
                return Checked::Violation(format!("the fuzzer could not write its scenario file: {e}"));
            }
            workloads::load(&origin, &case.overrides)
        } else {
            workloads::parse_str_with(&origin, &text, &case.overrides)
        };
        let outcome = match &loaded {
            Ok(s) => check_loaded(&origin, s, case.seed),
            Err(e) => Err(e.to_string()),
        };
        self.allowance = allowance(&outcome);
        match (loaded, outcome) {
            (Ok(_), Ok(_)) => Checked::Accepted,
            (Ok(_), Err(problem)) => Checked::Violation(problem),
            (Err(_), Err(msg)) => match check_error(&msg, &[&origin], &[PLANTED_SECRET]) {
                Some(problem) => Checked::Violation(problem),
                None => Checked::Rejected,
            },
            (Err(_), Ok(_)) => Checked::Violation("unreachable: an error that checked".into()),
        }
    }

    fn allowance(&self) -> std::time::Duration {
        self.allowance
    }

    fn dump(case: &Case) -> Vec<u8> {
        let mut out = Vec::new();
        for o in &case.overrides {
            out.extend_from_slice(format!("# --set {}\n", one_line(o)).as_bytes());
        }
        out.extend_from_slice(
            format!(
                "# seed {}{}\n",
                case.seed,
                if case.from_file { ", loaded from a file" } else { "" }
            )
            .as_bytes(),
        );
        if let Some(t) = &case.trace {
            out.extend_from_slice(format!("# {FUZZ_TRACE} (beside the scenario):\n").as_bytes());
            for line in String::from_utf8_lossy(t).lines() {
                out.extend_from_slice(format!("#   {line}\n").as_bytes());
            }
        }
        out.extend_from_slice(&case.yaml);
        out
    }
}

/// Makes a small file spell a huge text: a param of up to 3,000 characters,
/// referred to up to 5,000 times in one text value (a name or a
/// description); substituted in full, that is up to 15 MB from a file of
/// 30 KB (a reader that built the text before checking its cap took
/// seconds and gigabytes on such files).
fn grow_by_substitution(tree: &mut Node, rng: &mut ChaCha8Rng) {
    let Node::Map(entries) = tree else { return };
    let long = "9".repeat(rng.random_range(100..=3000));
    match entries.iter_mut().find(|(k, _)| k == "params") {
        Some((_, Node::Map(params))) => params.push(("fuzz_big".into(), Node::str(long))),
        Some(_) => return,
        None => entries.push(("params".into(), Node::map(vec![("fuzz_big", Node::str(long))]))),
    }
    let texts: Vec<Vec<usize>> = tree
        .paths()
        .into_iter()
        .filter(|(p, k)| {
            matches!(k.as_deref(), Some("name" | "description" | "image")) && matches!(tree.at(p), Some(Node::Str(_)))
        })
        .map(|(p, _)| p)
        .collect();
    if texts.is_empty() {
        return;
    }
    let at = pick(rng, &texts).clone();
    let times = rng.random_range(10..=5000);
    if let Some(n) = tree.at_mut(&at) {
        *n = Node::str("${fuzz_big}".repeat(times));
    }
}

impl Scenario {
    /// The first rows of the bundled trace, with fields swapped for extreme
    /// values and bytes mutated.
    fn mutated_trace(&self, rng: &mut ChaCha8Rng) -> Vec<u8> {
        let mut rows: Vec<Vec<String>> = self
            .sample_csv
            .lines()
            .map(|l| l.split(',').map(str::to_string).collect())
            .collect();
        for _ in 0..rng.random_range(0..4) {
            let r = rng.random_range(0..rows.len());
            let row = &mut rows[r];
            match rng.random_range(0..5) {
                0 if !row.is_empty() => {
                    let c = rng.random_range(0..row.len());
                    row.remove(c);
                }
                1 => row.push(strings(rng)),
                _ if !row.is_empty() => {
                    let c = rng.random_range(0..row.len());
                    let choices = [
                        pick(rng, NUMBERS).to_string(),
                        strings(rng),
                        String::new(),
                        "nan".into(),
                    ];
                    row[c] = pick(rng, &choices).clone();
                }
                _ => {}
            }
        }
        if rng.random_bool(0.1) {
            // rows out of creation order
            let a = rng.random_range(1..rows.len());
            let b = rng.random_range(1..rows.len());
            rows.swap(a, b);
        }
        let mut bytes = rows
            .iter()
            .map(|r| r.join(","))
            .collect::<Vec<_>>()
            .join("\n")
            .into_bytes();
        if rng.random_bool(0.3) {
            havoc(&mut bytes, 3, rng);
        }
        bytes
    }

    /// The folder the target reads and writes in.
    pub fn dir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }
}

/// Time allowed per timeline action beyond the time limit, per pass over
/// it: loading expands a scenario once (its checks), the oracle once more,
/// and the round trip twice. Measured in a release build at about 0.1 µs an
/// action a pass for generated phases and 0.3 µs for replayed ones, whose
/// resolved form carries every pod inline (2,892 replays of the bundled
/// trace, 1.7 million pods, took 4.5 s); a slowdown well short of
/// quadratic still shows.
const PER_ACTION_PASS: std::time::Duration = std::time::Duration::from_nanos(500);

/// Time allowed per node of the timeline beyond the time limit, per pass:
/// a node carries more than an action (its pool, labels, taints, the
/// resolved form's JSON). Measured at about 2 µs a node a pass in a release
/// build (100,000 nodes, 0.8 s for the four passes).
const PER_NODE_PASS: std::time::Duration = std::time::Duration::from_micros(5);

/// Time allowed per byte of the resolved form read back in the round trip.
/// Reading a scenario costs 240–410 ns a byte in a release build, linearly
/// (6.4 MB of JSON in 2.6 s; the 45.6 MB resolved form of 2,892 replays of
/// the bundled trace, every pod inline, in 10.8 s).
const PER_RESOLVED_BYTE: std::time::Duration = std::time::Duration::from_micros(1);

/// How much a timeline that loaded holds: what the passes over it cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    pub actions: usize,
    pub nodes: usize,
    /// the resolved form's length when it was read back, else 0
    pub round_trip_bytes: usize,
}

/// The time an outcome of loading earns beyond the limit: four passes over
/// an accepted scenario's actions and nodes; one pass over the cap's worth
/// of actions for a scenario refused only once its expansion reached a cap.
pub fn allowance(outcome: &Result<Size, String>) -> std::time::Duration {
    let times = |per: std::time::Duration, n: usize| per.saturating_mul(u32::try_from(n).unwrap_or(u32::MAX));
    match outcome {
        Ok(size) => times(PER_ACTION_PASS * 4, size.actions)
            .saturating_add(times(PER_NODE_PASS * 4, size.nodes))
            .saturating_add(times(PER_RESOLVED_BYTE, size.round_trip_bytes)),
        Err(msg)
            if ["would create more than", "would have more than"]
                .iter()
                .any(|w| msg.contains(w)) =>
        {
            times(
                PER_ACTION_PASS,
                usize::try_from(workloads::MAX_ACTIONS).unwrap_or(usize::MAX),
            )
        }
        Err(_) => std::time::Duration::ZERO,
    }
}

/// The checks on a scenario that loaded, as a problem if one fails: it
/// expands for `seed` into a timeline sorted by time, resolves, and the
/// resolved JSON loads to the same timeline. Ok: the timeline's actions.
pub fn check_loaded(origin: &str, s: &workloads::Scenario, seed: u64) -> Result<Size, String> {
    let timeline = s.expand(seed);
    if let Some(w) = timeline.actions.windows(2).position(|w| w[0].at > w[1].at) {
        return Err(format!(
            "timeline not sorted: action {w} at {:?} before action {} at {:?}",
            timeline.actions[w].at,
            w + 1,
            timeline.actions[w + 1].at
        ));
    }
    let resolved = s.resolved();
    let mut round_trip_bytes = 0;
    // the round trip costs a second load: a quarter of the seeds check it
    if seed == 0 {
        let json = resolved.to_string();
        round_trip_bytes = json.len();
        match workloads::parse_str(origin, &json) {
            Ok(again) => {
                if again.expand(seed) != timeline {
                    return Err("the resolved scenario loads to another timeline".to_string());
                }
            }
            Err(e) => return Err(format!("the resolved scenario does not load: {e}")),
        }
    }
    Ok(Size {
        actions: timeline.actions.len(),
        nodes: timeline.nodes.len(),
        round_trip_bytes,
    })
}
