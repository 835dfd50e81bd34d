//! The claims table as the reports print it: terminal, Markdown, LaTeX,
//! HTML and JSON. Every format holds the same facts: the intro (arm, test,
//! family, rule), per claim its verdicts and one line per row and baseline.

mod html;
mod json;
mod latex;
mod markdown;
mod terminal;

use super::effect::Side;
use super::learning::{LearningFamily, LearningTest, Scope};
use super::table::{Cell, ClaimResult, ClaimsTable, Judgement, Row};
use super::verdict::{Regime, Verdict};
use crate::definitions::Better;
use crate::stats::{ALPHA, CONFIDENCE};
use crate::summary::format::{NA, p_value, plain};

/// "n/a" or the mean, with "(n=k)" where runs were left out as undefined.
pub(super) fn mean_text(side: Option<Side>) -> String {
    match side {
        None => NA.to_string(),
        Some(s) if s.undefined > 0 => format!("{} (n={})", plain(s.mean), s.n),
        Some(s) => plain(s.mean),
    }
}

/// A side's n: "10 seeds", or "5 runs, 50 seeds" where the unit is the
/// training run.
pub(super) fn n_side(side: Option<Side>) -> String {
    match side {
        None => NA.to_string(),
        Some(s) if s.by_run => format!("{} runs, {} seeds", s.runs, s.seeds),
        Some(s) => format!("{} seeds", s.seeds),
    }
}

/// Both n of a test: the judged arm's, then the baseline's.
pub(super) fn n_text(row: &Row, cell: &Cell) -> String {
    format!("{} vs {}", n_side(row.arm_side), n_side(cell.baseline_side))
}

/// "diff [low, high]".
pub(super) fn diff_text(cell: &Cell) -> String {
    match &cell.effect {
        None => NA.to_string(),
        Some(e) => match e.ci {
            Some(ci) => format!("{} [{}, {}]", plain(e.diff), plain(ci.low), plain(ci.high)),
            None => format!("{} [{NA}]", plain(e.diff)),
        },
    }
}

pub(super) fn p_text(cell: &Cell) -> String {
    cell.effect.map_or_else(|| NA.to_string(), |e| p_value(e.test.p))
}

pub(super) fn p_holm_text(cell: &Cell) -> String {
    match (cell.effect, cell.p_holm) {
        (Some(e), Some(_)) if e.tied => "1 (tied)".to_string(),
        (_, Some(p)) => p_value(p),
        _ => NA.to_string(),
    }
}

pub(super) fn arrow(b: Better) -> &'static str {
    match b {
        Better::Lower => "↓",
        Better::Higher => "↑",
        Better::Neither => "",
    }
}

/// The metric with its direction, "*" where the claim sets the direction.
pub(super) fn metric_text(row: &Row) -> String {
    let star = if row.spec.direction_from_claim() { "*" } else { "" };
    format!("{} {}{star}", row.spec.label(), arrow(row.better))
}

/// "Claim 1 (packing): smart packing (…) on pressure (cascading-pressure)".
pub(super) fn claim_title(claim: &ClaimResult) -> String {
    let on: Vec<String> = claim
        .scenarios
        .iter()
        .map(|(s, roles)| {
            let roles: Vec<&str> = roles.iter().map(|r| r.as_str()).collect();
            format!("{s} ({})", roles.join(", "))
        })
        .collect();
    let title = format!(
        "Claim {} ({}): {}",
        claim.spec.number, claim.spec.name, claim.spec.title
    );
    if on.is_empty() {
        title
    } else {
        format!("{title} on {}", on.join(", "))
    }
}

/// A control's verdicts on `claim`, in one line.
fn control_line(control: &Judgement, number: u8) -> Option<(Option<Verdict>, String)> {
    let claim = control.claim(number)?;
    let headline = claim.headline();
    let mut parts: Vec<String> = Vec::new();
    if let Some(v) = headline {
        parts.push(format!(
            "against `default`: {} ({})",
            v.verdict.as_str(),
            v.reasons.join("; ")
        ));
    }
    for v in claim.others() {
        parts.push(format!("against `{}`: {}", v.baseline, v.verdict.as_str()));
    }
    Some((
        headline.map(|v| v.verdict),
        format!(
            "Control `{}` (same rule, its own families): {}.",
            control.arm,
            parts.join("; ")
        ),
    ))
}

/// The regime rows, then the verdict against `default`, then the others,
/// each with its reasons, then each control's; text with `code` spans.
pub(super) fn verdict_lines(claim: &ClaimResult, arm: &str, controls: &[Judgement]) -> Vec<(Option<Verdict>, String)> {
    let mut out = Vec::new();
    for r in &claim.regime {
        let numbers = match (r.side, r.ci) {
            (Some(s), Some(ci)) => format!("{} [{}, {}]", plain(s.mean), plain(ci.low), plain(ci.high)),
            _ => NA.to_string(),
        };
        let state = match r.regime {
            Regime::Reached => "above 0: reached",
            Regime::NotReached => "not above 0: not reached",
            Regime::Undefined => "undefined",
        };
        out.push((
            None,
            format!(
                "Regime on `{}`: `{}`'s mean `{}` {} ({}% interval), {state}.",
                r.scenario,
                r.spec.arm,
                r.spec.metric,
                numbers,
                CONFIDENCE * 100.0
            ),
        ));
    }
    match claim.headline() {
        Some(v) => out.push((
            Some(v.verdict),
            format!(
                "Verdict against `default`: {} ({}).",
                v.verdict.as_str().to_uppercase(),
                v.reasons.join("; ")
            ),
        )),
        None => out.push((
            None,
            format!("No verdict against `default`: it is the judged arm `{arm}` itself."),
        )),
    }
    for v in claim.others() {
        out.push((
            Some(v.verdict),
            format!(
                "Against `{}`: {} ({}).",
                v.baseline,
                v.verdict.as_str(),
                v.reasons.join("; ")
            ),
        ));
    }
    out.extend(controls.iter().filter_map(|c| control_line(c, claim.spec.number)));
    out
}

/// What the table is, in one paragraph; text with `code` spans.
pub(super) fn intro(table: &ClaimsTable) -> String {
    let pct = CONFIDENCE * 100.0;
    let families: Vec<String> = table
        .families
        .iter()
        .map(|f| format!("`{}` {}", f.baseline, f.size))
        .collect();
    format!(
        "The claims of AGMARL-DKS (arXiv 2603.12031) against the default kube-scheduler, as pre-registered in \
         `{}` (registered {}, SHA-256 {}), tested on arm `{}` against each baseline present among `default`, \
         `binpack`, `cost-binpack`, `target-load` and `load-aware`, on the scenarios that declare each claim. Per \
         row: the judged arm's mean and the baseline's, both n (an arm whose folders hold several training runs is \
         sampled by training run: its per-training-run means over seeds; otherwise by seed), the difference of \
         means (judged − baseline) with its {pct}% bootstrap interval (1,000 resamples of each side, training runs \
         then seeds within each where the unit is the training run, seeded from the scenario's statistics seed), \
         the two-sided Mann–Whitney U p and that p Holm-adjusted over the tests of the judged arm against that \
         baseline in the table (tests: {}; tests whose values are all equal cannot reject and are left out of the \
         family, Holm p 1); a difference is significant at Holm p < {ALPHA}, its direction that of Cliff's delta. \
         ↓/↑: lower/higher is better, as the metric's definition says; *: the definition names no direction and \
         the claim's wording sets it.",
        super::prereg::PREREGISTRATION_PATH,
        table.registration.date,
        table.registration.sha256,
        table.arm,
        if families.is_empty() {
            "none".to_string()
        } else {
            families.join(", ")
        }
    )
}

/// One line per scenario that is partial.
pub(super) fn incomplete_lines(table: &ClaimsTable) -> Vec<String> {
    table
        .scenarios
        .iter()
        .filter_map(|s| s.incomplete.as_ref().map(|b| format!("`{}`: {b}", s.scenario)))
        .collect()
}

/// The column headers of a claim's table.
pub(super) fn header(arm: &str) -> [String; 10] {
    [
        "scenario".to_string(),
        "metric".to_string(),
        "role".to_string(),
        "baseline".to_string(),
        format!("{arm} mean"),
        "baseline mean".to_string(),
        "n".to_string(),
        format!("{arm} − baseline [{}% CI]", CONFIDENCE * 100.0),
        "p".to_string(),
        "Holm p".to_string(),
    ]
}

/// The cells of one row against one baseline, as [`header`] orders them,
/// then the outcome (or why the row is undefined).
pub(super) fn cells(row: &Row, cell: &Cell) -> ([String; 10], String) {
    use super::verdict::Outcome;
    let outcome = match (&cell.missing, cell.outcome) {
        (Some(why), Outcome::NotApplicable) => why.clone(),
        (Some(why), _) => format!("undefined: {why}"),
        (None, o) => o.as_str().to_string(),
    };
    (
        [
            row.scenario.to_string(),
            metric_text(row),
            row.spec.role.as_str().to_string(),
            cell.baseline.clone(),
            mean_text(row.arm_side),
            mean_text(cell.baseline_side),
            n_text(row, cell),
            diff_text(cell),
            p_text(cell),
            p_holm_text(cell),
        ],
        outcome,
    )
}

/// Every (row, cell) of a claim, row by row, baselines in order.
pub(super) fn lines(claim: &ClaimResult) -> impl Iterator<Item = (&Row, &Cell)> {
    claim.rows.iter().flat_map(|r| r.cells.iter().map(move |c| (r, c)))
}

/// The columns of a learning family's table.
pub(super) const LEARNING_HEADER: [&str; 8] = [
    "scenario",
    "metric",
    "judged arm (n)",
    "control (n)",
    "difference [95% CI]",
    "p",
    "p (Holm)",
    "result",
];

/// What the learning section is, in one paragraph; text with `code` spans.
pub(super) fn learning_intro(table: &ClaimsTable) -> String {
    format!(
        "`{}` against its controls on the training objective's own metrics (pre-registration, \"What \
         learning must show\", H2 and selection and restraint, with amendment 2): Mann–Whitney on the \
         units of replication, Holm per control and family, p < {ALPHA}, lower is better. Per scenario is \
         the registered family; pooled is each unit's mean over the scenarios of its value over \
         `default`'s mean there.",
        table.arm
    )
}

fn learning_scope(t: &LearningTest) -> String {
    match &t.scope {
        Scope::Scenario(s) => s.clone(),
        Scope::Pooled { scenarios, left_out } if left_out.is_empty() => {
            format!("pooled ({} scenarios)", scenarios.len())
        }
        Scope::Pooled { scenarios, left_out } => format!(
            "pooled ({} scenarios; without {}: default's mean is 0)",
            scenarios.len(),
            left_out.join(", ")
        ),
    }
}

/// One family's title with its size.
pub(super) fn learning_title(f: &LearningFamily) -> String {
    format!("{}: {} tests", f.title(), f.size())
}

/// One line per test of a family, in [`LEARNING_HEADER`]'s columns.
pub(super) fn learning_rows(f: &LearningFamily) -> Vec<[String; 8]> {
    f.tests
        .iter()
        .map(|t| {
            let side = |s: Option<Side>| format!("{} ({})", mean_text(s), n_side(s));
            let diff = match &t.effect {
                None => NA.to_string(),
                Some(e) => match e.ci {
                    Some(ci) => format!("{} [{}, {}]", plain(e.diff), plain(ci.low), plain(ci.high)),
                    None => format!("{} [{NA}]", plain(e.diff)),
                },
            };
            let p_holm = match (t.effect, t.p_holm) {
                (Some(e), Some(_)) if e.tied => "1 (tied)".to_string(),
                (_, Some(p)) => p_value(p),
                _ => NA.to_string(),
            };
            [
                learning_scope(t),
                format!("{} {}", t.metric, arrow(t.better)),
                side(t.arm_side),
                side(t.control_side),
                diff,
                t.effect.map_or_else(|| NA.to_string(), |e| p_value(e.test.p)),
                p_holm,
                t.outcome.as_str().to_string(),
            ]
        })
        .collect()
}
