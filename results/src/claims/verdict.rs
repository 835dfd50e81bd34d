//! The verdict of a claim against one baseline, from the outcome of each of
//! its rows, as `evaluations/PREREGISTRATION.md` registers it.

use super::mapping::Role;
use serde::Serialize;

/// The rule, word for word as the reports and the book's claims chapter
/// (docs/src/claims.md) print it.
pub const VERDICT_RULE: &str = "As pre-registered (evaluations/PREREGISTRATION.md): per judged arm, claim and \
                                baseline, over every applicable row (each row of the claim on each scenario of the \
                                table whose declared role it covers): `supported` when the judged arm is \
                                significantly better on every primary row and significantly worse on no row, \
                                primary or guard; `contradicted` when it is significantly worse on at least one \
                                primary row and significantly better on no row; `not shown` otherwise, and always \
                                when a row is undefined (its scenario's run folder lacks the judged arm or the \
                                baseline, no run of one side defines the metric, or whether a side preempts is \
                                unknown), when a regime row fails (for claim 3: `default`'s 95% interval of the \
                                mean over seeds of `mem_failure_partial_pearson` does not lie above 0 on every \
                                applicable scenario: \"not shown (regime not reached)\"), or when the claim has no \
                                applicable row. Significance: two-sided Mann–Whitney U on the two samples (per \
                                seed; per training run for an arm whose folders hold several training runs of it, \
                                its per-training-run means over seeds), Holm-adjusted over every test of the judged \
                                arm against that baseline in the table (one family per table, judged arm and \
                                baseline), p < 0.05, its direction that of Cliff's delta, better as the metric's \
                                definition says, or as the claim says where the definition names no direction. A \
                                row that applies only between two arms that both preempt is \"not applicable\" to \
                                any other pair, and is not part of its verdict or its Holm family. The claim's \
                                verdict is the one against `default`; the other baselines' verdicts are shown \
                                beside it, and the controls `agmarl-untrained` and `agmarl-analytic` (for a judged \
                                ablation, its untrained twin), where the folders hold them, are judged by the same \
                                rule, each in its own families.";

/// What one row says against one baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// significantly better
    Better,
    /// significantly worse
    Worse,
    /// no significant difference
    NoDifference,
    /// the row could not be tested
    Undefined,
    /// the row does not apply to this pair of arms (it needs both to preempt)
    NotApplicable,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Better => "better",
            Outcome::Worse => "worse",
            Outcome::NoDifference => "no significant difference",
            Outcome::Undefined => "undefined",
            Outcome::NotApplicable => "not applicable",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Supported,
    NotShown,
    Contradicted,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Supported => "supported",
            Verdict::NotShown => "not shown",
            Verdict::Contradicted => "contradicted",
        }
    }
}

/// Whether the claim's premise holds on the scenarios its regime rows apply to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Regime {
    /// every regime row holds (or the claim has none)
    Reached,
    /// a regime row fails
    NotReached,
    /// a regime row cannot be computed
    Undefined,
}

/// [`VERDICT_RULE`] over the regime and the rows' roles and outcomes. Rows
/// not applicable to the pair are left out; no row left: not shown.
pub fn verdict(regime: Regime, rows: &[(Role, Outcome)]) -> Verdict {
    let rows: Vec<(Role, Outcome)> = rows
        .iter()
        .copied()
        .filter(|(_, o)| *o != Outcome::NotApplicable)
        .collect();
    let any = |role: Option<Role>, outcome: Outcome| {
        rows.iter()
            .any(|&(r, o)| o == outcome && role.is_none_or(|role| role == r))
    };
    if regime != Regime::Reached || rows.is_empty() || any(None, Outcome::Undefined) {
        return Verdict::NotShown;
    }
    let mut primaries = rows.iter().filter(|(r, _)| *r == Role::Primary).peekable();
    let all_primary_better = primaries.peek().is_some() && primaries.all(|(_, o)| *o == Outcome::Better);
    if all_primary_better && !any(None, Outcome::Worse) {
        Verdict::Supported
    } else if any(Some(Role::Primary), Outcome::Worse) && !any(None, Outcome::Better) {
        Verdict::Contradicted
    } else {
        Verdict::NotShown
    }
}

#[cfg(test)]
mod tests {
    use super::Outcome::*;
    use super::Role::*;
    use super::*;

    fn plain(rows: &[(Role, Outcome)]) -> Verdict {
        verdict(Regime::Reached, rows)
    }

    #[test]
    fn the_rule_case_by_case() {
        assert_eq!(
            plain(&[(Primary, Better), (Primary, Better), (Guard, NoDifference)]),
            Verdict::Supported
        );
        assert_eq!(plain(&[(Primary, Better), (Guard, Better)]), Verdict::Supported);
        // one primary row not significant
        assert_eq!(plain(&[(Primary, Better), (Primary, NoDifference)]), Verdict::NotShown);
        // better on every primary row, but bought with a worse guard
        assert_eq!(plain(&[(Primary, Better), (Guard, Worse)]), Verdict::NotShown);
        // a worse guard alone contradicts nothing
        assert_eq!(plain(&[(Primary, NoDifference), (Guard, Worse)]), Verdict::NotShown);
        assert_eq!(
            plain(&[(Primary, Worse), (Primary, NoDifference)]),
            Verdict::Contradicted
        );
        assert_eq!(plain(&[(Primary, Worse), (Guard, Worse)]), Verdict::Contradicted);
        // worse on one primary row, better on another: mixed
        assert_eq!(plain(&[(Primary, Worse), (Primary, Better)]), Verdict::NotShown);
        // better on a guard row: not contradicted either
        assert_eq!(plain(&[(Primary, Worse), (Guard, Better)]), Verdict::NotShown);
        // an undefined row (missing scenario, arm, data or arm facts) leaves it not shown, whatever else
        assert_eq!(plain(&[(Primary, Better), (Primary, Undefined)]), Verdict::NotShown);
        assert_eq!(plain(&[(Primary, Better), (Guard, Undefined)]), Verdict::NotShown);
        assert_eq!(plain(&[(Primary, Worse), (Primary, Undefined)]), Verdict::NotShown);
        assert_eq!(plain(&[]), Verdict::NotShown);
        assert_eq!(plain(&[(Guard, Better)]), Verdict::NotShown);
    }

    #[test]
    fn rows_not_applicable_to_the_pair_are_left_out() {
        // a worse critical-pod row between arms that do not both preempt counts for nothing
        assert_eq!(
            plain(&[(Primary, Better), (Primary, NotApplicable), (Guard, NoDifference)]),
            Verdict::Supported
        );
        assert_eq!(plain(&[(Primary, NotApplicable), (Guard, Worse)]), Verdict::NotShown);
        // no applicable row: not shown
        assert_eq!(plain(&[(Primary, NotApplicable)]), Verdict::NotShown);
    }

    #[test]
    fn a_regime_not_reached_or_undefined_is_not_shown_whatever_the_rows() {
        let rows = [(Primary, Better), (Guard, NoDifference)];
        assert_eq!(verdict(Regime::Reached, &rows), Verdict::Supported);
        assert_eq!(verdict(Regime::NotReached, &rows), Verdict::NotShown);
        assert_eq!(verdict(Regime::Undefined, &rows), Verdict::NotShown);
        assert_eq!(verdict(Regime::NotReached, &[(Primary, Worse)]), Verdict::NotShown);
    }
}
